"""BibTeX keys and output (app/core/bibtex.py)."""

from __future__ import annotations

from app.core.bibtex import bibtex, citation_keys
from tests.support.papers import paper


def test_bibtex_keys_stable_and_unique_and_parseable():
    import bibtexparser

    papers = [
        paper("a", "The Econometric Sandwich", authors=["Achim Zeileis"], published="2004-05-01"),
        paper("b", "Econometric computing with HC and HAC", authors=["Zeileis, Achim"], published="2004"),
        paper("c", "Fitting Linear Mixed-Effects Models Using lme4 & {braces}", authors=["Douglas Bates", "Martin Mächler"],
              published="2015"),
    ]
    keys = citation_keys(papers)
    assert keys == {"a": "zeileis2004econometrica", "b": "zeileis2004econometricb", "c": "bates2015fitting"}
    assert citation_keys(list(reversed(papers))) == keys
    text = bibtex(papers, keys)
    parsed = bibtexparser.loads(text) if hasattr(bibtexparser, "loads") else bibtexparser.parse_string(text)
    entries = parsed.entries
    assert len(entries) == 3
