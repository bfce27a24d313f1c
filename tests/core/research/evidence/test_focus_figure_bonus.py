"""Focusing: where the question asks for an amount, a sentence that states one scores more (focus.ASKED_FIGURE_BONUS)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research.evidence import focus

ABSTRACT = ("Methods: Surgeon-scrub (SS) and surgeon-circulator (SC) teaming scores were calculated "
            "for every operation between 2017 and 2021.")
FILLER = [f"Teaming in operating room {k} was reviewed at the weekly meeting of the evening staff."
          for k in range(10)]
RESULT = "The median SS was 0.08 (IQR 0.03-0.19) and the median SC 0.06 (IQR 0.03-0.13)."


@pytest.mark.parametrize("figure_bonus", [True, False])
def test_a_result_stated_in_acronyms_ranks_first_where_an_amount_is_asked(fact_library, monkeypatch, figure_bonus):
    """The question names the scores in words; the result sentence only in the paper's acronyms, so
    it shares no term with the question and ranks below sentences on teaming in the operating rooms.
    The question asks for an amount ("how high") and the sentence states figures: that lifts it to
    its passage's best sentence, the one a window grows around and a quote is taken from."""
    if not figure_bonus:
        monkeypatch.setattr(focus, "ASKED_FIGURE_BONUS", 0.0)
    abstract = " ".join([ABSTRACT, *FILLER[:4]])
    results = " ".join([*FILLER[4:8], RESULT, *FILLER[8:10]])
    evidence = [
        Evidence(1, "teams", 1, "1", "Abstract", abstract, 0.8, char_start=0, char_end=len(abstract)),
        Evidence(2, "teams", 5, "5", "Results", results, 0.7, char_start=0, char_end=len(results)),
    ]
    question = "How high were the surgeon-scrub and surgeon-circulator teaming scores?"
    qvec = fact_library.embedder().embed_one(question)
    focused = focus.focus_evidence(question, qvec, evidence, fact_library.embedder(), token_budget=2000)
    on_results = next(e for e in focused if e.page == 5).sentences
    assert len(on_results) == 7  # the whole passage fits: every sentence is scored and kept
    best = max(on_results, key=lambda s: s.score)
    assert (best.text == RESULT) is figure_bonus, [(s.text[:30], s.score) for s in on_results]
