"""Import PDFs into the library: extract, chunk, embed, index — resumably.

Pipelining: a producer thread opens, extracts and chunks the PDFs ahead of
the embedder and hands pages and chunks over through a bounded queue, so that
extraction hides behind embedding (which dominates) and memory stays bounded
even for a 1,000-page PDF (nothing holds a whole paper's text).

Crash safety: a paper's row is written with status "importing" before its
chunks, and set to "indexed" only after every part is written. Running the
same import again skips complete papers (same content hash) and redoes the
incomplete ones from the start.
"""

from __future__ import annotations

import hashlib
import os
import queue
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import numpy as np

from . import pdf_extract
from .callbacks import IsCancelled, Progress, no_progress
from .chunking import chunk_pages
from .errors import Cancelled, ImportFailure, ResearchDeskError
from .library import CONTENT_CHUNKS, Library, atomic_copy
from .models.base import EmbeddingModel
from .paper_id import make_paper_id
from .records import Chunk, PageText, Paper, PaperMeta, PaperStatus
from .summary_index import index_summary_side

WRITE_BATCH = 256  # chunks per LanceDB commit: few commits keep the table compact


@dataclass
class ImportOutcome:
    path: str
    status: str  # added | duplicate | failed | cancelled
    paper_id: str = ""
    message: str = ""


@dataclass
class ImportReport:
    outcomes: list[ImportOutcome] = field(default_factory=list)
    pages: int = 0
    chunks: int = 0
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return self.count("failed") == 0


def collect_pdfs(paths: Iterable[str | Path]) -> tuple[list[Path], list[ImportOutcome]]:
    """Expand files and folders (recursively) into PDF paths, in a stable order.

    Returns the PDFs and outcomes for arguments that are not usable at all.
    """
    found: list[Path] = []
    problems: list[ImportOutcome] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf"))
        elif path.is_file():
            found.append(path)
        else:
            problems.append(ImportOutcome(str(path), "failed", message=f"{path}: no such file or folder"))
    unique: list[Path] = []
    seen: set[Path] = set()
    for p in found:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique, problems


def file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# -- producer events ------------------------------------------------------------
@dataclass
class _Start:
    path: Path
    content_hash: str
    meta: PaperMeta
    labels: list[str]
    page_count: int
    text_layer: bool


@dataclass
class _Page:
    page: PageText


@dataclass
class _Chunks:
    chunks: list[Chunk]


@dataclass
class _End:
    path: Path
    sections: list[str]


@dataclass
class _Skip:
    path: Path
    outcome: ImportOutcome


_DONE = object()


class Importer:
    """Imports a list of PDFs into a library with one embedding model."""

    def __init__(
        self,
        library: Library,
        embedder: EmbeddingModel,
        *,
        embedding_identity: str = "",
        batch_size: int = 16,
        progress: Progress | None = None,
        cancelled: IsCancelled | None = None,
        chunk_tokens: tuple[int, int, int] = (300, 400, 80),
    ) -> None:
        self.library = library
        self.embedder = embedder
        self.embedding_identity = embedding_identity or embedder.name
        self.batch_size = max(1, batch_size)
        self.progress = progress or no_progress
        self.cancelled = cancelled or (lambda: False)
        self.chunk_tokens = chunk_tokens

    # -- public ------------------------------------------------------------------
    def run(self, paths: Iterable[str | Path]) -> ImportReport:
        started = time.monotonic()
        files, problems = collect_pdfs(paths)
        report = ImportReport(outcomes=list(problems))
        if not files:
            return report
        self._check_embedding_model()

        known = {p.content_hash: p for p in self.library.list_papers()}
        total_pages = sum(_quick_page_count(f) for f in files) or 1
        q: queue.Queue = queue.Queue(maxsize=64)
        stop = threading.Event()
        producer = threading.Thread(
            target=self._produce, args=(files, known, q, stop), name="import-producer"
        )
        producer.start()
        try:
            self._consume(files, known, q, report, total_pages, started)
        finally:
            stop.set()
            # Drain so that a producer blocked on a full queue can finish.
            while producer.is_alive():
                try:
                    q.get(timeout=0.1)
                except queue.Empty:
                    pass
            producer.join()
            self.library.finish_writes()
        report.seconds = time.monotonic() - started
        return report

    # -- producer thread: hashing, extraction, chunking ------------------------------
    def _produce(self, files: list[Path], known: dict[str, Paper], q: queue.Queue, stop: threading.Event) -> None:
        def put(item) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        seen_hashes: set[str] = set()
        target, max_tokens, overlap = self.chunk_tokens
        try:
            for path in files:
                if stop.is_set():
                    return
                try:
                    content_hash = file_hash(path)
                except OSError as exc:
                    put(_Skip(path, ImportOutcome(str(path), "failed", message=f"{path.name}: cannot read ({exc.strerror})")))
                    continue
                existing = known.get(content_hash)
                if existing is not None and existing.complete:
                    put(_Skip(path, ImportOutcome(str(path), "duplicate", existing.id, f"{path.name}: already in library as {existing.id}")))
                    continue
                if content_hash in seen_hashes:
                    put(_Skip(path, ImportOutcome(str(path), "duplicate", "", f"{path.name}: same file as one imported just before; skipped")))
                    continue
                seen_hashes.add(content_hash)
                try:
                    doc = pdf_extract.open_pdf(path)
                except ImportFailure as exc:
                    put(_Skip(path, ImportOutcome(str(path), "failed", message=exc.message)))
                    continue
                try:
                    meta = pdf_extract.extract_meta(doc, path.name)
                    labels = pdf_extract.page_labels(doc)
                    text_layer = pdf_extract.has_text_layer(doc)
                    if not put(_Start(path, content_hash, meta, labels, doc.page_count, text_layer)):
                        return
                    sections: list[str] = []
                    if text_layer:
                        pages = _forwarding_pages(pdf_extract.iter_pages(doc), put)
                        batch: list[Chunk] = []
                        for chunk in chunk_pages(
                            "", pages, target_tokens=target, max_tokens=max_tokens, overlap_tokens=overlap
                        ):
                            if stop.is_set():
                                return
                            if chunk.section and (not sections or sections[-1] != chunk.section):
                                sections.append(chunk.section)
                            batch.append(chunk)
                            if len(batch) >= self.batch_size:
                                if not put(_Chunks(batch)):
                                    return
                                batch = []
                        if batch and not put(_Chunks(batch)):
                            return
                    put(_End(path, sections))
                except Exception as exc:  # noqa: BLE001 - one bad PDF must not stop the others
                    put(_Skip(path, ImportOutcome(str(path), "failed", message=f"{path.name}: extraction failed ({exc})")))
                finally:
                    doc.close()
        finally:
            put(_DONE)

    # -- consumer (calling thread): ids, files, embedding, LanceDB ------------------
    def _consume(self, files, known, q, report: ImportReport, total_pages: int, started: float) -> None:
        state: _PaperWrite | None = None
        pages_done = 0
        file_no = 0
        while True:
            if self.cancelled():
                if state is not None:
                    state.abort()
                    report.outcomes.append(ImportOutcome(str(state.path), "cancelled", state.paper.id, f"{state.path.name}: cancelled; run the import again to finish it"))
                raise Cancelled("Import cancelled; papers already imported are kept, run it again to finish the rest.")
            item = q.get()
            if item is _DONE:
                break
            if isinstance(item, _Skip):
                file_no += 1
                pages_done += _quick_page_count(item.path)
                report.outcomes.append(item.outcome)
                self._report(pages_done, total_pages, started, f"[{file_no}/{len(files)}] {item.outcome.message}")
                if state is not None and state.path == item.path:
                    state.fail(item.outcome.message)
                    state = None
            elif isinstance(item, _Start):
                file_no += 1
                state = self._begin_paper(item, known)
                self._report(pages_done, total_pages, started, f"[{file_no}/{len(files)}] {item.path.name}: {item.page_count} pages")
                if not item.text_layer:
                    reason = pdf_extract.NEEDS_OCR
                    state.fail(reason)
                    report.outcomes.append(ImportOutcome(str(item.path), "failed", state.paper.id, f"{item.path.name}: {reason}"))
                    pages_done += item.page_count
                    state = None
            elif isinstance(item, _Page):
                if state is not None:
                    state.add_page(item.page)
                    pages_done += 1
                    report.pages += 1
                    self._report(pages_done, total_pages, started, f"[{file_no}/{len(files)}] {state.path.name}: page {item.page.page}/{state.paper.page_count}, {state.n_chunks} chunks")
            elif isinstance(item, _Chunks):
                if state is not None:
                    state.add_chunks(item.chunks, self.embedder)
                    report.chunks += len(item.chunks)
            elif isinstance(item, _End):
                if state is not None and state.path == item.path:
                    try:
                        state.finish(self.embedder, item.sections)
                        report.outcomes.append(ImportOutcome(str(item.path), "added", state.paper.id, f"{item.path.name}: added as {state.paper.id} ({state.paper.page_count} pages, {state.n_chunks} chunks)"))
                    except ResearchDeskError as exc:
                        state.fail(exc.message)
                        report.outcomes.append(ImportOutcome(str(item.path), "failed", state.paper.id, f"{item.path.name}: {exc.message}"))
                    except OSError as exc:
                        reason = f"could not write to the library ({exc.strerror or exc})"
                        state.abort()
                        report.outcomes.append(ImportOutcome(str(item.path), "failed", state.paper.id, f"{item.path.name}: {reason}"))
                    state = None

    def _begin_paper(self, item: _Start, known: dict[str, Paper]) -> "_PaperWrite":
        previous = known.get(item.content_hash)
        if previous is not None:
            paper_id = previous.id  # resume an incomplete or failed import under the same id
        else:
            paper_id = make_paper_id(item.meta, item.path.name, self.library.paper_ids())
        meta = item.meta
        if previous is not None and previous.source_file:
            # Re-import (resume or rebuild): keep what the user knows the paper by.
            meta = PaperMeta(previous.title, previous.authors, previous.published, previous.abstract,
                             previous.doi, previous.arxiv_id, previous.venue, list(previous.unsure))
        if not item.text_layer and previous is None:
            # The text layer is unreadable, so whatever title it yielded is too.
            meta = PaperMeta(title=item.path.stem)
            paper_id = make_paper_id(meta, item.path.name, self.library.paper_ids())
        paper = Paper(
            id=paper_id,
            title=meta.title or item.path.stem,
            authors=list(meta.authors),
            published=meta.published,
            abstract=meta.abstract,
            doi=meta.doi,
            arxiv_id=meta.arxiv_id,
            venue=meta.venue,
            unsure=list(meta.unsure),
            tags=list(previous.tags) if previous is not None else [],
            source_key=previous.source_key if previous is not None else "",
            source_file=previous.source_file if previous is not None and previous.source_file else item.path.name,
            page_count=item.page_count,
            page_labels=item.labels,
            content_hash=item.content_hash,
            imported_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            status=PaperStatus.IMPORTING.value,
            summarized=bool(previous and previous.summarized),
        )
        known[item.content_hash] = paper
        return _PaperWrite(self.library, paper, item.path, self.embedding_identity)

    def _check_embedding_model(self) -> None:
        reason = self.library.index_stale_reason(self.embedding_identity)
        if reason:
            raise ResearchDeskError(
                "New papers cannot be added with a different embedding model than the index was built with.",
                reason + " Run `research-desk rebuild-index`.",
                action="reindex",
            )
        dim = self.library.vector_dim()
        if dim is not None and dim != self.embedder.dimension:
            raise ResearchDeskError(
                f"The index holds {dim}-dimensional vectors but the embedding model makes {self.embedder.dimension}.",
                "Run `research-desk rebuild-index`.",
                action="reindex",
            )

    def _report(self, done: int, total: int, started: float, message: str) -> None:
        fraction = min(1.0, done / total)
        elapsed = time.monotonic() - started
        eta = ""
        if fraction > 0.02 and elapsed > 2:
            eta = f" — ETA {_fmt_duration(elapsed / fraction - elapsed)}"
        self.progress(fraction, f"{message}{eta}")


def _forwarding_pages(pages: Iterable[PageText], put) -> Iterable[PageText]:
    """Pass each page to the consumer (for text/<id>.md) as the chunker reads it."""
    for page in pages:
        put(_Page(page))
        yield page


class _PaperWrite:
    """The writes for one paper: PDF copy, text file, chunks, then status."""

    def __init__(self, library: Library, paper: Paper, path: Path, identity: str) -> None:
        self.library = library
        self.paper = paper
        self.path = path
        self.n_chunks = 0
        self._pending: list[Chunk] = []
        self._pending_vectors: list[np.ndarray] = []
        self._first_write = True
        library.set_meta(embedding=identity)
        atomic_copy(path, library.pdf_path(paper.id))
        library.upsert_paper(paper)
        # Stream the text file to a temp name; it replaces text/<id>.md at the end.
        text_path = library.text_path(paper.id)
        fd, tmp = tempfile.mkstemp(dir=text_path.parent, prefix=f".{text_path.name}.", suffix=".tmp")
        self._text_tmp = Path(tmp)
        self._text = os.fdopen(fd, "w", encoding="utf-8")
        self._text.write(f"# {paper.title}\n\n")

    def add_page(self, page: PageText) -> None:
        self._text.write(f"<!-- page {page.page} label {page.label} -->\n\n{page.markdown}\n\n")

    def add_chunks(self, chunks: list[Chunk], embedder: EmbeddingModel) -> None:
        for c in chunks:
            c.paper_id = self.paper.id
            c.chunk_index = self.n_chunks
            c.source_type = "content"
            self.n_chunks += 1
        vectors = embedder.embed([c.text for c in chunks])
        self._pending.extend(chunks)
        self._pending_vectors.append(vectors)
        if len(self._pending) >= WRITE_BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self._pending and not self._first_write:
            return
        vectors = np.vstack(self._pending_vectors) if self._pending_vectors else np.zeros((0, 0), np.float32)
        if self._first_write:
            # Resuming a paper: rows from an interrupted earlier attempt go first.
            self.library.delete_chunks(CONTENT_CHUNKS, self.paper.id)
            self._first_write = False
        if self._pending:
            self.library.append_chunks(CONTENT_CHUNKS, self._pending, vectors)
        self._pending, self._pending_vectors = [], []

    def finish(self, embedder: EmbeddingModel, sections: list[str]) -> None:
        self._flush()
        self._text.close()
        os.replace(self._text_tmp, self.library.text_path(self.paper.id))
        if self.n_chunks == 0:
            raise ImportFailure("no text could be extracted", "The PDF may be scanned; OCR it first.")
        index_summary_side(self.library, embedder, self.paper, sections=sections)
        self.paper.status = PaperStatus.INDEXED.value
        self.paper.status_reason = ""
        self.library.upsert_paper(self.paper)

    def fail(self, reason: str) -> None:
        self._close_text()
        self.library.delete_chunks(CONTENT_CHUNKS, self.paper.id)
        self.paper.status = PaperStatus.FAILED.value
        self.paper.status_reason = reason
        self.library.upsert_paper(self.paper)

    def abort(self) -> None:
        """Stop mid-paper: leave the row as "importing" so the next run redoes it."""
        self._close_text()

    def _close_text(self) -> None:
        if not self._text.closed:
            self._text.close()
        self._text_tmp.unlink(missing_ok=True)


def _quick_page_count(path: Path) -> int:
    try:
        import pymupdf

        with pymupdf.open(path) as doc:
            return doc.page_count
    except Exception:  # noqa: BLE001 - unreadable files count as no pages for the ETA
        return 0


def _fmt_duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
