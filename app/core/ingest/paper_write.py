"""The writes of the text phase for one paper in import: PDF copy, text file, chunks, then its status.

A paper's row says "importing" until `finish`, which makes it "words": its chunks and summary rows
are written with pending (zero) vectors, so it is listed and searchable by its words at once; the
vectors phase (vectors.py) embeds them later. Every commit first checks that this writer still
holds the paper's lease (leases.py), so a writer that stalled and was taken over writes nothing more.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..library.atomic_files import open_temp_text, replace_file
from ..errors import ImportFailure
from ..library.schema import pending_vectors
from ..library.store import CONTENT_CHUNKS, Library, atomic_copy
from ..models.base import EmbeddingModel
from ..records import Chunk, PageText, Paper, PaperStatus
from ..units import page_marker
from .summary_index import index_summary_side

WRITE_BATCH = 256  # chunks per LanceDB commit: few commits keep the table compact


class IdentityStamp:
    """library.json's record of the embedding model that built the index, read once per import run.

    The importer reads it at the start (to refuse a library built with another model) and hands
    it to each PaperWrite, which writes this run's identity before the first paper where it is
    missing (a new library, a rebuild): one read per run, not one per paper.
    """

    def __init__(self, library: Library, identity: str, built_with: str | None) -> None:
        self.library = library
        self.identity = identity
        self.built_with = built_with  # library.json's "embedding" as read at the run's start

    def write(self) -> None:
        if self.built_with != self.identity:
            self.library.set_meta(embedding=self.identity)
            self.built_with = self.identity


class PaperWrite:
    """The text phase of one paper: PDF copy, text file, chunks (vectors pending), then status "words"."""

    def __init__(self, library: Library, paper: Paper, path: Path, stamp: IdentityStamp, dim: int,
                 held: Callable[[], bool] = lambda: True, *, resuming: bool = True) -> None:
        self.library = library
        self.dim = dim  # the embedder's: the pending vectors have the index's width
        self.paper = paper
        self.path = path
        # Whether this writer still holds the paper's lease: checked before each commit, so a
        # writer that stalled past it (and was taken over) writes nothing more.
        self._held = held
        self.lost = False
        self.n_chunks = 0
        self._pending: list[Chunk] = []
        self._pending_vectors: list[np.ndarray] = []
        # A paper resumed (or re-imported) may have rows from an earlier attempt: they are deleted
        # before its first write. A new id has none (its row is written before any chunk, and
        # removing a paper deletes its chunks before its row): two commits fewer per paper.
        self._first_write = True
        self._resuming = resuming
        stamp.write()  # library.json names the embedding model before the first paper is written
        atomic_copy(path, library.pdf_path(paper.id))
        library.upsert_paper(paper)
        # Stream the text file to a temp name; it replaces text/<id>.md at the end.
        text_path = library.text_path(paper.id)
        self._text, self._text_tmp = open_temp_text(text_path)  # named by its writer: see atomic_files
        self._text.write(f"# {paper.title}\n\n")

    def add_page(self, page: PageText) -> None:
        self._text.write(f"{page_marker(page.page, page.label)}\n\n{page.markdown}\n\n")

    def add_chunks(self, chunks: list[Chunk]) -> None:
        for c in chunks:
            c.paper_id = self.paper.id
            c.chunk_index = self.n_chunks
            c.source_type = c.source_type or "content"  # tables.TableChunk: "table", "table_row"…
            self.n_chunks += 1
        vectors = pending_vectors(len(chunks), self.dim)  # vectors.py fills them in
        self._pending.extend(chunks)
        self._pending_vectors.append(vectors)
        if len(self._pending) >= WRITE_BATCH:
            self._flush()

    def _still_held(self) -> bool:
        self.lost = self.lost or not self._held()
        return not self.lost

    def _flush(self) -> None:
        if (not self._pending and not self._first_write) or not self._still_held():
            return
        vectors = np.vstack(self._pending_vectors) if self._pending_vectors else np.zeros((0, 0), np.float32)
        if self._first_write:
            if self._resuming:  # rows from an interrupted earlier attempt go first
                self.library.delete_chunks(CONTENT_CHUNKS, self.paper.id)
            self._first_write = False
        if self._pending:
            self.library.append_chunks(CONTENT_CHUNKS, self._pending, vectors)
        self._pending, self._pending_vectors = [], []

    def finish(self, embedder: EmbeddingModel, sections: list[str], *, index_text: bool = True) -> None:
        """Write the rest and mark the paper "words". `index_text`: make the full-text indexes
        where none exists yet (needed once per library; the caller knows when it has been done)."""
        self._flush()
        self._require_lease()
        self._text.close()
        replace_file(self._text_tmp, self.library.text_path(self.paper.id))  # to the bucket too, if remote
        if self.n_chunks == 0:
            raise ImportFailure("no text could be extracted", "The PDF may be scanned; OCR it first.")
        index_summary_side(self.library, embedder, self.paper, sections=sections, embed=False,
                           delete_first=self._resuming)
        # A new table has no full-text index until one is made; with one, rows added later are
        # searched too (Lance reads unindexed fragments), so one is made once, after the first paper.
        if index_text:
            self.library.ensure_text_indexes()
        self.paper.status = PaperStatus.WORDS.value
        self.paper.status_reason = ""
        self._require_lease()
        self.library.upsert_paper(self.paper)

    def _require_lease(self) -> None:
        if not self._still_held():
            raise ImportFailure("another writer took this paper over after this one stalled past its lease",
                                "Nothing is lost: that writer finishes it.")

    def fail(self, reason: str) -> None:
        self._close_text()
        if not self._still_held():
            return  # the paper is another writer's now: its row is not ours to mark
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
