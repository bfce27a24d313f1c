"""The library: human-readable files beside an embedded LanceDB index.

The folder's layout is in docs/library.md (pdfs/, text/, summaries/, notes/, results/,
index/ with the LanceDB tables, library.json, state.json, leases/).

Every file is written to a temporary name and renamed into place, and a
paper's row says "importing" until all its parts are written, so a crash at
any point leaves either the old state or a paper visibly incomplete.
Several processes may write one library at once (docs/library.md, "Several writers").
"""

from __future__ import annotations

import errno
import json
import logging
import tempfile
import threading
from dataclasses import dataclass, fields
from datetime import timedelta
from pathlib import Path
from typing import Any, Iterable

import lancedb
import pyarrow as pa
from lancedb.index import FTS, Bitmap, HnswSq

from . import table_creation
from .atomic_files import remove_abandoned_temps, remove_file
from .atomic_files import (  # noqa: F401 - re-exported: callers write through the library
    atomic_copy,
    atomic_write_text,
)
from ..errors import LibraryError
from .layout import LibraryLayout
from .leases import LeaseStore
from .schema import (
    CONTENT_CHUNKS,
    PAPERS,
    SCHEMA_VERSION,
    SUMMARY_CHUNKS,
    chunk_row,
    chunks_schema,
    migrate_content_chunks,
    migrate_papers,
    paper_from_row,
    papers_schema,
)
from ..records import Chunk, Paper
from .sql_filter import in_list, sql_str
from .table_reader import latest_version

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _PaperList:
    """The papers table at one version, as searches use it."""

    version: int
    papers: tuple[Paper, ...]  # sorted by id
    by_id: dict[str, Paper]
    complete: frozenset[str]


class Library(LibraryLayout):
    """One library folder and its LanceDB index."""

    # Below this many rows searches are exact, from the vectors held in memory (≤ 30 MB
    # at 384 dimensions; see table_reader); above it an approximate index keeps stage
    # latency sub-linear (see bench/scale.py).
    VECTOR_INDEX_MIN_ROWS = 20_000

    def __init__(self, root: str | Path, *, create: bool = True, endpoint: str = "") -> None:
        # A URI (s3://bucket/prefix) gets a local cache folder as its root (storage.py).
        LibraryLayout.__init__(self, root, endpoint=endpoint)
        try:
            if create:
                for sub in ("pdfs", "text", "summaries", "notes", "results", "index"):
                    (self.root / sub).mkdir(parents=True, exist_ok=True)
                # A probe of its own: writers opening the library at once removed each other's.
                with tempfile.NamedTemporaryFile(dir=self.root, prefix=".write-test-") as probe:
                    probe.write(b"ok")
                    probe.flush()  # a full disk fails here
            elif not self.root.is_dir():
                raise LibraryError(f"No library at {self.root}.")
        except PermissionError as exc:
            raise LibraryError(
                f"The library folder {self.root} is not writable ({exc.strerror}).",
                "Choose another library folder with --library or in Settings, or fix its permissions.",
            ) from exc
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or not self.root.is_dir():
                raise LibraryError(
                    f"The library folder {self.root} cannot be used: {exc.strerror or exc}.",
                    "Check that the disk is mounted and has free space, or choose another folder.",
                ) from exc
            # A full disk still reads: list, search, validate and export work, and each write
            # fails with its own message (bench/faults.py, "disk"). Refusing to open hid the papers.
            log.warning("%s: the disk is full (%s); reading works, writing will fail until space is freed",
                        self.root, exc.strerror)
        if self.mirror is not None:  # the bucket answers (and takes writes); cached small files refreshed
            self.mirror.open(create)
        self._clean_temp_files()
        # Table handles are opened once and kept (opening one costs milliseconds a query).
        # A zero consistency interval makes every read check for a newer table version,
        # so a kept handle still sees what another process (a CLI import) wrote.
        self.db = lancedb.connect(self.index_uri, storage_options=self.index_options,
                                  read_consistency_interval=timedelta(0))
        self._tables: dict[str, Any] = {}
        self._papers_cache: _PaperList | None = None
        self._papers_migrated = self._content_migrated = False
        self._lock = threading.Lock()

    def _clean_temp_files(self) -> None:
        """Temp files and leases of writers gone (a crash mid-write); never a live writer's."""
        for sub in ("pdfs", "text", "summaries", "notes", "results", "leases"):
            remove_abandoned_temps(self.root / sub)
        self.leases.sweep()

    @property
    def leases(self) -> LeaseStore:
        """Who is importing which paper (leases.py), for every writer of this library."""
        return LeaseStore(self.root / "leases")

    # -- library.json: which embedding model built the index -----------------
    def _meta_file(self) -> Path:
        return self.root / "library.json"

    def meta(self) -> dict[str, Any]:
        try:
            return json.loads(self._meta_file().read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}

    def set_meta(self, **values: Any) -> None:
        meta = self.meta()
        meta.update(values)
        meta["schema_version"] = SCHEMA_VERSION
        atomic_write_text(self._meta_file(), json.dumps(meta, indent=2))

    def index_stale_reason(self, embedding_identity: str, meta: dict[str, Any] | None = None) -> str:
        """Non-empty when the index was built with another embedding model (`meta`: library.json, if read)."""
        built_with = (self.meta() if meta is None else meta).get("embedding")
        if built_with and built_with != embedding_identity:
            return (
                f"The index was built with {built_with} but the embedding model is now "
                f"{embedding_identity}; rebuild the index."
            )
        return ""

    # -- tables --------------------------------------------------------------
    def _table_names(self) -> set[str]:
        names: set[str] = set()
        token = None
        while True:  # list_tables pages its answer
            page = self.db.list_tables(page_token=token) if token else self.db.list_tables()
            names.update(page.tables)
            token = page.page_token
            if not token:
                return names

    def _open(self, name: str, schema: pa.Schema | None = None):
        """The kept handle of table `name`; None if it does not exist and no schema is given."""
        with self._lock:
            table = self._tables.get(name)
            if table is not None:
                return table
            if name in self._table_names():
                table = self.db.open_table(name)
            elif schema is not None:  # under a lock: a create racing another's erased its rows
                table = table_creation.create_once(self.db, name, schema, self.root, self.mirror, self._table_names)
            else:
                return None
            self._tables[name] = table
            return table

    open_table = _open  # for the library's other stores (history/store.py): created once, handle kept

    def drop_table(self, name: str) -> None:
        with self._lock:
            self._tables.pop(name, None)
            if name in self._table_names():
                self.db.drop_table(name)

    def papers_table(self):
        table = self._open(PAPERS, papers_schema())
        if not self._papers_migrated:
            migrate_papers(table)
            self._papers_migrated = True
        return table

    def chunks_table(self, name: str, dim: int | None = None):
        """Open a chunk table; create it with vectors of `dim` if missing."""
        schema = None if dim is None else chunks_schema(dim, content=name == CONTENT_CHUNKS)
        table = self._open(name, schema)
        if table is not None and name == CONTENT_CHUNKS and not self._content_migrated:
            migrate_content_chunks(table)  # the table columns, for a library indexed before them
            self._content_migrated = True
        return table

    def vector_dim(self) -> int | None:
        for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
            table = self.chunks_table(name)
            if table is not None:
                return table.schema.field("vector").type.list_size
        return None

    # -- papers ----------------------------------------------------------------
    def list_papers(self) -> list[Paper]:
        """All papers, by id. The records are shared with a cache: treat them as
        read-only (dataclasses.replace to change one)."""
        return list(self._paper_list().papers)

    def papers_by_id(self) -> dict[str, Paper]:
        """All papers, keyed by id (a fresh dict over the shared records)."""
        return dict(self._paper_list().by_id)

    def complete_paper_ids(self) -> frozenset[str]:
        """Ids of the papers whose import finished (the ones searches may return)."""
        return self._paper_list().complete

    def _paper_list(self) -> _PaperList:
        # Every question needs the paper list, so it is kept per table version: re-reading
        # thousands of rows into records took longer than the searches, and even walking
        # 3,333 kept records for their status cost 3 ms a question (bench/scale.py, 100k).
        table = self.papers_table()
        version = latest_version(table)
        cached = self._papers_cache
        if cached is None or cached.version != version:
            papers = tuple(sorted((paper_from_row(r) for r in table.to_arrow().to_pylist()), key=lambda p: p.id))
            cached = self._papers_cache = _PaperList(
                version, papers, {p.id: p for p in papers}, frozenset(p.id for p in papers if p.complete))
        return cached

    def get_paper(self, paper_id: str) -> Paper | None:
        rows = (
            self.papers_table().search().where(f"id = {sql_str(paper_id)}").limit(1).to_list()
        )
        return paper_from_row(rows[0]) if rows else None

    def find_by_hash(self, content_hash: str) -> Paper | None:
        rows = (
            self.papers_table()
            .search()
            .where(f"content_hash = {sql_str(content_hash)}")
            .limit(1)
            .to_list()
        )
        return paper_from_row(rows[0]) if rows else None

    def paper_ids(self) -> set[str]:
        table = self.papers_table()
        return set(table.to_arrow().column("id").to_pylist())

    def upsert_paper(self, paper: Paper) -> None:
        self.upsert_papers([paper])

    def upsert_papers(self, papers: list[Paper]) -> None:
        """Insert or update paper rows in one table version (one merge, whatever the count)."""
        if not papers:
            return
        rows = [{f.name: getattr(paper, f.name) for f in fields(Paper)} for paper in papers]
        (
            self.papers_table()
            .merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(pa.Table.from_pylist(rows, schema=papers_schema()))
        )

    def set_status(self, paper_id: str, status: str, reason: str = "", **extra: Any) -> None:
        paper = self.get_paper(paper_id)
        if paper is None:
            return
        paper.status = status
        paper.status_reason = reason
        for key, value in extra.items():
            setattr(paper, key, value)
        self.upsert_paper(paper)

    # -- chunks ----------------------------------------------------------------
    def replace_chunks(
        self,
        name: str,
        paper_id: str,
        chunks: list[Chunk],
        vectors,
        *,
        source_types: Iterable[str] | None = None,
        delete_first: bool = True,
    ) -> None:
        """Write a paper's chunks (of the given source types) in one commit after a delete."""
        dim = int(vectors.shape[1]) if len(chunks) else None
        table = self.chunks_table(name, dim)
        if table is None:
            return
        if delete_first:
            where = f"paper_id = {sql_str(paper_id)}"
            if source_types is not None:
                where += " AND " + in_list("source_type", source_types)
            table.delete(where)
        if chunks:
            self.append_chunks(name, chunks, vectors)

    def append_chunks(self, name: str, chunks: list[Chunk], vectors) -> None:
        table = self.chunks_table(name, int(vectors.shape[1]))
        content = name == CONTENT_CHUNKS
        rows = [chunk_row(chunk, vector, content=content) for chunk, vector in zip(chunks, vectors)]
        table.add(pa.Table.from_pylist(rows, schema=table.schema))

    def delete_chunks(self, name: str, paper_id: str) -> None:
        table = self.chunks_table(name)
        if table is not None:
            table.delete(f"paper_id = {sql_str(paper_id)}")

    def count_chunks(self, name: str, paper_id: str | None = None) -> int:
        table = self.chunks_table(name)
        if table is None:
            return 0
        return table.count_rows(f"paper_id = {sql_str(paper_id)}" if paper_id else None)

    def chunk_counts(self, name: str) -> dict[str, int]:
        table = self.chunks_table(name)
        if table is None:
            return {}
        counts: dict[str, int] = {}
        for pid in table.to_arrow().column("paper_id").to_pylist():
            counts[pid] = counts.get(pid, 0) + 1
        return counts

    def ensure_text_indexes(self) -> None:
        """A full-text index on each chunk table that has rows and none yet (rows added after it
        are searched as well, unindexed, until `finish_writes` adds them to it). A failure is
        logged loudly: hybrid search silently losing its keyword leg would be hard to notice."""
        for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
            table = self.chunks_table(name)
            if table is None or table.count_rows() == 0 or any(tuple(i.columns) == ("text",) for i in table.list_indices()):
                continue
            try:
                table.create_index("text", config=FTS(), replace=True)
            except Exception:  # noqa: BLE001 - any Lance error: logged; the next finish_writes tries again
                log.warning("could not create the full-text index of %s; search falls back to vectors only", name,
                            exc_info=True)

    def finish_writes(self) -> None:
        """After a batch of imports: compact the many small files of one commit per paper, and add
        the new rows to the indexes (`optimize`), BM25 included: rebuilding it cost every import
        into a 10,000-paper library ~64 CPU-s and 0.7 GB (docs/lab/2026-12-07-library-scale.md)."""
        self.ensure_text_indexes()  # only where there is none yet
        for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
            table = self.chunks_table(name)
            if table is None or table.count_rows() == 0:
                continue
            # None of these steps is fatal: the rows are committed already, and search works
            # (vector only, or on more fragments, unindexed) without them.
            self._ensure_indices(table)
            try:
                table.optimize()
            except Exception:  # noqa: BLE001 - compaction is housekeeping; logged, the import stands
                log.warning("could not compact the %s table", name, exc_info=True)
        try:
            self.papers_table().optimize()
        except Exception:  # noqa: BLE001 - compaction is housekeeping; logged, the import stands
            log.warning("could not compact the papers table", exc_info=True)

    def _ensure_indices(self, table) -> None:
        """A bitmap index on paper_id (the stage-2 prefilter) and, for big tables, a vector index."""
        existing = {tuple(i.columns): i.index_type for i in table.list_indices()}
        try:
            if ("paper_id",) not in existing:
                table.create_index("paper_id", config=Bitmap(), replace=True)
            rows = table.count_rows()
            if ("vector",) not in existing and rows >= self.VECTOR_INDEX_MIN_ROWS:
                table.create_index("vector", config=HnswSq(distance_type="cosine", num_partitions=max(1, int(rows**0.5) // 4)))
        except Exception:  # noqa: BLE001 - indices are optimisations; search works without them, so logged only
            log.warning("could not create the paper_id/vector indices of %s; filters and search run unindexed",
                        getattr(table, "name", "a chunk table"), exc_info=True)

    # -- removal ---------------------------------------------------------------
    def remove_paper(self, paper_id: str) -> None:
        """Remove a paper's rows first (so it vanishes from search), then its files."""
        for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
            self.delete_chunks(name, paper_id)
        self.papers_table().delete(f"id = {sql_str(paper_id)}")
        for path in self.paper_file_paths(paper_id):  # PDF, text, OCR words, summary, notes
            remove_file(path)  # from the bucket too, for a library on object storage

    # -- state file (last result) --------------------------------------------------
    def state_path(self) -> Path:
        return self.root / "state.json"

    def save_state(self, state: dict[str, Any]) -> None:
        atomic_write_text(self.state_path(), json.dumps(state, indent=2, default=str))

    def load_state(self) -> dict[str, Any]:
        try:
            return json.loads(self.state_path().read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
