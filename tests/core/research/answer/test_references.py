"""The answer's references (research/answer/references.py): ordered and numbered on its citations."""

from __future__ import annotations

from app.core.records import Citation
from app.core.research.answer.references import build_references
from tests.support.papers import paper


def test_references_sorted_arxiv_first_and_numbered_on_citations():
    papers = {p.id: p for p in [paper(pid, authors=["Ann Smith"]) for pid in ("zoo-2005", "2101.00001v2", "abc-2010", "unused")]}
    cits = [Citation("", "zoo-2005", 1, "verified"), Citation("", "abc-2010", 2, "verified"),
            Citation("", "2101.00001v2", 3, "verified"), Citation("", "zoo-2005", 4, "verified"),
            Citation("", "not-a-paper", 1, "not-in-evidence")]
    refs = build_references(cits, papers)
    assert [r.paper_id for r in refs] == ["2101.00001v2", "abc-2010", "zoo-2005"]
    assert [c.reference_number for c in cits] == [3, 2, 1, 3, None]
