"""The typed task protocol: how long operations report and how they are stopped.

Every long `Desk` operation takes a `Task`. The operation reports through it as
typed events (a stage begins, pages are done, a token or a claim is written, a
round of deep research ends, something went wrong but the run goes on) and asks
it whether to stop. Front ends render the events (the window as widgets, the CLI
as a progress bar or nothing when piped); nobody parses message text.

The events are plain frozen dataclasses so that they cross threads safely (the
window's worker forwards them to the UI thread as they are).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from .errors import Cancelled

log = logging.getLogger(__name__)


# -- events ---------------------------------------------------------------------
@dataclass(frozen=True)
class Stage:
    """A named step of an operation begins (index is 1-based)."""

    name: str
    index: int
    total: int
    detail: str = ""  # one human line about the step ("12 papers shortlisted")


@dataclass(frozen=True)
class Step:
    """The item being worked on within a Progress (the 3rd of 30 files, its page 4 of 12)."""

    index: int  # 1-based
    count: int
    name: str
    done: float = 0
    total: float = 0  # 0 when unknown


# Progress.unit of import's vectors phase (ingest/vectors.py), shown apart from the pages read.
VECTORS_UNIT = "passages"


@dataclass(frozen=True)
class Progress:
    """Work done so far within the current stage; total 0 when unknown."""

    done: float
    total: float
    unit: str  # "pages", "papers", "sentences", "s", …
    detail: str = ""  # what is happening, for a person to read ("page 4/12, 20 chunks")
    step: Step | None = None

    @property
    def fraction(self) -> float:
        """0..1, or -1 when the total is unknown."""
        return min(1.0, self.done / self.total) if self.total > 0 else -1.0


@dataclass(frozen=True)
class Token:
    """Generated text, streamed as the model writes it."""

    text: str


@dataclass(frozen=True)
class ClaimWritten:
    """One claim of a structured answer is complete (records.Claim; index 0-based)."""

    claim: Any
    index: int = 0


@dataclass(frozen=True)
class EvidenceFound:
    """Evidence is ready to show before any model time (list of records.Evidence)."""

    evidence: list


@dataclass(frozen=True)
class Shortlisted:
    """The papers the search narrowed to (list of records.Paper)."""

    papers: list


@dataclass(frozen=True)
class PaperImported:
    """A paper finished importing (or failed): the library table can show it."""

    outcome: Any  # ingest.ImportOutcome


@dataclass(frozen=True)
class PaperUpdated:
    """A paper's row changed (summarized, re-indexed, edited): the library table can refresh it."""

    paper: Any  # records.Paper


@dataclass(frozen=True)
class SentenceChecked:
    """One citing sentence of a manuscript has its verdicts (check.CheckedSentence)."""

    sentence: Any


@dataclass(frozen=True)
class Round:
    """A round of deep research or drafting changed (a snapshot: research.deep_progress.RoundRecord)."""

    index: int
    record: Any


@dataclass(frozen=True)
class Notice:
    """Something the user should know; the operation goes on."""

    message: str
    hint: str = ""
    level: str = "warning"  # "info" | "warning"


@dataclass(frozen=True)
class Done:
    """The operation's result (also returned by the Desk method)."""

    result: Any


Event = Union[
    Stage, Progress, Token, ClaimWritten, EvidenceFound, Shortlisted, PaperImported, PaperUpdated, SentenceChecked,
    Round, Notice, Done,
]
EventSink = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The sink of a task nobody watches."""


class EtaMeter:
    """Time left from the rate of progress since the count began (renderers share it)."""

    MIN_SECONDS = 2.0  # before this, a rate is noise

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._start: tuple[float, float] | None = None

    def reset(self) -> None:
        self._start = None

    def seconds_left(self, progress: Progress) -> float | None:
        now = self.clock()
        if self._start is None or progress.done < self._start[1]:
            self._start = (now, progress.done)
        t0, d0 = self._start
        spent, done = now - t0, progress.done - d0
        if progress.total <= 0 or spent < self.MIN_SECONDS or done <= 0:
            return None
        return (progress.total - progress.done) * spent / done


# -- cancellation -----------------------------------------------------------------
class CancelToken:
    """One flag per task; any thread may set it, the operation polls it."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def __call__(self) -> bool:  # usable where the core takes an `IsCancelled`
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled()


# -- the task a Desk operation reports through ------------------------------------
@dataclass
class Task:
    """The channel of one operation: where its events go and whether to stop."""

    sink: EventSink = ignore
    token: CancelToken = field(default_factory=CancelToken)
    started: float = field(default_factory=time.monotonic)

    def emit(self, event: Event) -> None:
        try:
            self.sink(event)
        except Cancelled:
            raise
        except Exception:  # a broken renderer must not kill the work it renders
            log.exception("event sink failed on %s", type(event).__name__)

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled

    def check(self) -> None:
        self.token.raise_if_cancelled()

    def stage(self, name: str, index: int, total: int, detail: str = "") -> None:
        self.emit(Stage(name, index, total, detail))

    def progress(self, done: float, total: float, unit: str, detail: str = "") -> None:
        self.emit(Progress(done, total, unit, detail))

    def notice(self, message: str, hint: str = "", level: str = "warning") -> None:
        self.emit(Notice(message, hint, level))

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def quiet() -> Task:
    """A task nobody watches and nobody cancels (scripts, tests)."""
    return Task()
