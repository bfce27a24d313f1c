"""The vectors phase of import: embed the chunks of papers already searchable by their words.

The text phase (pipeline.py, paper_write.py) leaves each paper "words": its content and summary
rows carry pending (zero) vectors. This phase decides:

- **which papers, in what order**: the papers handed to it (`add`: the importer hands each paper
  over as soon as its text is written) and every "words" paper of the library (`add_pending`),
  this run's and any an earlier run left (cancelled, killed), so the next import, or opening the
  library in the window, resumes them; oldest import first among those waiting together;
- **when**: a batch at a time (`step`). The importer calls `step` only while the reading has
  nothing for it to write, on the same thread as its own writes, so the text rows' appends and
  the vectors' merges never race on a table and a paper read is searchable by its words first;
  `run` embeds everything waiting, for the window and the end of an import;
- **who embeds a paper**: the holder of its import lease (its content hash, leases.py), the same
  lease the text phase takes, so two processes never embed, nor import and embed, one paper;
- **how it is written**: only rows whose vector is still pending are embedded; a paper's content
  rows get their vectors in one commit, merged by chunk id (a rerun rewrites the same rows: no
  duplicate, no lost chunk), then its summary rows, and only then does it become "indexed". A
  kill at any point leaves it "words" with some rows done, and the next run does the rest.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np
import pyarrow as pa

from ..errors import Cancelled
from ..events import VECTORS_UNIT as UNIT, PaperUpdated, Progress, Step, Task
from ..library.leases import LeaseKeeper
from ..library.schema import CONTENT_CHUNKS, SUMMARY_CHUNKS
from ..library.sql_filter import sql_str
from ..library.store import Library
from ..library.table_reader import pending_rows, vector_matrix
from ..models.base import EmbeddingModel
from ..pdf.tables.chunks import embedding_text
from ..records import Paper, PaperStatus
from ..text.wording import plural

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VectorsReport:
    """What one vectors phase did."""

    papers: int = 0  # papers made "indexed"
    chunks: int = 0  # content rows embedded
    left: list[str] | None = None  # "words" papers left to another writer (its lease), by id
    seconds: float = 0.0


def pending_papers(library: Library) -> list[Paper]:
    """The papers waiting for their vectors, oldest import first."""
    return sorted((p for p in library.list_papers() if p.vectors_pending), key=lambda p: (p.imported_at, p.id))


def vectors_line(done: int, total: int) -> str:
    return f"vectors: {done:,} of {total:,} {UNIT}"


@dataclass
class _Pending:
    """A table's rows of one paper whose vector is pending, and the vectors made so far."""

    rows: pa.Table
    texts: list[str]
    parts: list[np.ndarray] = field(default_factory=list)

    @property
    def embedded(self) -> int:
        return sum(len(p) for p in self.parts)

    @property
    def complete(self) -> bool:
        return self.embedded >= len(self.texts)

    def embed_next(self, embedder: EmbeddingModel, count: int) -> None:
        """Embed the next `count` texts not embedded yet: the one place this phase embeds, for
        the content rows (a batch per step) and the summary rows (all at the paper's end) alike."""
        start = self.embedded
        self.parts.append(embedder.embed(self.texts[start:start + count]))


@dataclass
class _Job:
    """The paper being embedded (its lease held): its content rows, embedded a batch per step."""

    paper: Paper
    step: Step
    base: int  # passages counted done before this paper
    content: _Pending | None


class VectorsPhase:
    """Embeds the pending rows of "words" papers, a batch per `step` (see the module docstring)."""

    def __init__(self, library: Library, embedder: EmbeddingModel, *, batch_size: int = 16,
                 task: Task | None = None) -> None:
        self.library = library
        self.embedder = embedder
        self.batch_size = max(1, batch_size)
        self.task = task or Task()
        self._waiting: deque[Paper] = deque()
        self._seen: set[str] = set()  # every paper id ever added: each is taken once
        self._counts: dict[str, int] = {}  # paper id → its content rows (the progress's total)
        self._job: _Job | None = None
        self._keeper: LeaseKeeper | None = None
        self._started: float | None = None
        self._number = self._done = self._total = self._made = self._embedded = 0
        self._left: list[str] = []

    # -- what to embed --------------------------------------------------------------
    def add(self, papers: Iterable[Paper], counts: Mapping[str, int]) -> None:
        """Queue `papers` (their content row counts in `counts`), after those queued before."""
        for paper in papers:
            if paper.id in self._seen:
                continue
            self._seen.add(paper.id)
            self._waiting.append(paper)
            self._counts[paper.id] = counts.get(paper.id, 0)
            self._total += self._counts[paper.id]

    def add_pending(self) -> None:
        """Queue every "words" paper of the library not queued yet, oldest first."""
        papers = [p for p in pending_papers(self.library) if p.id not in self._seen]
        if papers:
            self.add(papers, self.library.chunk_counts(CONTENT_CHUNKS))

    @property
    def busy(self) -> bool:
        """Whether a paper is being embedded or waits for it."""
        return self._job is not None or bool(self._waiting)

    # -- doing it -------------------------------------------------------------------
    def run(self) -> VectorsReport:
        """Embed every paper queued and every "words" paper of the library; then release the leases."""
        try:
            self.add_pending()
            while self.busy:
                self.step()
        finally:
            self.close()
        return self.report()

    def step(self, texts: int = 0) -> None:
        """One batch of the current paper's content rows (`texts` of them; 0: `batch_size`); or,
        once they are all embedded, its merge, its summary rows and its status. Raises Cancelled
        when the task is cancelled."""
        if self._started is None:
            self._started = time.monotonic()
            self._keeper = LeaseKeeper(self.library.leases)
            if self._waiting:
                first = self._waiting[0]
                self._report(0, Step(1, self._number + len(self._waiting), first.source_file or first.id))
        if self.task.token():
            raise Cancelled(
                f"Stopped while computing vectors; {plural(len(pending_papers(self.library)), 'paper')} "
                "stay searchable by their words, and their vectors resume at the next import or when the library is opened.")
        if self._job is None:
            self._job = self._next_job()
            return
        job = self._job
        if job.content is not None and not job.content.complete:
            job.content.embed_next(self.embedder, texts or self.batch_size)
            self._report(job.base + job.content.embedded, job.step)
            return
        try:
            self._finish(job)
        finally:
            self._job = None
            self._keeper.release(job.paper.content_hash)

    def close(self) -> None:
        """Release the lease of a paper left half embedded (a cancel) and stop the heartbeat."""
        if self._keeper is not None:
            if self._job is not None:
                self._keeper.release(self._job.paper.content_hash)
                self._job = None
            self._keeper.close()
            self._keeper = None

    def report(self) -> VectorsReport:
        seconds = time.monotonic() - self._started if self._started is not None else 0.0
        return VectorsReport(self._made, self._embedded, list(self._left), seconds)

    def _next_job(self) -> _Job | None:
        """Claim the next waiting paper and read its pending content rows (None: none to claim)."""
        while self._waiting:
            paper = self._waiting.popleft()
            self._number += 1
            step = Step(self._number, self._number + len(self._waiting), paper.source_file or paper.id)
            claim = self._keeper.claim(paper.content_hash, paper.source_file)
            if not claim.held:  # another writer imports or embeds it: its vectors are that writer's
                self._left.append(paper.id)
                self._done += self._counts.get(paper.id, 0)
                continue
            fresh = self.library.get_paper(paper.id)
            if fresh is None or not fresh.vectors_pending:  # finished or removed meanwhile
                self._keeper.release(paper.content_hash)
                self._done += self._counts.get(paper.id, 0)
                continue
            content = self._pending(CONTENT_CHUNKS, fresh)
            # Rows an earlier run embedded count as done from the start.
            base = self._done + self._counts.get(paper.id, 0) - (len(content.texts) if content else 0)
            return _Job(fresh, step, base, content)
        return None

    def _finish(self, job: _Job) -> None:
        paper = job.paper

        def held() -> bool:
            return self._keeper.holds(paper.content_hash)

        if job.content is not None:
            self._embedded += self._merge(CONTENT_CHUNKS, job.content, held)
        summary = self._pending(SUMMARY_CHUNKS, paper)
        if summary is not None:  # a few rows (profile, headings): embedded at once, not a step each
            while not summary.complete:
                summary.embed_next(self.embedder, self.batch_size)
            self._merge(SUMMARY_CHUNKS, summary, held)
        self._done += self._counts.get(paper.id, 0)
        if not held():
            self._left.append(paper.id)  # stalled past the lease: the taker finishes it
            return
        self.library.set_status(paper.id, PaperStatus.INDEXED.value, paper.status_reason)
        self._made += 1
        self.task.emit(PaperUpdated(self.library.get_paper(paper.id)))  # the list shows it indexed
        self._report(self._done, job.step)

    def _pending(self, name: str, paper: Paper) -> _Pending | None:
        """The paper's rows of table `name` whose vector is pending (None: there are none)."""
        table = self.library.chunks_table(name)
        if table is None:
            return None
        rows = table.to_lance().to_table(filter=f"paper_id = {sql_str(paper.id)}")
        if rows.num_rows == 0:
            return None
        waiting = np.flatnonzero(pending_rows(vector_matrix(rows)))
        if len(waiting) == 0:
            return None  # an earlier run committed them and was stopped before the status
        rows = rows.take(pa.array(waiting))
        types = rows.column("source_type").to_pylist()
        texts = [embedding_text(t or "", x or "") for t, x in zip(types, rows.column("text").to_pylist())]
        return _Pending(rows, texts)

    def _merge(self, name: str, pending: _Pending, held) -> int:
        """Write the vectors into their rows: one commit, merged by id. Returns the rows written."""
        if not held():
            return 0  # the lease passed to another writer while this one embedded: it writes them
        rows = pending.rows
        vectors = np.vstack(pending.parts).astype(np.float32, copy=False)
        dim = rows.schema.field("vector").type.list_size
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), dim)
        rows = rows.set_column(rows.schema.get_field_index("vector"), rows.schema.field("vector"), column)
        self.library.chunks_table(name).merge_insert("id").when_matched_update_all().execute(rows)
        return len(pending.texts)

    def _report(self, done: int, step: Step) -> None:
        self.task.emit(Progress(done, self._total, UNIT, vectors_line(done, self._total), step))
