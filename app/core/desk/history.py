"""Desk operations on the history of answers (issue 53): list, search, reopen, delete, record."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..errors import ResearchDeskError
from ..history import HistoryEntry, HistoryRecord, HistoryStore
from ..records import ResearchResult
from .papers import PaperOperations

log = logging.getLogger(__name__)


class HistoryOperations(PaperOperations):
    def _history(self) -> HistoryStore:
        # One store per library object: a new library (settings changed) gets its own.
        store = getattr(self, "_history_store", None)
        if store is None or store.library is not self.library:
            store = self._history_store = HistoryStore(self.library)
        return store

    def history(self, search: str = "", limit: int | None = None) -> Sequence[HistoryEntry]:
        """The answers asked of this library, newest first; `search`: every word in the question or answer.

        A read-only sequence: its entries are built as they are read (history/listing.py)."""
        return self._history().entries(search, limit)

    def history_record(self, number: int) -> HistoryRecord:
        """Answer `number` as it was (claims, verdicts, citations, evidence, timings, model)."""
        return self._history().get(number)

    def delete_history(self, number: int) -> None:
        self._history().delete(number)

    def history_count(self) -> int:
        return self._history().count()

    def record_answer(self, result: ResearchResult) -> HistoryEntry | None:
        """Keep `result` in the history (every research run does this). A failed write (a full
        disk, a bucket that refuses) costs this one record, never the answer: None, and a note."""
        try:
            return self._history().add(result, self.settings.chat.describe())
        except (OSError, ResearchDeskError, RuntimeError, ValueError) as exc:  # Lance raises OSError/RuntimeError
            log.warning("could not keep the answer in the history", exc_info=True)
            result.messages.append(f"This answer could not be kept in the history: {getattr(exc, 'message', exc)}")
            return None
