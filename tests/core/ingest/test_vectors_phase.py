"""Import in two phases (ingest/vectors.py): a paper is listed and searchable by its words as soon
as it is read, its vectors follow, and a stop or a SIGKILL in the vectors phase loses nothing and
duplicates nothing. Real LanceDB, PDFs made with PyMuPDF, the real MiniLM GGUF."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import numpy as np
import pytest

from app.core.errors import Cancelled
from app.core.events import VECTORS_UNIT, PaperImported, Progress, Task
from app.core.ingest.validate import validate_library
from app.core.library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library
from app.core.research.evidence.retrieval import words_only_note
from tests.support.cli import run_cli, start_long_import
from tests.support.library import import_words_only
from tests.support.pdf_factory import make_large


def rows(library: Library, name: str = CONTENT_CHUNKS) -> list[dict]:
    return library.chunks_table(name).search().limit(1_000_000).to_list()


def assert_every_chunk_once_with_its_vector(library: Library) -> None:
    """One row per chunk (ids unique, indices 0..n-1 per paper), each with a real (non-zero) vector."""
    for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
        found = rows(library, name)
        ids = [r["id"] for r in found]
        assert len(ids) == len(set(ids)), f"duplicate chunk ids in {name}"
        assert all(np.any(np.asarray(r["vector"])) for r in found), f"a {name} row has no vector"
    by_paper: dict[str, list[int]] = {}
    for r in rows(library):
        if r["source_type"] == "content":
            by_paper.setdefault(r["paper_id"], []).append(r["chunk_index"])
    for paper in library.list_papers():
        indices = sorted(by_paper.get(paper.id, []))
        assert indices and indices == list(range(len(indices))), f"{paper.id}: chunks lost or doubled"


def test_words_paper_is_listed_searched_and_answered_before_its_vectors(make_desk, fact_pdfs, tmp_path):
    desk = make_desk(tmp_path / "lib")
    seen: list[Progress] = []
    report = import_words_only(desk, [fact_pdfs], Task(sink=lambda e: seen.append(e) if isinstance(e, Progress) else None))
    assert report.count("added") == 2
    papers = desk.library.list_papers()
    assert len(papers) == 2 and all(p.status == "words" and p.complete and p.vectors_pending for p in papers)
    assert not any(np.any(np.asarray(r["vector"])) for r in rows(desk.library)), "vectors written in the text phase"
    assert any(e.unit == "pages" and e.detail.startswith("read 2 of 2 papers") for e in seen)
    assert not any(e.unit == VECTORS_UNIT for e in seen)
    total = desk.library.count_chunks(CONTENT_CHUNKS)

    # Found by a word search before any vector exists.
    hits = desk.search_text("departure date")
    kestrel = next(p for p in papers if p.title.startswith("Kestrel"))
    assert hits and hits[0].paper_id == kestrel.id and hits[0].page == 3 and hits[0].exact

    # Stage 1 and 2 work on a library where every paper is "words", from BM25, and say so.
    result = desk.research("When was the median departure date of the kestrels?", Task(), evidence_only=True)
    assert result.papers and result.papers[0] == kestrel.id
    assert any(e.paper_id == kestrel.id and "14 September" in e.text for e in result.evidence)
    note = words_only_note(len(result.papers))
    assert note in result.messages and note.endswith("searched by their words only (their vectors are still being computed).")
    assert "searched by their words only" in str(result.to_dict()["messages"])  # --json carries it

    # The next import resumes the vectors: nothing read again, every chunk once, now with its vector.
    seen.clear()
    again = desk.add([fact_pdfs], Task(sink=lambda e: seen.append(e) if isinstance(e, Progress) else None))
    counted = [e.detail for e in seen if e.unit == VECTORS_UNIT]
    assert counted[0] == f"vectors: 0 of {total:,} passages" and counted[-1] == f"vectors: {total:,} of {total:,} passages"
    assert again.count("duplicate") == 2
    assert all(p.status == "indexed" for p in desk.library.list_papers())
    assert desk.library.count_chunks(CONTENT_CHUNKS) == total
    assert_every_chunk_once_with_its_vector(desk.library)
    assert all(c.ok for c in validate_library(desk.library))
    indexed = desk.research("When was the median departure date of the kestrels?", Task(), evidence_only=True)
    assert not any("words only" in m for m in indexed.messages)
    assert any(e.paper_id == kestrel.id and "14 September" in e.text and e.score > 0 for e in indexed.evidence)


def test_the_vector_leg_never_returns_a_pending_row(make_desk, fact_pdfs, tmp_path):
    """With one paper embedded and one not, a vector search finds only the embedded paper's rows."""
    from app.core.library.table_reader import snapshot

    desk = make_desk(tmp_path / "lib")
    import_words_only(desk, [fact_pdfs])
    (first, second) = sorted(desk.library.list_papers(), key=lambda p: (p.imported_at, p.id))
    # Embed the first paper's rows only: the phase takes papers oldest first, stop it after one.
    done = Task()

    def after_first(event) -> None:
        if desk.library.get_paper(first.id).status == "indexed":
            done.token.cancel()
    done.sink = after_first
    try:
        desk.compute_vectors(done)
    except Cancelled:
        pass
    status = {p.id: p.status for p in desk.library.list_papers()}
    assert status == {first.id: "indexed", second.id: "words"}
    q = desk.embedder().embed_one("glacier retreat kestrel departure")
    hits = snapshot(desk.library.chunks_table(CONTENT_CHUNKS)).nearest(q, 100)
    assert hits.num_rows == desk.library.count_chunks(CONTENT_CHUNKS, first.id)
    assert set(hits.column("paper_id").to_pylist()) == {first.id}
    within = snapshot(desk.library.chunks_table(CONTENT_CHUNKS)).nearest(q, 100, [second.id])
    assert within.num_rows == 0


def test_vectors_run_behind_the_reading_and_a_cancel_there_loses_nothing(make_desk, fact_pdfs, tmp_path, monkeypatch):
    """The passages of the papers read are embedded while a later paper is still being read (one
    writer, the consumer's thread: ingest/pipeline.py); a cancel there stops within a batch, and
    the next import finishes every paper, every chunk once with its vector."""
    from app.core.pdf import extract

    make_large(fact_pdfs / "zz-book.pdf", n_pages=40)  # read last (files are sorted)
    # These generated pages read in ~5 ms; a real paper's take ~40 ms on a quiet machine.
    page_markdown = extract.page_markdown
    monkeypatch.setattr(extract, "page_markdown", lambda *a, **k: (time.sleep(0.05), page_markdown(*a, **k))[1])
    desk = make_desk(tmp_path / "lib")
    task = Task()
    added: list[str] = []
    seen_at_cancel: list[str] = []
    cancelled_at: list[float] = []

    def watch(event) -> None:
        if isinstance(event, PaperImported) and event.outcome.status == "added":
            added.append(Path(event.outcome.path).name)
        elif isinstance(event, Progress) and event.unit == VECTORS_UNIT and event.done > 0 and not cancelled_at:
            seen_at_cancel.extend(added)
            cancelled_at.append(time.monotonic())
            task.token.cancel()
    task.sink = watch
    with pytest.raises(Cancelled):
        desk.add([fact_pdfs], task)
    stopped_after = time.monotonic() - cancelled_at[0]
    assert seen_at_cancel and "zz-book.pdf" not in seen_at_cancel, "no vectors were embedded before the reading ended"
    assert stopped_after < 20, f"the cancel took {stopped_after:.1f} s"
    book = next((p for p in desk.library.list_papers() if p.source_file == "zz-book.pdf"), None)
    assert book is None or not book.complete  # cancelled mid-read: redone from the start by the next import

    desk.add([fact_pdfs])
    assert sorted(p.status for p in desk.library.list_papers()) == ["indexed"] * 3
    assert_every_chunk_once_with_its_vector(desk.library)
    assert all(c.ok for c in validate_library(desk.library))


@pytest.mark.slow
def test_sigkill_in_the_vectors_phase_then_resume(tmp_path, cli_env):
    proc, lib, papers = start_long_import(tmp_path, cli_env)
    # Kill it hard once the first paper's vectors are committed and the others' are not (mid-phase).
    deadline = time.monotonic() + 300
    landed = ""
    while time.monotonic() < deadline and proc.poll() is None:
        if (lib / "index" / "papers.lance").exists():
            status = sorted(p.status for p in Library(lib, create=False).list_papers())
            if len(status) == 3 and "indexed" in status and "words" in status:
                landed = ",".join(status)
                break
        time.sleep(0.3)
    assert proc.poll() is None, "the import ended before the kill: nothing was tested"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert landed, "the kill did not land in the vectors phase"
    killed = Library(lib, create=False)
    assert len(killed.list_papers()) == 3 and all(p.complete for p in killed.list_papers()), "a paper was lost"

    done = run_cli("--library", str(lib), "add", str(papers), env=cli_env)
    assert done.returncode == 0, done.stderr
    assert "3 already in library" in done.stdout
    resumed = Library(lib, create=False)
    assert sorted(p.status for p in resumed.list_papers()) == ["indexed"] * 3
    assert_every_chunk_once_with_its_vector(resumed)
    check = run_cli("--library", str(lib), "validate", env=cli_env)
    assert check.returncode == 0, check.stdout
