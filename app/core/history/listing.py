"""The history's listing: every answer's short columns, newest first, built into records only when read.

Why lazy: at 10,000 answers, turning every row into Python values and a HistoryEntry took ~190 ms
of a ~220 ms cold listing (bench/history.py), while a list shows a screenful at a time. The
columns stay in Arrow, sorted once; an entry is built when the list asks for its row, and
searching filters the same Arrow columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import pyarrow as pa

from .records import HistoryEntry

# HistoryEntry's fields from `number` to `improves`, in its order, as table columns.
ENTRY_COLUMNS = ("number", "asked_at", "query", "mode", "model", "scope", "cited",
                 "claims", "supported", "partial", "unsupported", "seconds", "improves")
_DEFAULTS = {"cited": [], "claims": 0, "supported": 0, "partial": 0, "unsupported": 0, "seconds": 0.0}


class HistoryEntries(Sequence[HistoryEntry]):
    """A read-only list of history entries over Arrow columns (newest first); an entry once built is kept.

    `papers`: the library's paper ids; a cited paper not among them is marked removed."""

    def __init__(self, rows: pa.Table, papers: frozenset[str]) -> None:
        self._columns = [rows.column(name) for name in ENTRY_COLUMNS]
        self._numbers: list[int] | None = None
        self._built: dict[int, HistoryEntry] = {}  # a view asks for one row many times (each column, each role)
        self.rows = rows
        self.papers = papers

    def __len__(self) -> int:
        return self.rows.num_rows

    @overload
    def __getitem__(self, i: int) -> HistoryEntry: ...
    @overload
    def __getitem__(self, i: slice) -> list[HistoryEntry]: ...
    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._entry(k) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._entry(i)

    def __iter__(self) -> Iterator[HistoryEntry]:
        return (self._entry(k) for k in range(len(self)))

    def _entry(self, i: int) -> HistoryEntry:
        entry = self._built.get(i)
        if entry is None:
            entry = self._built[i] = self._build(i)
        return entry

    def _build(self, i: int) -> HistoryEntry:
        values = {name: column[i].as_py() for name, column in zip(ENTRY_COLUMNS, self._columns)}
        for name, default in _DEFAULTS.items():
            if values[name] is None:
                values[name] = default
        return HistoryEntry(**values, removed=[p for p in values["cited"] if p not in self.papers])

    def numbers(self) -> list[int]:
        """Every entry's number, in list order (without building the entries)."""
        if self._numbers is None:
            self._numbers = self.rows.column("number").to_pylist()
        return self._numbers

    def index_of(self, number: int) -> int:
        """Where answer `number` stands in the list, or -1."""
        try:
            return self.numbers().index(number)
        except ValueError:
            return -1

    def with_papers(self, papers: frozenset[str]) -> HistoryEntries:
        """The same entries judged against another paper list (a paper came or went)."""
        return HistoryEntries(self.rows, papers)

    def where(self, mask: pa.Array) -> HistoryEntries:
        """The entries whose `mask` (one boolean per entry, in list order) is true."""
        return HistoryEntries(self.rows.filter(mask), self.papers)
