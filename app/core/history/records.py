"""What the history hands out: a listing row per answer, and one answer reopened whole."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..records import ResearchResult


@dataclass
class HistoryEntry:
    """One answer of the history as its list shows it (no evidence: that is read on reopening)."""

    number: int  # stable: `history show N`; never reused while the answer is kept
    asked_at: str  # ISO 8601, UTC, seconds
    query: str
    mode: str  # standard | deep | improve
    model: str  # the chat model that wrote it
    scope: str  # "all papers", "tag “robust”", …
    cited: list[str] = field(default_factory=list)  # paper ids of its references
    claims: int = 0  # the model's claims, and how the support check judged them
    supported: int = 0
    partial: int = 0
    unsupported: int = 0
    seconds: float = 0.0  # the run's total time
    improves: int | None = None  # the number of the answer this one revised
    removed: list[str] = field(default_factory=list)  # cited papers no longer in the library

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class HistoryRecord:
    """One answer reopened as it was: the result (claims, verdicts, citations, evidence, timings)."""

    entry: HistoryEntry
    result: ResearchResult

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "result": self.result.to_dict()}
