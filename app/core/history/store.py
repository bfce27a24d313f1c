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
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ResearchDeskError
from ..library import Library
from ..records import ResearchResult
from ..scope import Scope
from ..table_reader import snapshot
from .records import HistoryEntry, HistoryRecord

log = logging.getLogger(__name__)

TABLE = "history"
COMPACT_EVERY = 50  # answers between compactions: each add is a small fragment, and thousands slow a scan
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


@dataclass(frozen=True)
class _Listing:
    version: int
    rows: pa.Table  # LIST_COLUMNS, newest first


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
                table.optimize()
            except Exception:  # noqa: BLE001 - compaction is housekeeping; the answer is committed
                log.warning("could not compact the history table", exc_info=True)
        result.extra["history"] = row["number"]
        return self._entry(row, self._paper_ids())

    def delete(self, number: int) -> None:
        self._require(number)
        self._table().delete(f"number = {int(number)}")

    def _next_number(self) -> int:
        numbers = self._rows().column("number")
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
    def entries(self, search: str = "", limit: int | None = None) -> list[HistoryEntry]:
        """Newest first; with `search`, those whose question or answer holds every word of it."""
        rows = self._rows()
        for word in search.split():
            hit = pc.or_(pc.match_substring(rows.column("query"), word, ignore_case=True),
                         pc.match_substring(rows.column("answer"), word, ignore_case=True))
            rows = rows.filter(hit)
        if limit is not None:
            rows = rows.slice(0, limit)
        papers = self._paper_ids()
        return [self._entry(r, papers) for r in rows.drop_columns(["answer"]).to_pylist()]

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
        return self._rows().num_rows

    def _require(self, number: int, *columns: str) -> dict:
        table = self._table()
        found = snapshot(table).dataset.to_table(columns=[*LIST_COLUMNS, *columns], filter=f"number = {int(number)}")
        if found.num_rows == 0:
            raise ResearchDeskError(f"No answer number {number} in the history.", "See `research-desk history`.")
        return found.slice(0, 1).to_pylist()[0]

    def _rows(self) -> pa.Table:
        """The listing columns of every answer, newest first, kept until the table changes."""
        table = self._table()
        snap = snapshot(table)
        with self._lock:
            kept = self._listing
            if kept is None or kept.version != snap.version:
                rows = snap.dataset.to_table(columns=LIST_COLUMNS)
                rows = rows.take(pc.sort_indices(rows, sort_keys=[("number", "descending")]))
                kept = self._listing = _Listing(snap.version, rows)
            return kept.rows

    def _paper_ids(self) -> frozenset[str]:
        return frozenset(self.library.papers_by_id())

    @staticmethod
    def _entry(row: dict, papers: frozenset[str]) -> HistoryEntry:
        cited = list(row.get("cited") or [])
        return HistoryEntry(
            number=int(row["number"]), asked_at=row["asked_at"], query=row["query"], mode=row["mode"], model=row["model"],
            scope=row["scope"], cited=cited, **{k: int(row.get(k) or 0) for k in _COUNTS},
            seconds=float(row.get("seconds") or 0.0), improves=row.get("improves"),
            removed=[pid for pid in cited if pid not in papers],
        )


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
