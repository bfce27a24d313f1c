"""LLM summaries (map-reduce over pages, real tiny GGUF) and notes, indexed for scoping."""

from __future__ import annotations

import pytest

from app.core.library.store import SUMMARY_CHUNKS
from app.core.ingest.summarize import split_to_budget, summarize_paper
from app.core.ingest.summary_index import index_summary_side


def test_split_to_budget_never_truncates():
    pages = [(1, "a " * 50), (2, "b " * 50), (3, "c " * 400)]
    parts = split_to_budget(pages, budget=120, count_tokens=lambda s: len(s.split()))
    joined = "".join(p.text for p in parts).replace(" ", "").replace("\n", "")
    assert joined == ("a" * 50 + "b" * 50 + "c" * 400)
    assert all(len(p.text.split()) <= 120 for p in parts)
    assert [p.first_page for p in parts][:2] == [1, 3]


def rows(desk, paper_id):
    table = desk.library.chunks_table(SUMMARY_CHUNKS)
    return table.search().where(f"paper_id = '{paper_id}'").limit(1000).to_list()


@pytest.mark.slow
def test_summarize_and_notes_are_indexed(fact_library):
    desk = fact_library
    paper = next(p for p in desk.library.list_papers() if p.title.startswith("Kestrel"))
    before = {r["source_type"] for r in rows(desk, paper.id)}
    assert "abstract" in before  # scoping works before any summary
    steps: list[str] = []
    summary = summarize_paper(desk.library, desk.chat(), desk.embedder(), paper, progress=lambda f, m: steps.append(m))
    assert summary.startswith(f"# {paper.title}") and "**Authors:**" in summary
    assert desk.library.summary_path(paper.id).read_text() == summary
    assert desk.library.get_paper(paper.id).summarized
    assert any("reading pages" in s for s in steps)
    desk.library.notes_path(paper.id).write_text("Compare departure dates with the 1998 Swiss survey.")
    index_summary_side(desk.library, desk.embedder(), desk.library.get_paper(paper.id))
    types = [r["source_type"] for r in rows(desk, paper.id)]
    assert {"abstract", "summary", "notes"} <= set(types)
    notes_text = " ".join(r["text"] for r in rows(desk, paper.id) if r["source_type"] == "notes")
    assert "Swiss survey" in notes_text
