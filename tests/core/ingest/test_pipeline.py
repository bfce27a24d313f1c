"""Importing PDFs into a real LanceDB library with the real MiniLM GGUF: the happy
path, duplicates, resumability, and every kind of bad input."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
import tracemalloc
from pathlib import Path

import pymupdf
import pytest

from app.core.events import Progress, Task
from app.core.errors import Cancelled, LibraryError
from app.core.library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library
from app.core.pdf.extract import TEXT_FLAGS
from app.core.ingest.validate import validate_library
from tests.support import pdf_factory
from tests.support.cli import KILL_PAPERS, run_cli, start_long_import
from tests.support.library import import_words_only


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def content_rows(library: Library, paper_id: str | None = None) -> list[dict]:
    table = library.chunks_table(CONTENT_CHUNKS)
    q = table.search()
    if paper_id:
        q = q.where(f"paper_id = '{paper_id}'")
    return q.limit(100_000).to_list()


def assert_chunks_on_their_pages(library: Library) -> None:
    """Every content chunk's page is in range and its text is on that page of the PDF."""
    papers = {p.id: p for p in library.list_papers()}
    docs: dict[str, pymupdf.Document] = {}
    for row in content_rows(library):
        paper = papers[row["paper_id"]]
        assert 1 <= row["page"] <= paper.page_count
        doc = docs.setdefault(paper.id, pymupdf.open(library.pdf_path(paper.id)))
        page_text = _norm(doc[row["page"] - 1].get_text(flags=TEXT_FLAGS))
        words = [w for w in re.findall(r"[A-Za-z]{4,}", row["text"])][:8]
        assert words, row["text"]
        assert _norm(" ".join(words)) in page_text or all(_norm(w) in page_text for w in words), (
            f"chunk of {paper.id} not found on page {row['page']}: {row['text'][:80]!r}")
    for d in docs.values():
        d.close()


def test_import_facts_list_validate_and_duplicates(make_desk, fact_pdfs, tmp_path):
    desk = make_desk(tmp_path / "lib")
    report = desk.add([fact_pdfs])
    assert report.count("added") == 2 and report.ok, [o.message for o in report.outcomes]
    papers = desk.library.list_papers()
    assert sorted(p.title for p in papers) == sorted(t for t, _, _ in (v for v in pdf_factory_titles()))
    for p in papers:
        assert p.status == "indexed" and p.page_count == 3
        assert desk.library.pdf_path(p.id).exists() and desk.library.text_path(p.id).exists()
        text = desk.library.text_path(p.id).read_text()
        assert "<!-- page 3" in text
    assert all(c.ok for c in validate_library(desk.library)), validate_library(desk.library)
    assert_chunks_on_their_pages(desk.library)
    kestrel = next(p for p in papers if p.title.startswith("Kestrel"))
    pages = {r["page"] for r in content_rows(desk.library, kestrel.id)}
    assert pages == {1, 2, 3}
    # The summary side has an abstract/profile chunk for scoping before any LLM summary.
    assert desk.library.count_chunks(SUMMARY_CHUNKS, kestrel.id) >= 1

    n_rows = desk.library.count_chunks(CONTENT_CHUNKS)
    again = desk.add([fact_pdfs, fact_pdfs / "kestrel.pdf"])
    assert again.count("added") == 0 and again.count("duplicate") == 2
    assert any("already in library" in o.message for o in again.outcomes)
    assert desk.library.count_chunks(CONTENT_CHUNKS) == n_rows
    assert len(desk.library.list_papers()) == 2


def pdf_factory_titles():
    from tests.support.papers import FACT_PAPERS

    return FACT_PAPERS.values()


def test_bad_inputs_each_fail_clearly_and_leave_others_untouched(make_desk, fact_pdfs, tmp_path, monkeypatch, request):
    # Without an OCR engine (here: `import rapidocr` fails) a scan is reported as needing OCR;
    # with one it is read (tests/core/pdf/test_ocr.py).
    from app.core.pdf import ocr

    monkeypatch.setitem(sys.modules, "rapidocr", None)
    ocr._probe.cache_clear()
    request.addfinalizer(ocr._probe.cache_clear)  # later tests probe the real engine again
    desk = make_desk(tmp_path / "lib")
    desk.add([fact_pdfs / "kestrel.pdf"])
    before = desk.library.count_chunks(CONTENT_CHUNKS)
    bad = tmp_path / "bad"
    bad.mkdir()
    pdf_factory.make_corrupt(bad / "corrupt.pdf")
    pdf_factory.make_encrypted(bad / "locked.pdf")
    pdf_factory.make_scanned(bad / "scanned.pdf")
    pdf_factory.make_empty(bad / "empty.pdf")
    pdf_factory.make_not_pdf(bad / "notes.pdf")
    report = desk.add([bad, tmp_path / "does-not-exist.pdf"])
    by_name = {Path(o.path).name: o for o in report.outcomes}
    assert report.count("added") == 0 and not report.ok
    expectations = {
        "corrupt.pdf": "corrupt",
        "locked.pdf": "encrypted",
        "scanned.pdf": "needs OCR",
        "empty.pdf": "empty file",
        "notes.pdf": "not a PDF",
        "does-not-exist.pdf": "no such file",
    }
    for name, reason in expectations.items():
        outcome = by_name[name]
        assert outcome.status == "failed", outcome
        assert name in outcome.message and reason in outcome.message, outcome.message
    # The scanned paper is kept, marked failed with the reason; the others are not stored.
    statuses = {p.source_file: (p.status, p.status_reason) for p in desk.library.list_papers()}
    assert statuses["scanned.pdf"][0] == "failed" and "needs OCR" in statuses["scanned.pdf"][1]
    assert set(statuses) == {"kestrel.pdf", "scanned.pdf"}
    assert statuses["kestrel.pdf"][0] == "indexed"
    assert desk.library.count_chunks(CONTENT_CHUNKS) == before


def test_non_ascii_file_name(make_desk, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    path = pdf_factory.make_paper(src / "Übersicht_naïve_café.pdf", "Überblick über naïve Schätzer", ["José Núñez"],
                                  ["Robust estimators are compared on café data."])
    desk = make_desk(tmp_path / "lib")
    report = desk.add([path])
    assert report.ok, [o.message for o in report.outcomes]
    (paper,) = desk.library.list_papers()
    assert paper.source_file == "Übersicht_naïve_café.pdf"
    assert paper.id.isascii() and desk.library.pdf_path(paper.id).exists()


def test_unwritable_library_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(LibraryError) as info:
        Library(blocker / "library")
    assert "cannot be used" in info.value.message or "not writable" in info.value.message
    if os.geteuid() != 0:  # root ignores permission bits
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(LibraryError, match="not writable"):
            Library(ro / "library")


def test_cancelled_import_resumes_without_duplicates(make_desk, fact_pdfs, tmp_path):
    desk = make_desk(tmp_path / "lib")
    task = Task()

    def watch(event) -> None:
        # Cancel once the first paper (glacier.pdf, in name order) is half read.
        if isinstance(event, Progress) and event.step and (event.step.name, event.step.done) == ("glacier.pdf", 2):
            task.token.cancel()

    task.sink = watch
    with pytest.raises(Cancelled):
        desk.add([fact_pdfs], task)
    papers = desk.library.list_papers()
    assert [p.source_file for p in papers] == ["glacier.pdf"]
    assert papers[0].status == "importing" and not papers[0].complete, "a half-imported paper must not look complete"
    report = desk.add([fact_pdfs])
    assert report.ok
    papers = desk.library.list_papers()
    assert len(papers) == 2 and all(p.status == "indexed" for p in papers)
    assert all(c.ok for c in validate_library(desk.library))
    ids = [r["id"] for r in content_rows(desk.library)]
    assert len(ids) == len(set(ids)), "resumed import duplicated chunk rows"


@pytest.mark.slow
def test_large_pdf_streams_with_bounded_memory(make_desk, tmp_path):
    big = pdf_factory.make_large(tmp_path / "big.pdf", n_pages=1000)
    desk = make_desk(tmp_path / "lib")
    desk.embedder()  # load the model before measuring
    tracemalloc.start()
    report = desk.add([big])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert report.ok, [o.message for o in report.outcomes]
    (paper,) = desk.library.list_papers()
    assert paper.page_count == 1000 and paper.status == "indexed"
    pages = {r["page"] for r in content_rows(desk.library)}
    assert max(pages) == 1000
    print(f"1000-page import: peak traced Python memory {peak / 1e6:.1f} MB")
    assert peak < 150e6


@pytest.mark.slow
def test_cli_killed_mid_import_then_rerun_finishes(tmp_path, cli_env):
    proc, lib, papers = start_long_import(tmp_path, cli_env)
    # Kill it hard once the first paper has chunks in the index.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if (lib / "index" / "content_chunks.lance").exists():
            time.sleep(1.0)
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = run_cli("--library", str(lib), "add", str(papers), env=cli_env)
    assert done.returncode == 0, done.stderr
    listing = run_cli("--library", str(lib), "list", env=cli_env)
    assert listing.returncode == 0
    for title, _ in KILL_PAPERS.values():
        assert re.search(title.split(":")[0].split()[0], listing.stdout, re.I), listing.stdout
    lib_obj = Library(lib)
    assert len(lib_obj.list_papers()) == 3 and all(p.status == "indexed" for p in lib_obj.list_papers())
    for p in lib_obj.list_papers():
        with pymupdf.open(papers / p.source_file) as doc:
            assert p.page_count == doc.page_count
    check = run_cli("--library", str(lib), "validate", env=cli_env)
    assert check.returncode == 0, check.stdout
    ids = [r["id"] for r in content_rows(lib_obj)]
    assert len(ids) == len(set(ids))


def test_cli_lmstudio_not_running_is_one_clear_message(tmp_path, fact_pdfs):
    from app.core.settings import ModelConfig, Settings

    config = tmp_path / "cfg"
    Settings(embedding=ModelConfig(backend="lmstudio", host="127.0.0.1:1", model="text-embedding-nomic")).save(config / "settings.json")
    out = run_cli("--library", str(tmp_path / "lib"), "add", str(fact_pdfs), env={"RESEARCH_DESK_CONFIG_DIR": str(config)}, timeout=60)
    assert out.returncode == 1
    assert "LM Studio" in out.stderr and "127.0.0.1:1" in out.stderr
    assert "Traceback" not in out.stderr


def test_cli_missing_gguf_is_a_clear_message(tmp_path, fact_pdfs):
    from app.core.settings import ModelConfig, Settings

    config = tmp_path / "cfg"
    missing = tmp_path / "nowhere" / "model.gguf"
    Settings(embedding=ModelConfig(path=str(missing))).save(config / "settings.json")
    out = run_cli("--library", str(tmp_path / "lib"), "add", str(fact_pdfs), env={"RESEARCH_DESK_CONFIG_DIR": str(config)}, timeout=60)
    assert out.returncode == 1
    assert str(missing) in out.stderr and "Traceback" not in out.stderr


def test_remove_and_rebuild_index(make_desk, fact_pdfs, tmp_path):
    desk = make_desk(tmp_path / "lib")
    desk.add([fact_pdfs])
    glacier = next(p for p in desk.library.list_papers() if p.title.startswith("Glacier"))
    desk.library.notes_path(glacier.id).write_text("My note: compare with the 2019 lidar survey.")
    desk.library.remove_paper(glacier.id)
    assert [p.title[:7] for p in desk.library.list_papers()] == ["Kestrel"]
    assert not desk.library.pdf_path(glacier.id).exists() and not desk.library.notes_path(glacier.id).exists()
    assert desk.library.count_chunks(CONTENT_CHUNKS, glacier.id) == 0

    before = desk.library.count_chunks(CONTENT_CHUNKS)
    assert desk.rebuild_index() == 1
    assert desk.library.count_chunks(CONTENT_CHUNKS) == before
    (paper,) = desk.library.list_papers()
    assert paper.source_file == "kestrel.pdf" and paper.status == "indexed"
    assert all(c.ok for c in validate_library(desk.library))


def test_changing_embedding_model_marks_index_stale(make_desk, fact_pdfs, tmp_path, tiny_models):
    import shutil

    desk = make_desk(tmp_path / "lib")
    desk.add([fact_pdfs / "kestrel.pdf"])
    assert desk.stale_reason() == ""
    # Another model file (a copy under another name stands in for, say, the Q8_0 build):
    # vectors from it must not be mixed with the index's, so the library asks for a rebuild.
    other = tmp_path / "other-embedder.gguf"
    shutil.copyfile(desk.settings.embedding.path, other)
    desk.settings.embedding.path = str(other)
    assert "rebuild" in desk.stale_reason() and "other-embedder.gguf" in desk.stale_reason()
    assert desk.rebuild_index() == 1
    assert desk.stale_reason() == ""


def _small_papers(folder: Path, *subjects: str) -> Path:
    """One two-page PDF per subject in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for subject in subjects:
        pdf_factory.make_paper(folder / f"{subject.lower()}.pdf", f"Notes on {subject} Populations", ["A. Author"],
                               [f"{subject} counts rose over the survey years at every site.",
                                f"The {subject.lower()} survey used fixed transects each spring."])
    return folder


def test_an_import_reads_library_json_once_and_writes_a_new_identity(make_desk, tmp_path, monkeypatch):
    """library.json says which embedding model built the index: an import reads it once for all
    its papers (not once per paper), and still writes the identity where it is missing."""
    desk = make_desk(tmp_path / "lib")
    library, identity = desk.library, desk.embedding_identity()
    reads, writes = [], []
    meta, set_meta = Library.meta, Library.set_meta
    monkeypatch.setattr(Library, "meta", lambda self: (reads.append(1), meta(self))[1])
    monkeypatch.setattr(Library, "set_meta", lambda self, **values: (writes.append(values), set_meta(self, **values))[1])

    # A new library (as after a rebuild) has no identity: the first paper writes it, once.
    library.set_meta(embedding=None)
    reads.clear()
    writes.clear()
    report = import_words_only(desk, [_small_papers(tmp_path / "first", "Kestrel", "Plover", "Dunlin")])
    assert report.count("added") == 3, [o.message for o in report.outcomes]
    assert writes == [{"embedding": identity}]
    assert len(reads) == 2  # the run's one read, and the write's own (it keeps library.json's other keys)
    assert meta(library)["embedding"] == identity

    # A library that knows its identity: three papers more, one read, no write.
    reads.clear()
    writes.clear()
    report = import_words_only(desk, [_small_papers(tmp_path / "second", "Curlew", "Godwit", "Redshank")])
    assert report.count("added") == 3, [o.message for o in report.outcomes]
    assert (len(reads), writes) == (1, [])
    assert meta(library)["embedding"] == identity and len(library.list_papers()) == 6
