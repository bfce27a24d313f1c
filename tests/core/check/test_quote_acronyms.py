"""The check reads a quote with the paper's acronyms spelled out (acronyms.definitions, abbreviations.spell_out)."""

from __future__ import annotations

from app.core.text.acronyms import definitions

ABSTRACT = ("Methods: Surgeon-scrub (SS) and surgeon-circulator (SC) teaming scores were calculated "
            "for every operation between 2017 and 2021.")
RESULT = "The median SS was 0.08 (IQR 0.03-0.19) and the median SC 0.06 (IQR 0.03-0.13)."


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
