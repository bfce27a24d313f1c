"""A question's further parts: split by grammar, and named beneath the answer when nothing in it speaks to them."""

from __future__ import annotations

import json

import pytest

from app.core.events import Task
from app.core.records import Claim, ResearchResult
from app.core.research.text.question_reading import missing_parts_note, open_parts, question_ask, question_parts
from tests.support.answers import answer_with, assert_cited_in_place
from tests.support.chat import ScriptedChat


@pytest.mark.parametrize("question, parts", [
    ("In the dropout paper's MNIST experiments, what retention probabilities were used and how far did the error fall with ReLUs?",
     ["In the dropout paper's MNIST experiments, what retention probabilities were used", "how far did the error fall with ReLUs"]),
    ("What does Rcpp.package.skeleton put into DESCRIPTION, and do I still need src/Makevars to link against Rcpp?",
     ["What does Rcpp.package.skeleton put into DESCRIPTION", "do I still need src/Makevars to link against Rcpp"]),
    ("Which temperatures were used for the heat-stressed plants? When was the treatment started?",
     ["Which temperatures were used for the heat-stressed plants", "When was the treatment started"]),
    # a list inside one clause, and a question word too short to ask anything alone, stay one part
    ("In lme4 model formulas, what do (1 | g1/g2), (1 | g1) + (1 | g2) and (x || g) mean?",
     ["In lme4 model formulas, what do (1 | g1/g2), (1 | g1) + (1 | g2) and (x || g) mean"]),
    ("Where and when did Rcpp originate, and what happened to the classic API?",
     ["Where and when did Rcpp originate", "what happened to the classic API"]),
    # "and" before a verb that is not a question of its own does not split
    ("How were mice housed and fed during the 12-week diet?", ["How were mice housed and fed during the 12-week diet"]),
    ("Which gene was knocked out and is expressed in the liver?", ["Which gene was knocked out and is expressed in the liver"]),
])
def test_a_question_is_split_where_a_new_question_clause_begins(question, parts):
    assert question_parts(question) == parts


@pytest.mark.parametrize("question, ask", [
    ("In the situational analysis of care quality at the medical department of Kamuzu Central Hospital in Malawi, "
     "how many outpatients answered the exit interviews?", "how many outpatients answered the exit interviews?"),
    ("According to the paper on territorial rural development in Latin America, how did the number of poor people change?",
     "how did the number of poor people change?"),
    ("When the Slim Blade tuner was mounted on the dressed 3.9 GHz cavity, how was the tuner safety gap set?",
     "how was the tuner safety gap set?"),
    # no frame: the question as a whole asks; a comma inside the ask does not open one
    ("What share of outpatients came without being referred, and what did the researchers read into that?", ""),
    ("Which estimator do I get by default?", ""),
    ("In which year was the survey run?", ""),
])
def test_the_ask_is_the_question_without_the_frame_it_opens_with(question, ask):
    assert question_ask(question) == ask


def test_a_part_is_open_until_a_claim_speaks_to_it():
    question = "What LC50 did the n-hexane fraction give, and how does it compare with the positive control?"
    answered = [Claim("The n-hexane fraction gave an LC50 of 2.17 µg/ml, higher than the positive control vincristine (0.28 µg/ml).")]
    assert open_parts(question, answered) == []
    first_only = [Claim("The n-hexane fraction gave an LC50 of 2.17 µg/ml.")]
    assert open_parts(question, first_only) == ["how does it compare with the positive control"]
    assert open_parts("What LC50 did the n-hexane fraction give?", first_only) == []


def test_the_note_names_the_open_parts_in_number():
    question = "What LC50 did the n-hexane fraction give, and how does it compare with the positive control?"
    first = [Claim("The n-hexane fraction gave an LC50 of 2.17 µg/ml.")]
    note = missing_parts_note(open_parts(question, first))
    assert "this part" in note and "“how does it compare with the positive control”" in note and "ask it on its own" in note
    two = missing_parts_note(open_parts(f"{question}, and when was the assay run?", first))
    assert "these parts" in two and "“when was the assay run”" in two and "ask them on their own" in two


def test_the_answer_view_names_an_open_part_above_the_answer(qtbot, qapp):
    from app.core.records import ResearchResult
    from app.ui.research.answer_view import AnswerView

    view = AnswerView()
    qtbot.addWidget(view)
    view.show_result(ResearchResult(query="q", answer="The LC50 was 2.17 µg/ml.", open_parts=["when was the assay run"]))
    text = view.browser.toPlainText()
    assert text.index("This answer may not cover “when was the assay run”") < text.index("The LC50 was 2.17")
    view.show_result(ResearchResult(query="q", answer="The LC50 was 2.17 µg/ml."))
    assert "may not cover" not in view.browser.toPlainText()


LAKE = "how deep was the lake beneath the glacier"


def test_an_answer_names_the_part_of_the_question_the_papers_leave_open(fact_library):
    """Real library, focusing, key passages and check; a scripted writer. No paper says how deep
    any lake is: the answer states the retreat and says which part is missing."""
    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    result, _ = answer_with(fact_library, ScriptedChat([first]), f"How fast did the glacier front retreat, and {LAKE}?",
                            {"first_claim_tokens": 1, "key_sentences": 2})
    assert result.claims and "38 metres" in result.claims[0].text
    assert result.open_parts == [LAKE]
    assert any(LAKE in m and "may be left unanswered" in m for m in result.messages), result.messages
    assert ResearchResult.from_dict(result.to_dict()).open_parts == [LAKE]  # kept with the answer (history, --json)

    both = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]},
                                  {"text": "The retreat was measured by drone photogrammetry.", "sources": [1]}]})
    result, _ = answer_with(fact_library, ScriptedChat([both]), "How fast did the glacier front retreat, and how was it measured?",
                            {"first_claim_tokens": 1, "key_sentences": 2})
    assert not result.open_parts and not any("may be left unanswered" in m for m in result.messages), result.messages


@pytest.mark.slow
def test_the_missing_part_with_the_real_model(fact_library):
    result = fact_library.funnel(Task(sink=lambda e: None), overrides={"first_claim_tokens": 1, "key_sentences": 2}).run(
        f"When do kestrels depart from alpine valleys in autumn, and {LAKE}?")
    assert_cited_in_place(result)
    named = [m for m in result.messages if "may be left unanswered" in m]
    assert result.open_parts == open_parts(result.query, result.claims) and bool(named) == bool(result.open_parts)
    assert all(LAKE in m for m in named)
