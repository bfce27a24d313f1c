"""Import PDFs into the library: extract, chunk and index by words; embed behind the reading — resumably.

Two kinds of work, one writer. The text work makes every paper listed and searchable by its
words as soon as it is read: a producer thread opens, extracts and chunks the PDFs and hands
pages and chunks over through a bounded queue to the consumer, which writes them with pending
vectors (memory stays bounded even for a 1,000-page PDF: nothing holds a whole paper's text).
The vectors work (vectors.py) embeds the chunks of every "words" paper, oldest first. The
consumer does both on one thread: whatever the producer has ready is written first, and a batch
of vectors is embedded only while it has nothing ready (and not while it reads a page by OCR), so
the embedding runs behind the reading, no appends and merges race on a table, and the last paper is
searchable by its words long before the import ends.

Crash safety: a paper's row is written with status "importing" before its chunks, set to
"words" once they are all written and to "indexed" once their vectors are. Running the same
import again skips complete papers (same content hash), redoes the incomplete ones from the
start and resumes the vectors of "words" ones. A paper's writes are paper_write.PaperWrite.

Long module: the importer is one pipeline whose two halves (the producer thread:
hash, OCR, extraction, chunking; the consumer: leases, rows, embedding, commits)
share its event types, its per-file clock and each other's state through `self`;
cut apart, each half would reach into the other's privates.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..library import corrections
from ..pdf import ocr, extract as pdf_extract
from ..pdf.tables import chunks as tables
from ..events import PaperImported, Progress, Step, Task
from .chunking import chunk_pages, token_counter
from ..errors import Cancelled, ImportFailure, ResearchDeskError
from ..library.leases import PaperClaims
from ..pdf.mupdf_guard import MUPDF
from ..library.store import Library
from ..text.wording import plural
from ..models.base import EmbeddingModel
from .paper_id import make_paper_id
from ..records import Chunk, PageText, Paper, PaperMeta, PaperStatus
from .sources import ImportOutcome, ImportReport, collect_pdfs, file_hash  # noqa: F401 - re-exported
from .paper_write import IdentityStamp, PaperWrite
from .vectors import VectorsPhase

# The producer's own time on one page (extraction, OCR; not its waits for the consumer's writes).
# Past it the file fails with its reason instead of holding the import: a malformed page (a
# decompression bomb) reads forever otherwise. Per page, not per file: a 300-page scanned book
# OCRs for longer than any whole-file limit that still stops a bad file soon.
PAGE_READ_LIMIT_S = 300.0
# Passages embedded between two looks at the producer's queue while it reads: a paper read waits
# at most this many passages' embedding before its words are written.
TEXTS_PER_LOOK = 4


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
    ocr_pages: dict[int, ocr.OcrPage] | None = None  # pages read by OCR: their words are kept
    damage: str = ""  # which pages a damaged file lost (pdf_extract.PageDamage.reason)
    tables_note: str = ""  # pages whose tables could not be read (tables.TableScan.note)


@dataclass
class _Working:
    """The producer is busy on a page that takes a while (OCR): progress for the front end."""

    path: Path
    page: int
    page_count: int


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
        task: Task | None = None,
        chunk_tokens: tuple[int, int, int] = (300, 400, 80),
        entries: Mapping[Path, Any] | None = None,
        vectors: bool = True,
    ) -> None:
        self.library = library
        self.embedder = embedder
        self.embedding_identity = embedding_identity or embedder.name
        self.batch_size = max(1, batch_size)
        self.task = task or Task()
        # Chunks sized in the embedder's own word pieces fit it whole (the estimate can overshoot).
        self.count_tokens = token_counter(embedder)
        self.cancelled = self.task.token
        self.chunk_tokens = chunk_tokens
        # PDF path (as passed to run) → importers.SourceEntry: a Zotero/BibTeX/RIS entry whose
        # metadata, tags and source key the paper takes instead of what the PDF yields.
        self.entries = entries or {}
        # False: the text work only; the papers stay "words" for `Desk.compute_vectors` or the next import.
        self.vectors = vectors

    # -- public ------------------------------------------------------------------
    def run(self, paths: Iterable[str | Path]) -> ImportReport:
        started = time.monotonic()
        files, problems = collect_pdfs(paths)
        report = ImportReport(outcomes=list(problems))
        if not files:
            return report
        meta = self.library.meta()  # library.json, read once per run (IdentityStamp)
        self._check_embedding_model(meta)
        self._identity = IdentityStamp(self.library, self.embedding_identity, meta.get("embedding"))

        known = {p.content_hash: p for p in self.library.list_papers()}
        # Counted here, before the producer starts: PyMuPDF shares one MuPDF context between
        # threads, and opening a file on this thread while the producer parses another one
        # aborted the process ("exception stack overflow", bench/faults.py fuzz).
        self._page_counts = {f: _quick_page_count(f) for f in files}
        total_pages = sum(self._page_counts.values()) or 1
        # One lease per paper (leases.py): other writers of this library skip it, or take it over if we die.
        self._claims = PaperClaims(self.library.leases)
        self._text_indexed = False  # full-text indexes looked for (PaperWrite.finish)
        q: queue.Queue = queue.Queue(maxsize=64)
        stop = threading.Event()
        producer = threading.Thread(
            target=self._produce, args=(files, known, q, stop), name="import-producer"
        )
        producer.start()
        # This run's papers as they are read, and any an earlier run left without vectors (cancelled, killed).
        vectors = VectorsPhase(self.library, self.embedder, batch_size=self.batch_size, task=self.task)
        if self.vectors:
            vectors.add_pending()
            # The producer reads on one core: the embedding takes the others until it is done.
            self.embedder.leave_cores(1)
        try:
            try:
                self._consume(files, known, q, report, total_pages, started, vectors if self.vectors else None)
            finally:
                stop.set()
                # Drain so that a producer blocked on a full queue can finish.
                while producer.is_alive():
                    try:
                        q.get(timeout=0.1)
                    except queue.Empty:
                        pass
                producer.join()
                self._claims.close()
                self.embedder.leave_cores(0)
            report.words_seconds = time.monotonic() - started
            if self.vectors:
                report.vectors_left = list(vectors.run().left or [])  # what the reading left to do
        finally:
            vectors.close()
            self.library.finish_writes()
        report.seconds = time.monotonic() - started
        return report

    # -- producer thread: hashing, extraction, chunking ------------------------------
    def _produce(self, files: list[Path], known: dict[str, Paper], q: queue.Queue, stop: threading.Event) -> None:
        clock = _ReadClock()

        def put(item) -> bool:
            waited = time.monotonic()
            try:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        return True
                    except queue.Full:
                        continue
                return False
            finally:
                clock.waited += time.monotonic() - waited

        seen_hashes: set[str] = set()
        target, max_tokens, overlap = self.chunk_tokens
        # (path, its content hash once claimed): a paper OCR would read is claimed, then put back at
        # the end (appended while the loop runs), so the papers after it are listed without waiting for
        # its OCR (a 7-page paper of unmapped glyphs held eight papers behind it for 40 s).
        order: list[tuple[Path, str]] = [(path, "") for path in files]
        try:
            for path, claimed in order:
                if stop.is_set():
                    return
                if claimed:
                    content_hash = claimed
                else:
                    try:
                        content_hash = file_hash(path)
                    except OSError as exc:
                        put(_Skip(path, ImportOutcome(str(path), "failed", message=f"{path.name}: cannot read ({exc.strerror})")))
                        continue
                existing = known.get(content_hash)
                if not claimed:  # a paper put back at the end passed these checks already
                    if existing is not None and existing.complete:
                        put(_Skip(path, ImportOutcome(str(path), "duplicate", existing.id, f"{path.name}: already in library as {existing.id}")))
                        continue
                    if content_hash in seen_hashes:
                        put(_Skip(path, ImportOutcome(str(path), "duplicate", "", f"{path.name}: same file as one imported just before; skipped")))
                        continue
                    seen_hashes.add(content_hash)
                    try:
                        busy = self._claims.claim(path, content_hash)
                    except (OSError, ResearchDeskError) as exc:
                        put(_Skip(path, ImportOutcome(str(path), "failed", message=f"{path.name}: could not take its import lease ({exc})")))
                        continue
                    if busy:
                        put(_Skip(path, ImportOutcome(str(path), "duplicate", "", busy)))
                        continue
                clock.restart()
                try:
                    with MUPDF:
                        doc = pdf_extract.open_pdf(path)
                except ImportFailure as exc:
                    put(_Skip(path, ImportOutcome(str(path), "failed", message=exc.message)))
                    continue
                except Exception as exc:  # noqa: BLE001 - MuPDF's surprises fail this file only, with its reason
                    put(_Skip(path, ImportOutcome(str(path), "failed", message=f"{path.name}: cannot open ({exc})")))
                    continue
                try:
                    with MUPDF:
                        damage = pdf_extract.check_pages(doc)
                    if not damage.readable:
                        put(_Skip(path, ImportOutcome(str(path), "failed", message=f"{path.name}: {damage.reason()}")))
                        continue
                    with MUPDF:
                        text_layer = pdf_extract.has_text_layer(doc, skip=damage.lost)
                        page_ocr = self._page_ocr(doc, path, existing, damage.lost, put, text_layer)
                        if page_ocr is not None and not claimed and page_ocr.reads_a_page():
                            order.append((path, content_hash))
                            continue  # (the finally below closes it; it is opened again at the end)
                        if page_ocr is not None:
                            for pno in range(min(2, doc.page_count)):  # metadata reads the first pages
                                page_ocr.ensure(pno)
                        meta = pdf_extract.extract_meta(doc, path.name)
                        labels = pdf_extract.page_labels(doc)
                    # Where OCR runs, scanned pages get their text from it; without it a scan
                    # is reported as needing OCR, as before.
                    text_layer = text_layer or page_ocr is not None
                    if not put(_Start(path, content_hash, meta, labels, doc.page_count, text_layer)):
                        return
                    sections: list[str] = []
                    found = tables.PaperTables(doc)  # tables as evidence units, read beside each page's text
                    if text_layer:
                        pages = _forwarding_pages(pdf_extract.iter_pages(
                            doc, skip=damage.lost, before=page_ocr.ensure if page_ocr is not None else None), put,
                            clock, path.name, doc.page_count, found.read)
                        batch: list[Chunk] = []
                        for chunk in chunk_pages(
                            "", pages, target_tokens=target, max_tokens=max_tokens, overlap_tokens=overlap,
                            count_tokens=self.count_tokens,
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
                        batch.extend(found.units())
                        if batch and not put(_Chunks(batch)):
                            return
                    put(_End(path, sections, page_ocr.done if page_ocr is not None else None, damage.reason(), found.note()))
                except Cancelled:
                    return
                except ImportFailure as exc:  # the file took too long to read (_forwarding_pages)
                    put(_Skip(path, ImportOutcome(str(path), "failed", message=exc.message)))
                except Exception as exc:  # noqa: BLE001 - one bad PDF must not stop the others
                    put(_Skip(path, ImportOutcome(str(path), "failed", message=f"{path.name}: extraction failed ({exc})")))
                finally:
                    with MUPDF:
                        doc.close()
        finally:
            put(_DONE)

    def _page_ocr(self, doc, path: Path, existing: Paper | None, lost: list[int], put,
                  text_layer: bool) -> ocr.PageOcr | None:
        """OCR for the scanned pages of `doc` (None where the engine is not installed).

        Pages an interrupted import (or a rebuild) already read are taken from the stored words.
        """
        if not ocr.available():
            return None
        stored = ocr.load_layer(ocr.layer_path(self.library, existing.id)) if existing is not None else {}

        def before_page(pno: int) -> None:
            if self.cancelled() or not put(_Working(path, pno + 1, doc.page_count)):
                raise Cancelled()

        return ocr.PageOcr(doc, skip=lost, stored=stored, before_page=before_page, text_layer=text_layer)

    # -- consumer (calling thread): ids, files, embedding, LanceDB ------------------
    def _consume(self, files, known, q, report: ImportReport, total_pages: int, started: float,
                 vectors: VectorsPhase | None) -> None:
        state: PaperWrite | None = None
        pages_done = 0
        file_no = 0
        self._read = 0  # files done with (added, skipped or failed): "read 3 of 12 papers"
        item = None
        while True:
            if self.cancelled():
                if state is not None:
                    state.abort()
                    self._outcome(report, ImportOutcome(str(state.path), "cancelled", state.paper.id, f"{state.path.name}: cancelled; run the import again to finish it"))
                raise Cancelled("Import cancelled; papers already imported are kept, run it again to finish the rest.")
            # No vectors while the producer reads a page by OCR (its last word): recognition wants
            # both cores, and a paper listed sooner is worth more than vectors sooner (the total
            # time is the same).
            item = self._next_item(q, vectors if not isinstance(item, _Working) else None)
            if item is None:  # cancelled while it waited or embedded: handled above
                continue
            if item is _DONE:
                break
            if isinstance(item, _Skip):
                file_no += 1
                self._read += 1
                pages_done += self._page_counts.get(item.path, 0)
                self._outcome(report, item.outcome)
                self._report(pages_done, total_pages, Step(file_no, len(files), item.path.name), item.outcome.message)
                if state is not None and state.path == item.path:
                    state.fail(item.outcome.message)
                    state = None
                self._claims.release(item.path)
            elif isinstance(item, _Start):
                file_no += 1
                try:
                    begun = self._begin_paper(item, known)
                except OSError as exc:  # the PDF copy or the text file: a full disk fails this file with its reason
                    reason = f"could not write to the library ({exc.strerror or exc})"
                    self._outcome(report, ImportOutcome(str(item.path), "failed", "", f"{item.path.name}: {reason}"))
                    self._claims.release(item.path)
                    pages_done += item.page_count
                    state = None  # this file's pages and chunks, still queued, are dropped
                    self._read += 1
                    continue
                if isinstance(begun, ImportOutcome):  # another writer finished this paper meanwhile
                    self._read += 1
                    self._outcome(report, begun)
                    self._claims.release(item.path)
                    pages_done += item.page_count
                    state = None
                    continue
                state = begun
                self._report(pages_done, total_pages, Step(file_no, len(files), item.path.name, 0, item.page_count), f"{item.page_count} pages")
                if not item.text_layer:
                    reason = pdf_extract.NEEDS_OCR
                    state.fail(reason)
                    self._read += 1
                    self._outcome(report, ImportOutcome(str(item.path), "failed", state.paper.id, f"{item.path.name}: {reason}"))
                    pages_done += item.page_count
                    state = None
                    self._claims.release(item.path)
            elif isinstance(item, _Page):
                if state is not None:
                    state.add_page(item.page)
                    pages_done += 1
                    report.pages += 1
                    self._report(pages_done, total_pages, Step(file_no, len(files), state.path.name, item.page.page, state.paper.page_count),
                                 f"page {item.page.page}/{state.paper.page_count}, {state.n_chunks} chunks")
            elif isinstance(item, _Working):
                index = file_no if state is not None and state.path == item.path else file_no + 1
                self._report(pages_done, total_pages, Step(index, len(files), item.path.name, item.page - 1, item.page_count),
                             f"reading scanned page {item.page}/{item.page_count} (OCR)")
            elif isinstance(item, _Chunks):
                if state is not None:
                    state.add_chunks(item.chunks)
                    report.chunks += len(item.chunks)
            elif isinstance(item, _End):
                self._read += 1
                if state is not None and state.path == item.path:
                    try:
                        if item.ocr_pages:
                            ocr.save_layer(ocr.layer_path(self.library, state.paper.id), item.ocr_pages)
                        state.finish(self.embedder, item.sections, index_text=not self._text_indexed)
                        self._text_indexed = True  # made after the first paper: later rows are searched too
                        added = f"{item.path.name}: added as {state.paper.id} ({state.paper.page_count} pages, {state.n_chunks} chunks)"
                        if item.damage:  # kept, and marked: the lost pages are not searchable
                            state.paper.status_reason = item.damage
                            self.library.upsert_paper(state.paper)
                            added += f"; {item.damage}"
                            self.task.notice(f"{item.path.name}: {item.damage}", "Download the file again and re-import it to get the lost pages.")
                        if item.tables_note:  # imported as before; those tables' rows are not units of their own
                            added += f"; {item.tables_note}"
                            self.task.notice(f"{item.path.name}: {item.tables_note}", "")
                        self._outcome(report, ImportOutcome(str(item.path), "added", state.paper.id, added))
                        if vectors is not None:
                            vectors.add([state.paper], {state.paper.id: state.n_chunks})
                    except ResearchDeskError as exc:
                        state.fail(exc.message)
                        self._outcome(report, ImportOutcome(str(item.path), "failed", state.paper.id, f"{item.path.name}: {exc.message}"))
                    except OSError as exc:
                        reason = f"could not write to the library ({exc.strerror or exc})"
                        state.abort()
                        self._outcome(report, ImportOutcome(str(item.path), "failed", state.paper.id, f"{item.path.name}: {reason}"))
                    state = None
                self._claims.release(item.path)
                self._report(pages_done, total_pages, Step(file_no, len(files), item.path.name), "")

    def _next_item(self, q: queue.Queue, vectors: VectorsPhase | None):
        """The producer's next item, embedding a batch of vectors each time none is ready
        (None: the task was cancelled meanwhile)."""
        while not self.cancelled():
            embedding = vectors is not None and vectors.busy
            try:
                return q.get(block=not embedding, timeout=0.1)
            except queue.Empty:
                pass
            if embedding:
                try:
                    vectors.step(TEXTS_PER_LOOK)
                except Cancelled:
                    return None
        return None

    def _begin_paper(self, item: _Start, known: dict[str, Paper]) -> "PaperWrite | ImportOutcome":
        # `known` is from the start of the run: look again, another writer may have added it since.
        fresh = self.library.find_by_hash(item.content_hash)
        if fresh is not None and fresh.complete:
            return ImportOutcome(str(item.path), "duplicate", fresh.id,
                                 f"{item.path.name}: already in library as {fresh.id} (added by another writer meanwhile)")
        if fresh is not None:
            known[item.content_hash] = fresh
            return self._paper_write(item, known)
        known.pop(item.content_hash, None)
        # A new id must be unique among all writers': chosen, and its first row written, under one lock.
        with self.library.leases.lock(PaperClaims.ID_LOCK, item.path.name):
            return self._paper_write(item, known)

    def _paper_write(self, item: _Start, known: dict[str, Paper]) -> "PaperWrite":
        previous = known.get(item.content_hash)
        entry = self.entries.get(item.path)
        if entry is not None:  # the reference manager's metadata beats the page's (importers/)
            item.meta = entry.merged_meta(item.meta)
        if previous is not None:
            paper_id = previous.id  # resume an incomplete or failed import under the same id
        else:
            paper_id = make_paper_id(item.meta, item.path.name, self.library.paper_ids())
        meta = item.meta
        if previous is not None and previous.source_file:
            # Re-import (resume or rebuild): keep what the user knows the paper by.
            meta = PaperMeta(previous.title, previous.authors, previous.published, previous.abstract,
                             previous.doi, previous.arxiv_id, previous.venue, list(previous.unsure))
        if not item.text_layer and previous is None and entry is None:
            # The text layer is unreadable, so whatever title it yielded is too.
            meta = PaperMeta(title=item.path.stem)
            paper_id = make_paper_id(meta, item.path.name, self.library.paper_ids())
        # The user's corrections (corrections.json, by content hash) beat any reading of the file.
        meta = corrections.apply(meta, corrections.for_paper(self.library.root, item.content_hash))
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
            tags=list(entry.tags) if entry is not None else list(previous.tags) if previous is not None else [],
            collections=list(entry.collections) if entry is not None else list(previous.collections) if previous is not None else [],
            source_key=entry.source_key if entry is not None else previous.source_key if previous is not None else "",
            source_labels=entry.labels() if entry is not None else previous.source_labels if previous is not None else None,
            source_file=previous.source_file if previous is not None and previous.source_file else item.path.name,
            page_count=item.page_count,
            page_labels=item.labels,
            content_hash=item.content_hash,
            imported_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            status=PaperStatus.IMPORTING.value,
            summarized=bool(previous and previous.summarized),
        )
        known[item.content_hash] = paper
        return PaperWrite(self.library, paper, item.path, self._identity, self.embedder.dimension,
                           held=lambda: self._claims.holds(item.content_hash), resuming=previous is not None)

    def _check_embedding_model(self, meta: dict[str, Any]) -> None:
        reason = self.library.index_stale_reason(self.embedding_identity, meta)
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

    def _report(self, done: int, total: int, step: Step, detail: str) -> None:
        read = f"read {self._read} of {plural(step.count, 'paper')}"
        self.task.emit(Progress(done, total, "pages", f"{read} · {detail}" if detail else read, step))

    def _outcome(self, report: ImportReport, outcome: ImportOutcome) -> None:
        """Record a file's outcome and tell the front end (its table shows the paper at once)."""
        report.outcomes.append(outcome)
        self.task.emit(PaperImported(outcome))


class _ReadClock:
    """The producer's time on the current file, less the time it waited for the consumer."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        self.started, self.waited = time.monotonic(), 0.0

    def spent(self) -> float:
        return time.monotonic() - self.started - self.waited


def _forwarding_pages(pages: Iterable[PageText], put, clock: _ReadClock, name: str, page_count: int,
                      read_tables=lambda page: None) -> Iterable[PageText]:
    """Pass each page to the consumer (for text/<id>.md) and to `read_tables` as the chunker reads
    it; stop a file one of whose pages took longer than PAGE_READ_LIMIT_S to read."""
    since = clock.spent()
    for page in pages:
        now = clock.spent()
        if now - since > PAGE_READ_LIMIT_S:
            raise ImportFailure(
                f"{name}: stopped after {PAGE_READ_LIMIT_S:.0f} s on page {page.page} of {page_count} "
                "(a malformed page, or one far too large to read)",
                "Re-save the file (print to PDF) or split it, and import it again.")
        since = now
        put(_Page(page))
        read_tables(page)
        yield page


def _quick_page_count(path: Path) -> int:
    try:
        import pymupdf

        with MUPDF, pymupdf.open(path) as doc:
            return doc.page_count
    except Exception:  # noqa: BLE001 - unreadable files count as no pages for the ETA
        return 0
