"""The question's words no paper contains, and the caution above an answer the library may not hold."""

from __future__ import annotations

import json

from app.core.records import ResearchResult
from app.core.research.answer.unmentioned import caution, question_words


def test_question_words_leave_out_what_every_question_says():
    words = question_words("Why doesn't lmer report p-values for my own model, and what does HC4 change in 2019?")
    assert words == ["lmer", "report", "values", "model", "HC4", "change"]
    # A word with an accent stays whole (the index folds it); a hyphen splits as the index does.
    assert question_words("Which métabolites rose in the DVT-prophylaxis review?") == ["métabolites", "rose", "DVT", "prophylaxis", "review"]


def test_a_caution_only_where_a_word_is_missing_and_no_passage_comes_close():
    assert "“zoo”" in caution(["zoo"], best_cosine=0.40, evidence_cutoff=0.30)
    assert caution(["superfluous"], best_cosine=0.71, evidence_cutoff=0.30) == ""  # the paper says it otherwise
    assert caution([], best_cosine=0.31, evidence_cutoff=0.30) == ""


def test_the_real_index_tells_which_words_no_paper_contains(fact_library):
    """Real LanceDB full-text index over two real PDFs (kestrels, a glacier), real embedder."""
    funnel = fact_library.funnel()
    # Answerable: the kestrel paper holds the answer; only the stray word is named, and no caution.
    near = funnel.run("How many quokkas did the kestrel loggers record in September?", evidence_only=True)
    assert near.unmentioned == ["quokkas"] and near.caution == ""
    # The library's nearest paper is on photogrammetry, not quokkas: a caution names the words.
    far = funnel.run("How accurate is photogrammetry of quokka burrows?", evidence_only=True)
    assert "quokka" in far.unmentioned and "burrows" in far.unmentioned and "photogrammetry" not in far.unmentioned
    assert far.caution.startswith("No paper in the library mentions") and "“quokka”" in far.caution
    # A word the index stems ("retreated" in the paper) is found.
    assert funnel.unmentioned_words("When did the glacier front retreat?") == []


def test_the_caution_leads_the_markdown_and_survives_the_saved_answer():
    from app.core.research.funnel import answer_with_references

    result = ResearchResult(query="q", answer="An answer.", unmentioned=["zoo"], caution="No paper in the library mentions “zoo”…")
    assert answer_with_references(result).startswith("> No paper in the library mentions “zoo”")
    again = ResearchResult.from_dict(result.to_dict())
    assert again.caution == result.caution and again.unmentioned == ["zoo"]
    assert answer_with_references(ResearchResult(query="q", answer="An answer.")).startswith("An answer.")


def test_the_answer_view_shows_the_caution_above_the_answer(qtbot, qapp):
    from app.ui.research.answer_view import AnswerView

    view = AnswerView()
    qtbot.addWidget(view)
    view.show_result(ResearchResult(query="q", answer="An answer.", caution="No paper in the library mentions “zoo”."))
    text = view.browser.toPlainText()
    assert text.index("No paper in the library mentions “zoo”.") < text.index("An answer.")
    assert "may not hold the answer" in view.status.text()
    view.show_result(ResearchResult(query="q", answer="An answer."))
    assert "No paper in the library" not in view.browser.toPlainText() and "may not" not in view.status.text()


def test_under_the_caution_the_models_claims_are_partial_at_most(fact_library):
    """Real library, focusing, quotes and check rules; a scripted model whose judge passes its
    claim. The passages are not about the question (no paper mentions quokkas), so the model's
    citation is marked partial with that reason; the quotes stay quoted, and the notes say why."""
    from tests.support.answers import answer_with, judge_and_restate
    from tests.support.chat import ScriptedChat

    claim = "Quokka burrows are measured at centimetre accuracy."
    first = json.dumps({"claims": [{"text": claim, "sources": [1]}]})
    options = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    result, _ = answer_with(fact_library, ScriptedChat([first] + [judge_and_restate(None, believed=claim)] * 8),
                            "How accurate is photogrammetry of quokka burrows?", options)
    assert result.caution and result.claims[0].text == claim
    own = [c for c in result.citations if c.claim == 0]
    assert own and all(c.support == "partial" and "quokka" in c.note for c in own), [(c.support, c.note) for c in own]
    quoted = [c for c in result.citations if result.claims[c.claim].quoted]
    assert quoted and all(c.support == "supported" for c in quoted)
    assert any("not about the question" in m for m in result.messages)

    # The same claim where the library holds the answer's subject: supported, no caution.
    kept, _ = answer_with(fact_library, ScriptedChat([json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.",
                                                                              "sources": [1]}]})]
                                                     + [judge_and_restate(None, believed="The glacier front retreated 38 metres per year.")] * 8),
                          "How fast did the glacier front retreat?", options)
    assert not kept.caution and kept.claims[0].support == "supported"
