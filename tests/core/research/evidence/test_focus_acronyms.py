"""Focusing reads a paper's acronyms as the words they stand for (acronyms.definitions)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research.evidence import focus
from app.core.text.acronyms import definitions

ABSTRACT = ("Methods: Surgeon-scrub (SS) and surgeon-circulator (SC) teaming scores were calculated "
            "for every operation between 2017 and 2021.")
FILLER = [f"Teaming in operating room {k} was reviewed at the weekly meeting of the evening staff."
          for k in range(10)]
RESULT = "The median SS was 0.08 (IQR 0.03-0.19) and the median SC 0.06 (IQR 0.03-0.13)."


@pytest.mark.parametrize("read_acronyms, figure_bonus", [(True, False), (False, False), (False, True)])
def test_a_result_stated_in_acronyms_ranks_first_for_a_question_asked_in_words(fact_library, monkeypatch, read_acronyms,
                                                                                 figure_bonus):
    """The question names the scores in words; the result sentence only in the paper's acronyms.
    Read through the definitions, it is its passage's best sentence, the one a window grows around
    and a quote is taken from; without them it shares no term with the question and ranks below
    sentences on teaming in the operating rooms. The question asks for an amount ("how high"), and
    the sentence states figures: that alone lifts it too (`ASKED_FIGURE_BONUS`)."""
    if not read_acronyms:
        monkeypatch.setattr(focus, "definitions", lambda text: {})
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
    assert (best.text == RESULT) is (read_acronyms or figure_bonus), [(s.text[:30], s.score) for s in on_results]


def test_the_check_reads_a_quote_with_the_papers_acronyms_spelled_out():
    """A manuscript's sentence writes "surgeon-scrub" where the paper's results say "SS": the
    judge's quote spells out what the paper defined elsewhere, once, and never twice."""
    from app.core.check.locate import paper_from_rows
    from app.core.check.judge import quote_text
    from app.core.research.text.abbreviations import spell_out

    defined = definitions(ABSTRACT + " Margins differ by service lines (SLs).")
    assert spell_out(RESULT, defined) == RESULT.replace("median SS", "median SS (Surgeon-scrub)").replace(
        "median SC", "median SC (surgeon-circulator)")
    assert spell_out("Higher margin SLs were associated", defined) == "Higher margin SLs (service lines) were associated"
    assert spell_out(ABSTRACT, defined) == ABSTRACT  # defined here already
    assert spell_out("The SSRI trial", defined) == "The SSRI trial"  # a word that only begins with the letters

    rows = [{"page": 1, "char_start": 0, "char_end": len(t), "text": t, "section": "", "page_label": "1", "vector": [1.0, 0.0]}
            for t in (ABSTRACT, RESULT)]
    paper = paper_from_rows("p1", rows)
    assert paper.acronyms == {"SS": "Surgeon-scrub", "SC": "surgeon-circulator"}
    result = next(w for w in paper.windows if w.text == RESULT)
    assert "SS (Surgeon-scrub)" in quote_text(result, paper.acronyms)
    assert quote_text(result) == RESULT
