"""What a deep research run has done so far, as records and as a state machine.

The loop (deep.py, deep_loop.py) keeps one `RoundRecord` per search and emits a
snapshot of it as `events.Round(index, record)` each time it changes: the search
starts, its passages arrive, the model reviews it, it ends. Drafting's searches
(drafting/) are reported the same way. Each record carries the budget's clock,
so a front end can draw the time left without polling.

`DeepRunLog` folds those events into what a front end shows: the phase of the
run, its clock (counting on between readings), the rounds. It is plain Python,
so the window's widgets only draw it and the bookkeeping is tested headless.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Callable

from ... import events
from ...text.wording import plural
from .budget import Budget, ClockReading

RETRY_EXHAUSTED = "RETRY_EXHAUSTED"

# Phases of a run, in order. "idle": nothing shown yet.
LIVE_PHASES = ("scoping", "research", "synthesis")
ENDED_PHASES = ("finished", "cancelled", "failed")
# The funnel's stages that write and check the answer (funnel.STAGES): the report phase.
REPORT_STAGES = ("synthesis", "check")


@dataclass(frozen=True)
class RoundRecord:
    """One search of a deep run (or of a draft) and what came of it."""

    index: int  # deep: 0 is the scoping search on the question; drafting: the search's number
    topic: str  # the gap searched (round 0: the question; drafting: the query)
    kind: str = "gap"  # deep: scope | gap | widen | tool; drafting: default | custom | widen
    state: str = "searching"  # searching | reviewing | done | cancelled | failed
    query: str = ""  # what was searched, where it differs from the topic
    gap: str = ""  # drafting: the missing aspect a custom search was for
    searched: bool = False  # its passages have arrived (False: still searching, or it failed)
    found: int = 0  # new passages kept
    papers: tuple[str, ...] = ()  # the paper of each new passage
    seconds: float = 0.0
    notes: tuple[str, ...] = ()  # a failed search, RETRY_EXHAUSTED, a malformed decision
    review: str = ""  # the model's summary after this round
    gaps_left: tuple[str, ...] | None = None  # None: not reviewed
    verdict: str = ""  # why searching ends after this round, when it does
    decision: dict | None = None  # drafting: the agent's judgement after this search
    clock: ClockReading | None = None

    @property
    def exhausted(self) -> bool:
        return any(n.startswith(RETRY_EXHAUSTED) for n in self.notes)

    @property
    def paper_counts(self) -> Counter:
        return Counter(self.papers)

    def noted(self, note: str) -> "RoundRecord":
        return self if note in self.notes else replace(self, notes=(*self.notes, note))


def exhausted_note(attempts: int) -> str:
    return f"{RETRY_EXHAUSTED}: nothing new after {plural(attempts, 'attempt')}; this gap is dropped."


@dataclass
class _Reading:
    """A clock reading and when (the front end's clock) it arrived."""

    total_s: float | None
    reserve_s: float
    elapsed_s: float
    received_at: float


class DeepRunLog:
    """The state of the deep run on show: phase, clock, rounds. Fed `events.Event`s."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        self.phase = "idle"
        self.question = ""
        self.cap = 0
        self.rounds: list[RoundRecord] = []
        self.reading: _Reading | None = None
        self.frozen_elapsed: float | None = None  # set when the run ends: the bar stops there
        self.waiting = False  # queued behind another task: the budget has not started
        self.report_line = ""  # the synthesis phase line
        self.ended_text = ""  # finished / cancelled / failed, in words
        self.stop_reason = ""
        self.limits_hit: list[str] = []
        self.partial_report = False  # writing the report from a cancelled run's evidence
        self.cancelling = False
        self.gathered: int | None = None
        self.searched_for: float | None = None  # a cancelled run's search time, kept for its report

    # -- starting -------------------------------------------------------------------------
    def begin(self, question: str, minutes: float | None, cap: int = 0) -> None:
        """A deep run was asked for: start the clock at once, before the core's first reading."""
        self.reset()
        self.phase = "scoping"
        self.question = question
        self.cap = cap
        total = None if minutes is None else float(minutes) * 60.0
        self.reading = _Reading(total, Budget(total).reserve_s, 0.0, self.clock())
        self.waiting = True

    def start_clock(self) -> None:
        """The job has started: the budget runs from now (until the core's first reading)."""
        if self.waiting and self.reading is not None:
            self.reading.received_at = self.clock()
        self.waiting = False

    def begin_report(self) -> None:
        """After a cancel: the report is written from what was gathered, with no time limit."""
        self.phase = "synthesis"
        self.partial_report = True
        self.cancelling = False
        self.ended_text = ""
        self.frozen_elapsed = None
        self.reading = _Reading(None, 0.0, 0.0, self.clock())
        self.report_line = "Writing the report from the passages gathered…"

    # -- the core's events ----------------------------------------------------------------
    def on_event(self, event: Any) -> bool:
        """Take one event; True when something shown changed."""
        if self.phase not in LIVE_PHASES:
            return False
        if isinstance(event, events.Round) and isinstance(event.record, RoundRecord):
            self._on_round(event.record)
        elif isinstance(event, events.Stage) and event.name in REPORT_STAGES:
            self.phase = "synthesis"
            self._close_live_round()
            if event.name == "check":
                self.report_line = "Checking the citations…"
            elif self.partial_report:
                self.report_line = "Writing the report from the passages gathered…"
            else:
                self.report_line = "Writing the report…"
        else:
            return False
        return True

    def _on_round(self, record: RoundRecord) -> None:
        if record.clock is not None and not self.partial_report:
            c = record.clock
            self.reading = _Reading(c.total_s, c.reserve_s, c.elapsed_s, self.clock())
            self.waiting = False
        for i, r in enumerate(self.rounds):
            if r.index == record.index:
                self.rounds[i] = record
                break
        else:
            self.rounds.append(record)
        if self.phase == "scoping":
            self.phase = "research"

    def _close_live_round(self) -> None:
        if self.rounds and self.rounds[-1].state in ("searching", "reviewing"):
            self.rounds[-1] = replace(self.rounds[-1], state="done")

    # -- the end ---------------------------------------------------------------------------------
    def finish(self, result: Any) -> None:
        self._close_live_round()
        extra = getattr(result, "extra", {}) or {}
        method = extra.get("methodology") or {}
        self.stop_reason = str(method.get("stop_reason") or "")
        self.limits_hit = [str(x) for x in (extra.get("limits_hit") or method.get("limits_hit") or [])]
        used = method.get("time_used_s") or (getattr(result, "timings", {}) or {}).get("total_s")
        self.frozen_elapsed = float(used) if used is not None and not self.partial_report else self.elapsed()
        self.phase = "finished"
        self.cancelling = False
        reason = self.stop_reason.replace("limit reached: ", "limit reached — ")
        self.report_line = "Report written" + (f" · search ended: {reason}" if reason else "")
        self.ended_text = "Finished"

    def cancel(self, gathered: int | None = None) -> None:
        writing = bool(self.report_line)
        self._end("cancelled")
        self.searched_for = self.frozen_elapsed
        self.ended_text = "Cancelled"
        self.gathered = gathered  # the core's count of what the report can be written from
        if writing:
            self.report_line = "Cancelled while writing the report."
        elif gathered:
            self.report_line = f"Cancelled with {plural(gathered, 'passage')} gathered: “Synthesize from it” writes the report from them."
        else:
            self.report_line = "Cancelled before any passage was gathered."

    def fail(self, message: str) -> None:
        writing = bool(self.report_line)
        self._end("failed")
        self.ended_text = "Stopped"
        # The banner above says what to do; this line keeps the reason with the rounds.
        what = "The report could not be written" if writing else "The run stopped"
        self.report_line = f"{what}: {message}" if message else f"{what}."

    def _end(self, phase: str) -> None:
        if self.phase == "research" and self.rounds and self.rounds[-1].state in ("searching", "reviewing"):
            self.rounds[-1] = replace(self.rounds[-1], state=phase)  # the round that was running when it stopped
        self.frozen_elapsed = self.elapsed()
        self.phase = phase
        self.cancelling = False

    # -- reading the clock ----------------------------------------------------------------------
    @property
    def unlimited(self) -> bool:
        return self.reading is None or self.reading.total_s is None

    @property
    def total_s(self) -> float | None:
        return None if self.reading is None else self.reading.total_s

    @property
    def reserve_s(self) -> float:
        return 0.0 if self.reading is None else self.reading.reserve_s

    def elapsed(self) -> float:
        if self.frozen_elapsed is not None:
            return self.frozen_elapsed
        if self.reading is None or self.waiting:
            return 0.0
        return self.reading.elapsed_s + max(0.0, self.clock() - self.reading.received_at)

    def research_left(self) -> float:
        """Seconds the loop may still search (0 once the report is being written)."""
        if self.unlimited:
            return float("inf")
        if self.phase not in ("scoping", "research"):
            return 0.0
        r = self.reading
        return max(0.0, r.total_s - r.reserve_s - self.elapsed())

    def report_left(self) -> float:
        """Seconds left for the report: its reserve while searching, all that is left after."""
        if self.unlimited:
            return float("inf")
        r = self.reading
        left = max(0.0, r.total_s - self.elapsed())
        return left if self.phase == "synthesis" else min(r.reserve_s, left)

    # -- totals -----------------------------------------------------------------------------------
    def passages(self) -> int:
        return sum(r.found for r in self.rounds)

    def papers(self) -> set[str]:
        return {pid for r in self.rounds for pid in r.papers}

    def current(self) -> RoundRecord | None:
        """The round running now (marked in the view), if any."""
        if self.phase == "research" and self.rounds and self.rounds[-1].state in ("searching", "reviewing"):
            return self.rounds[-1]
        return None
