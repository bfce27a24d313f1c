"""The history table: one row per answer, in the library's LanceDB index.

Why a LanceDB table rather than files under results/: it lives where the index lives, so a
library on object storage shares its history with every machine that opens it (LanceDB commits
on the bucket itself, with conditional puts), and each add or delete is one commit: a crash
leaves the table at the version before or after it, never half a row, and no other file of the
library is touched. A failed write loses that one record, never the library (desk/history.py
reports it and keeps the answer).

Listing reads only the short columns; the whole result (evidence, claims, verdicts, citations)
is a JSON column read for one row when an answer is reopened. The listing is kept per table
version, as the library keeps its paper list, so a search re-reads nothing until the history
changes (bench/history.py: 10,000 answers).
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ResearchDeskError
from ..library.store import Library
from ..records import ResearchResult
from ..scope import Scope
from ..library.table_reader import snapshot
from .listing import ENTRY_COLUMNS, HistoryEntries
from .records import HistoryEntry, HistoryRecord

log = logging.getLogger(__name__)

TABLE = "history"
COMPACT_EVERY = 50  # answers between compactions: each add is a small fragment, and thousands slow a scan
# Compaction merges fragments below this many rows only: the history is then a few dozen fragments, and
# one compaction rewrites at most this many answers (~30 KB each). LanceDB's optimize() merges towards
# a million rows, so it rewrote the whole table every time (bench/history.py: 8 s at 10,000 answers).
FRAGMENT_ROWS = 256
KEEP_VERSIONS = timedelta(days=7)  # as LanceDB's optimize(): older versions' files are deleted
# Keys of result.extra that describe the record itself, set when it is read back, never stored.
RECORD_KEYS = ("history", "removed_papers")
_COUNTS = ("claims", "supported", "partial", "unsupported")


def history_schema() -> pa.Schema:
    return pa.schema([
        pa.field("key", pa.string()),  # a uuid: tells two writers' rows apart (see `_settle`)
        pa.field("number", pa.int64()),
        pa.field("asked_at", pa.string()),
        pa.field("query", pa.string()),
        pa.field("answer", pa.string()),  # searched with the query
        pa.field("mode", pa.string()),
        pa.field("model", pa.string()),
        pa.field("scope", pa.string()),
        pa.field("cited", pa.list_(pa.string())),
        *(pa.field(name, pa.int32()) for name in _COUNTS),
        pa.field("seconds", pa.float64()),
        pa.field("improves", pa.int64()),
        pa.field("result", pa.string()),  # ResearchResult.to_dict() as JSON
    ])


LIST_COLUMNS = [f.name for f in history_schema() if f.name not in ("key", "result")]


@dataclass
class _Listing:
    version: int
    entries: HistoryEntries  # newest first, judged against the library's papers of the last read
    order: pa.Array  # the table's row numbers, newest first
    dataset: Any  # the table at `version`, for the text read on the first search
    text: pa.Table | None = None  # query and answer, newest first


class HistoryStore:
    """The answers asked of one library."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self._listing: _Listing | None = None
        self._lock = threading.Lock()

    def _table(self):
        return self.library.open_table(TABLE, history_schema())

    # -- writing -------------------------------------------------------------------------
    def add(self, result: ResearchResult, model: str) -> HistoryEntry:
        """Keep `result` (its number is set in result.extra["history"]); one commit."""
        table = self._table()
        row = _row(result, model, self._next_number())
        table.add(pa.Table.from_pylist([row], schema=history_schema()))
        row["number"] = self._settle(table, row)
        if row["number"] % COMPACT_EVERY == 0:
            try:
                dataset = snapshot(table).dataset
                dataset.optimize.compact_files(target_rows_per_fragment=FRAGMENT_ROWS)
                dataset.cleanup_old_versions(older_than=KEEP_VERSIONS)
            except Exception:  # noqa: BLE001 - compaction is housekeeping; the answer is committed
                log.warning("could not compact the history table", exc_info=True)
        result.extra["history"] = row["number"]
        return self._entry(row, self._paper_ids())

    def delete(self, number: int) -> None:
        self._require(number)
        self._table().delete(f"number = {int(number)}")

    def _next_number(self) -> int:
        numbers = snapshot(self._table()).dataset.to_table(columns=["number"]).column("number")  # not the listing: it waits for a read
        return (pc.max(numbers).as_py() or 0) + 1 if len(numbers) else 1

    def _settle(self, table, row: dict) -> int:
        """Two writers (the window and a CLI run) that added at the same moment may have taken
        the same number: the row with the larger key takes the next free one, until unique."""
        for _ in range(5):
            same = snapshot(table).dataset.to_table(columns=["key"], filter=f"number = {row['number']}").column("key").to_pylist()
            if len(same) < 2 or row["key"] == min(same):
                return row["number"]
            table.delete(f"key = '{row['key']}'")
            row["number"] = self._next_number()
            table.add(pa.Table.from_pylist([row], schema=history_schema()))
        return row["number"]

    # -- reading -------------------------------------------------------------------------
    def entries(self, search: str = "", limit: int | None = None) -> HistoryEntries | list[HistoryEntry]:
        """Newest first; with `search`, those whose question or answer holds every word of it.

        Without a limit, a read-only sequence whose entries are built as they are read."""
        listed = self._listed()
        entries = listed.entries
        if search.split():
            if listed.text is None:  # listing alone never reads the answers' text (~1 KB each)
                listed.text = listed.dataset.to_table(columns=["query", "answer"]).take(listed.order)
            hit = None
            for word in search.split():
                found = pc.or_(pc.match_substring(listed.text.column("query"), word, ignore_case=True),
                               pc.match_substring(listed.text.column("answer"), word, ignore_case=True))
                hit = found if hit is None else pc.and_(hit, found)
            entries = entries.where(hit)
        return entries[:limit] if limit is not None else entries

    def get(self, number: int) -> HistoryRecord:
        """One answer as it was, its cited papers that left the library since marked."""
        found = self._require(number, "result")
        result = ResearchResult.from_dict(json.loads(found["result"]))
        entry = self._entry(found, self._paper_ids())
        result.extra["history"] = entry.number
        if entry.removed:
            result.extra["removed_papers"] = list(entry.removed)
        return HistoryRecord(entry, result)

    def count(self) -> int:
        return len(self._listed().entries)

    def _require(self, number: int, *columns: str) -> dict:
        table = self._table()
        found = snapshot(table).dataset.to_table(columns=[*LIST_COLUMNS, *columns], filter=f"number = {int(number)}")
        if found.num_rows == 0:
            raise ResearchDeskError(f"No answer number {number} in the history.", "See `research-desk history`.")
        return found.slice(0, 1).to_pylist()[0]

    def _listed(self) -> _Listing:
        """Every answer's listing columns, newest first, kept until the table or the papers change."""
        snap = snapshot(self._table())
        papers = self._paper_ids()
        with self._lock:
            kept = self._listing
            if kept is not None and kept.version == snap.version and kept.entries.papers != papers:  # a paper came or went
                kept.entries = kept.entries.with_papers(papers)
            if kept is None or kept.version != snap.version:
                kept = self._listing = _read_listing(snap, papers)
            return kept

    def _paper_ids(self) -> frozenset[str]:
        return frozenset(self.library.papers_by_id())

    @staticmethod
    def _entry(row: dict, papers: frozenset[str]) -> HistoryEntry:
        """`papers`: the library's paper ids (a cited paper not among them is marked removed)."""
        cited = list(row.get("cited") or [])
        return HistoryEntry(
            number=int(row["number"]), asked_at=row["asked_at"], query=row["query"], mode=row["mode"], model=row["model"],
            scope=row["scope"], cited=cited, **{k: int(row.get(k) or 0) for k in _COUNTS},
            seconds=float(row.get("seconds") or 0.0), improves=row.get("improves"),
            removed=[pid for pid in cited if pid not in papers],
        )


def _read_listing(snap, papers: frozenset[str]) -> _Listing:
    """The short columns in Arrow, newest first; entries are built as the list reads them (listing.py)."""
    rows = snap.dataset.to_table(columns=list(ENTRY_COLUMNS))
    order = pc.sort_indices(rows, [("number", "descending")])
    return _Listing(snap.version, HistoryEntries(rows.take(order).combine_chunks(), papers), order, snap.dataset)


def _row(result: ResearchResult, model: str, number: int) -> dict:
    data = result.to_dict()
    for key in RECORD_KEYS:
        data.pop(key, None)
    counts = result.claim_counts()
    previous = result.extra.get("history") if result.feedback else None  # improve carries the old number
    return {
        "key": uuid.uuid4().hex, "number": number,
        "asked_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "query": result.query, "answer": result.answer, "mode": result.mode, "model": model,
        "scope": Scope.from_dict(result.extra.get("scope")).describe(),
        "cited": [r.paper_id for r in result.references],
        **{k: counts[k] for k in _COUNTS},
        "seconds": float(result.timings.get("total_s") or 0.0),
        "improves": int(previous) if previous else None,
        "result": json.dumps(data, default=str),
    }
