"""The history of questions asked of a library: every answer kept, listed, searched, reopened (issue 53)."""

from .records import HistoryEntry, HistoryRecord
from .store import HistoryStore

__all__ = ["HistoryEntry", "HistoryRecord", "HistoryStore"]
