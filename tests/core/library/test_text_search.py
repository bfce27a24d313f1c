"""Searching the papers' text: real PDFs (PyMuPDF), a real import (real MiniLM, real LanceDB
with its full-text index), the Desk's `search_text` and `research-desk search`."""

from __future__ import annotations

import json

import numpy as np

from app import cli
from app.core.library.store import Library
from app.core.library.schema import CONTENT_CHUNKS
from app.core.records import Chunk, Paper
from app.core.library.text_search import search_text


def _ids(desk) -> dict[str, str]:
    """Paper id by source file name (kestrel.pdf → its id)."""
    return {p.source_file.rsplit("/", 1)[-1]: p.id for p in desk.papers()}


def test_a_phrase_is_found_on_its_page_with_a_snippet(fact_library):
    ids = _ids(fact_library)
    hits = fact_library.search_text("median departure date")
    assert [(h.paper_id, h.page, h.exact) for h in hits] == [(ids["kestrel.pdf"], 3, True)]
    hit = hits[0]
    assert hit.matched.lower() == "median departure date"
    assert "14 September" in hit.snippet and "\n" not in hit.snippet
    # Typed as printed, with its punctuation and case.
    hits = fact_library.search_text("38 Metres per year")
    assert [(h.paper_id, h.page, h.matched) for h in hits] == [(ids["glacier.pdf"], 3, "38 metres per year")]


def test_words_apart_come_after_the_phrase_and_are_marked(fact_library):
    ids = _ids(fact_library)
    hits = fact_library.search_text("loggers position")  # both words on page 2, not as a phrase
    assert hits and all(not h.exact for h in hits)
    assert (hits[0].paper_id, hits[0].page) == (ids["kestrel.pdf"], 2)
    assert hits[0].matched.lower().startswith("logger")
    mixed = fact_library.search_text("glacier retreat")
    assert mixed[0].exact and [h.exact for h in mixed] == sorted((h.exact for h in mixed), reverse=True)


def test_a_search_is_limited_to_the_papers_given(fact_library):
    ids = _ids(fact_library)
    everywhere = {h.paper_id for h in fact_library.search_text("alpine")}
    assert ids["kestrel.pdf"] in everywhere
    assert fact_library.search_text("alpine", papers=[ids["glacier.pdf"]]) == []
    assert fact_library.search_text("") == [] and fact_library.search_text("!!") == []
    assert fact_library.search_text("xylophone") == []


def test_stop_words_the_index_drops_are_found_by_reading_the_text(fact_library):
    """The BM25 index drops "the" and "of"; the search reads the chunks instead."""
    hits = fact_library.search_text("the median")
    assert hits and hits[0].exact and hits[0].matched.lower() == "the median"


def test_a_library_without_a_full_text_index_is_still_searched(tmp_path):
    """Chunks written but `finish_writes` never run (no FTS index): the text is scanned."""
    lib = Library(tmp_path / "lib")
    lib.upsert_paper(Paper(id="p1", title="T", authors=[], published="", abstract="", doi="", arxiv_id="", source_file="t.pdf",
                           page_count=2, page_labels=[], content_hash="h", imported_at="", status="indexed"))
    chunks = [Chunk("p1", 0, "Nothing here.", page=1), Chunk("p1", 1, "The ice shelf calved in March.", page=2, char_start=40)]
    lib.append_chunks(CONTENT_CHUNKS, chunks, np.ones((2, 4), dtype=np.float32))
    assert not any("text" in i.columns for i in lib.chunks_table(CONTENT_CHUNKS).list_indices())
    hits = search_text(lib, "ice shelf")
    assert [(h.page, h.matched, h.snippet) for h in hits] == [(2, "ice shelf", "The ice shelf calved in March.")]


def test_cli_search_prints_pages_and_json(fact_library, capsys):
    ids = _ids(fact_library)
    assert cli.main(["--library", str(fact_library.location), "search", "median departure date"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{ids['kestrel.pdf']}  p. 3\n") and "14 September" in out
    assert cli.main(["--library", str(fact_library.location), "search", "drone photogrammetry", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["paper_id"] for r in rows} == {ids["glacier.pdf"]}
    first = rows[0]
    assert first["snippet"][first["match"][0]:first["match"][1]].lower() == "drone photogrammetry"
    assert cli.main(["--library", str(fact_library.location), "search", "xylophone"]) == 0
    assert "No paper prints" in capsys.readouterr().out


def test_a_later_import_adds_its_rows_to_the_full_text_index(tmp_path):
    """`finish_writes` adds a later import's rows to the full-text index it made (by `optimize`,
    no longer by rebuilding it): the index holds every row, none is left unindexed, and a word only
    the new rows have is found."""
    lib = Library(tmp_path / "lib")
    for pid, text in (("p1", "The ice shelf calved in March."), ("p2", "Krill swarms thinned under the sea ice.")):
        lib.upsert_paper(Paper(id=pid, title=pid, authors=[], published="", abstract="", doi="", arxiv_id="",
                               source_file=f"{pid}.pdf", page_count=1, page_labels=[], content_hash=pid, imported_at="",
                               status="indexed"))
        lib.append_chunks(CONTENT_CHUNKS, [Chunk(pid, 0, text, page=1)], np.ones((1, 4), dtype=np.float32))
        lib.finish_writes()
        table = lib.chunks_table(CONTENT_CHUNKS)
        (index,) = [i for i in table.list_indices() if tuple(i.columns) == ("text",)]
    stats = table.index_stats(index.name)
    assert stats.num_indexed_rows == 2 and stats.num_unindexed_rows == 0
    assert [h.paper_id for h in search_text(lib, "krill swarms")] == ["p2"]
