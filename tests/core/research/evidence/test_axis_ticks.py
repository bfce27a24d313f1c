"""A figure's axis ticks are not evidence (research/evidence/not_evidence.py)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research.evidence.not_evidence import is_axis_ticks
from app.core.research.evidence.focus import split_sentences

TICKS = [
    "0.00 0.25 0.50 0.75 1.00",
    "20 40 60 80 100 k: # of retrieved passages",
    "16 18 20 22 24 26 28 H magnitude",
    "−0.5 0.0 0.5 1.0 1.5",
    "Feb 01 Feb 03 Feb 05 Feb 07 Feb 09",
    "0 200000 400000 600000 800000 1000000 Number of weight updates",
]
NOT_TICKS = [
    "This article is organized into four sections (Sections 2, 3, 4, and 5), each a module of lme4.",
    "The median surgeon-scrub score was 0.083 (IQR 0.03-0.19) and the surgeon-circulator score 0.059.",
    "h(µ) = β0 + β1 · x1 + β2 · x2 + β3 · x3, (25)",
    "```\n> aggregate(z, identity, tail, 1)\n1 2 3 4 5\n```",
    "The doses were 10 20 30 40 mg, given on days one to four of the first week in both arms of the trial.",
    "Year 1980 1990 1997 1999\nPoor 135.9 200.2 203.8 211.4\nRural 73.0 78.5 78.2 77.2",  # a table
]


@pytest.mark.parametrize("unit", TICKS)
def test_axis_ticks(unit):
    assert is_axis_ticks(unit)


@pytest.mark.parametrize("unit", NOT_TICKS)
def test_text_tables_and_code_with_even_numbers_are_not_ticks(unit):
    assert not is_axis_ticks(unit)


def test_focusing_never_offers_a_plot_s_ticks():
    text = ("Overall, median teaming scores were low: 0.083 for surgeon-scrub pairs.\n\n"
            "0.00 0.25 0.50 0.75 1.00\n\n0.0 0.2 0.4 0.6 Surgeon Circulator Score\n\n"
            "Scores fell after March 2020 in every specialty.")
    kept = [c.text for c in split_sentences(Evidence(1, "p", 8, "8", "", text, 0.5))]
    assert kept == ["Overall, median teaming scores were low: 0.083 for surgeon-scrub pairs.",
                    "Scores fell after March 2020 in every specialty."]
