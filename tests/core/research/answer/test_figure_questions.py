"""A question that asks for an amount quotes the sentence that reports it, not the one that frames it.

"How familiar were the teams, as measured by the teaming scores?" was answered with the methods
sentence that defines the scores and an aside on how they may understate familiarity, while
"Median SS and SC scores were 0.08 … and 0.06 …" sat in the evidence, rated lower by the model.
"""

from __future__ import annotations

import pytest

from app.core.pdf import extract as px
from app.core.units import text_units
from app.core.records import Claim, Evidence, Sentence
from app.core.research.answer.key_sentences import key_sentences, unquoted
from app.core.research.text.question_reading import ASKS_FIGURE, Asks, asks, states_figure

from tests.support.pdf_factory import make_paper


@pytest.mark.parametrize("question", [
    "How often do insertion-related complications occur with retrievable filters?",
    "How many good seed sites did the TrustRank authors end up with?",
    "What Higgs boson mass did the combined analysis obtain?",
    "What bleeding risk did the review calculate for low molecular weight heparins?",
    "How large is the Mountain Partnership today?",
    "How familiar were operating-room teams, as measured by the teaming scores?",
    "What was the 30-day mortality after the procedure?",
    "How far did the error fall with dropout and max-norm regularization?",
])
def test_questions_that_ask_for_an_amount(question):
    assert ASKS_FIGURE.search(question)
    assert asks(question).figure


@pytest.mark.parametrize("question", [
    "How does model-based recursive partitioning relate to conditional inference trees?",
    "What kind of constraints are allowed on the covariance parameters?",
    "Why is the exact Wilcoxon test hard to compute for software?",
    "Which genes did the screen identify as essential for replication?",
])
def test_questions_that_ask_for_no_amount(question):
    assert not asks(question).figure


def test_a_reported_figure_is_a_share_a_decimal_or_a_count_not_a_year_or_a_citation():
    assert states_figure("The failed retrieval rate is calculated to be 2.8%.")
    assert states_figure("Median SS and SC scores were 0.08 and 0.06, respectively.")
    assert states_figure("A total of 37,364 operations involving 150 attending surgeons were analyzed.")
    assert not states_figure("Scores were calculated between 2017 and 2021 at an academic medical center [12, 14].")
    assert not states_figure("Filters migrate, cause occlusion and penetrate the vessel wall [72-75,77].")


PAGE = """# Results

Surgeon-scrub and surgeon-circulator teaming scores were defined as the pair's share of the surgeon's cases in the preceding six months.

Scores were analyzed by specialty, case urgency, robotic approach and surgeon academic rank.

Median surgeon-scrub and surgeon-circulator scores were 0.08 and 0.06, respectively.

Teaming scores may understate familiarity where a nurse worked in both roles."""


def test_for_an_amount_the_sentence_that_reports_it_is_quoted_first(tmp_path):
    """A real PDF page read as the import reads it; the methods sentence scores best on the
    question's words (as focusing scored it), the result a little lower."""
    pdf = make_paper(tmp_path / "teams.pdf", title="Operating Room Team Familiarity", pages=[PAGE])
    md = next(px.iter_pages(px.open_pdf(pdf))).markdown
    scores = {"Surgeon-scrub": 0.66, "Scores were": 0.58, "Median": 0.51, "Teaming scores": 0.6}
    sentences = [Sentence(md[s:e], s, e, score) for s, e, kind in text_units(md) if kind == "text"
                 for key, score in scores.items() if md[s:e].startswith(key)]  # the author line is left out
    assert len(sentences) == len(scores)
    evidence = [Evidence(1, "team-familiarity", 3, "3", "", md, 0.5, sentences=sentences)]
    claims = [Claim("Team familiarity was measured at an academic medical center.", [1])]
    question = "How familiar were operating-room teams, as measured by the surgeon-scrub and surgeon-circulator teaming scores?"

    quotes = key_sentences(claims, evidence, 1, asked=asks(question))
    assert [unquoted(q.text) for q in quotes] == ["Median surgeon-scrub and surgeon-circulator scores were 0.08 and 0.06, respectively"]
    assert px.locate_text(px.open_pdf(pdf)[0], unquoted(quotes[0].text))  # the viewer finds it to highlight
    # A question that asks for no amount keeps the focus order: the definition first.
    assert unquoted(key_sentences(claims, evidence, 1, asked=Asks())[0].text).startswith("Surgeon-scrub and surgeon-circulator")
