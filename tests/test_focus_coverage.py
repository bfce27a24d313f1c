"""Focusing orders passages by the share of the question's terms they hold together
(research/evidence/term_scores.py, focus.COVERAGE_WEIGHT)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research.evidence.term_scores import coverage, lexical_scores

QUESTION = "How fast did the rpoS deletion strain grow in glucose minimal medium, and how long was its lag phase?"
GROWTH = "In glucose minimal medium the rpoS deletion strain doubled every 86 minutes."
LAG = "Its lag phase lasted 2.9 hours, against 1.2 hours for the wild type."


class _Unit:
    def __init__(self, text: str) -> None:
        self.text, self.heading, self.lexical, self.hits = text, "", 0.0, frozenset()


def test_a_passage_holding_both_parts_covers_more_of_the_question_than_one_holding_either():
    units = [_Unit(GROWTH), _Unit(LAG), _Unit("The plates were kept at 37 degrees.")]
    weights = lexical_scores(QUESTION, units)
    both, growth, lag, none = (coverage(u, weights) for u in (units[:2], units[:1], units[1:2], units[2:]))
    assert both > max(growth, lag) and none == 0.0
    assert coverage(units, None) == 0.0 and coverage([], weights) == 0.0


def _passage(number: int, text: str, score: float) -> Evidence:
    return Evidence(number, f"paper-{number}", 3, "3", "Results", text, score, char_start=0, char_end=len(text))


@pytest.mark.parametrize("weight", [1.0, 0.0])
def test_the_passage_that_answers_every_part_leads_the_first_turn(fact_library, monkeypatch, weight):
    """The first-ranked passage says part of the question back in every sentence and answers
    nothing; the second, ranked just below it, states the growth and the lag. By its best sentence
    and its rank the first leads and fills the first turn; by the terms its sentences hold together the second leads."""
    from app.core.research.evidence import focus
    from app.core.research.evidence.first_turn_size import split_first

    monkeypatch.setattr(focus, "COVERAGE_WEIGHT", weight)
    framing = " ".join([
        "Growth of the deletion strain in glucose minimal medium was followed in three cultures.",
        *[f"Culture {k} of the deletion strain was grown in glucose minimal medium on day {k}." for k in range(14)]])
    answering = " ".join(["Growth curves were read every ten minutes.", GROWTH, LAG])
    others = ["Sporulation of Bacillus subtilis was scored by heat resistance after 24 hours.",
              "The sigma factor binds the core polymerase in stationary phase."]
    evidence = [_passage(1, framing, 0.62), _passage(2, answering, 0.61), *(_passage(3 + k, t, 0.45 - 0.01 * k)
                                                                           for k, t in enumerate(others))]
    embedder = fact_library.embedder()
    focused = focus.focus_evidence(QUESTION, embedder.embed_one(QUESTION), evidence, embedder,
                                   token_budget=800, first_tokens=300)
    first, _ = split_first(focused, 300, lambda e: max(1, len(e.focus_text) // 4) + focus.HEADER_TOKENS)
    read = "\n".join(e.focus_text for e in first)
    assert (GROWTH in read and LAG in read) is (weight > 0)
