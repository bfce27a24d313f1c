"""The vectors phase of import: embed the chunks of papers already searchable by their words.

The text phase (pipeline.py, paper_write.py) leaves each paper "words": its content and summary
rows carry pending (zero) vectors. This phase decides:

- **which papers, in what order**: every "words" paper of the library, oldest import first
  (`pending_papers`), this run's and any an earlier run left (cancelled, killed), so the next
  import, or opening the library in the window, resumes them;
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
from dataclasses import dataclass

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


class VectorsPhase:
    """Embeds the pending rows of the library's "words" papers (see the module docstring)."""

    def __init__(self, library: Library, embedder: EmbeddingModel, *, batch_size: int = 16,
                 task: Task | None = None) -> None:
        self.library = library
        self.embedder = embedder
        self.batch_size = max(1, batch_size)
        self.task = task or Task()

    def run(self) -> VectorsReport:
        started = time.monotonic()
        papers = pending_papers(self.library)
        if not papers:
            return VectorsReport(seconds=0.0)
        counts = self.library.chunk_counts(CONTENT_CHUNKS)
        total = sum(counts.get(p.id, 0) for p in papers)
        done = made = embedded = 0
        left: list[str] = []
        keeper = LeaseKeeper(self.library.leases)
        self._report(0, total, Step(1, len(papers), papers[0].source_file or papers[0].id))
        try:
            for number, paper in enumerate(papers, 1):
                step = Step(number, len(papers), paper.source_file or paper.id)
                claim = keeper.claim(paper.content_hash, paper.source_file)
                if not claim.held:  # another writer imports or embeds it: its vectors are that writer's
                    left.append(paper.id)
                    done += counts.get(paper.id, 0)
                    continue
                try:
                    fresh = self.library.get_paper(paper.id)
                    if fresh is None or not fresh.vectors_pending:  # finished or removed meanwhile
                        done += counts.get(paper.id, 0)
                        continue

                    def progress(n: int, _base=done) -> None:
                        self._report(_base + n, total, step)

                    n = self._embed_rows(CONTENT_CHUNKS, fresh, lambda: keeper.holds(fresh.content_hash), progress)
                    embedded += n
                    self._embed_rows(SUMMARY_CHUNKS, fresh, lambda: keeper.holds(fresh.content_hash))
                    done += counts.get(paper.id, 0)
                    if not keeper.holds(fresh.content_hash):
                        left.append(paper.id)  # stalled past the lease: the taker finishes it
                        continue
                    self.library.set_status(fresh.id, PaperStatus.INDEXED.value, fresh.status_reason)
                    made += 1
                    self.task.emit(PaperUpdated(self.library.get_paper(fresh.id)))  # the list shows it indexed
                    self._report(done, total, step)
                finally:
                    keeper.release(paper.content_hash)
        finally:
            keeper.close()
        return VectorsReport(made, embedded, left, time.monotonic() - started)

    def _embed_rows(self, name: str, paper: Paper, held, progress=lambda n: None) -> int:
        """Embed the paper's rows of table `name` whose vector is pending; one commit. Returns their count."""
        table = self.library.chunks_table(name)
        if table is None:
            return 0
        rows = table.to_lance().to_table(filter=f"paper_id = {sql_str(paper.id)}")
        if rows.num_rows == 0:
            return 0
        matrix = vector_matrix(rows)
        waiting = np.flatnonzero(pending_rows(matrix))
        if len(waiting) == 0:
            return 0  # an earlier run committed them and was stopped before the status
        rows = rows.take(pa.array(waiting))
        types = rows.column("source_type").to_pylist()
        texts = [embedding_text(t or "", x or "") for t, x in zip(types, rows.column("text").to_pylist())]
        parts: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            if self.task.token():
                raise Cancelled(
                    f"Stopped while computing vectors; {plural(len(pending_papers(self.library)), 'paper')} "
                    "stay searchable by their words, and their vectors resume at the next import or when the library is opened.")
            parts.append(self.embedder.embed(texts[start:start + self.batch_size]))
            progress(min(start + self.batch_size, len(texts)))
        vectors = np.vstack(parts).astype(np.float32, copy=False)
        dim = rows.schema.field("vector").type.list_size
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), dim)
        rows = rows.set_column(rows.schema.get_field_index("vector"), rows.schema.field("vector"), column)
        if not held():
            return 0  # the lease passed to another writer while this one embedded: it writes them
        table.merge_insert("id").when_matched_update_all().execute(rows)
        return len(texts)

    def _report(self, done: int, total: int, step: Step) -> None:
        self.task.emit(Progress(done, total, UNIT, vectors_line(done, total), step))
