"""The CLI's renderer of the core's typed events (app/core/events.py).

On a terminal: one status line rewritten in place — the stage, a progress bar
with the rate-based time left, and what is being worked on. Piped or
redirected: quiet, except notices (warnings the user must see) and failures.
Generated text (Token events) goes to stdout when the caller asks for it.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from .core.events import EtaMeter, Event, Notice, Progress, Stage, Token

BAR_WIDTH = 24
MIN_REDRAW_S = 0.1  # a redraw at most ten times a second


class TerminalRenderer:
    """An event sink for `events.Task`; call `done()` before printing results."""

    def __init__(self, stream: TextIO | None = None, *, on_token: Callable[[str], None] | None = None,
                 interactive: bool | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.on_token = on_token
        self.stage: Stage | None = None
        self.line = ""
        self.clock = clock
        self.etas: dict[str, EtaMeter] = {}  # a rate per unit: import's pages read and its passages embedded
        self._latest: dict[str, Progress] = {}  # the latest progress of each unit of this stage, first seen first
        self._first_done = False
        self._last_draw = 0.0

    def __call__(self, event: Event) -> None:
        if isinstance(event, Token):
            if self.on_token is not None:
                self._clear()
                self.on_token(event.text)
        elif isinstance(event, Notice):
            self._clear()
            self.stream.write(f"{event.level}: {event.message}" + (f" ({event.hint})" if event.hint else "") + "\n")
            self.stream.flush()
        elif isinstance(event, Stage):
            self.stage = event
            self.etas.clear()
            self._latest.clear()
            self._first_done = False
            self._draw(self._stage_text(), force=True)
        elif isinstance(event, Progress):
            self._progress(event)

    def _progress(self, event: Progress) -> None:
        """One progress: its bar. Two (import reads papers and embeds their passages behind the
        reading): the first one's bar with the second's count beside it until the first ends,
        whose line then stays on screen; then the second's bar alone."""
        self._latest[event.unit] = event
        first, *other = self._latest.values()
        if self._first_done or not other:
            self._draw(self._progress_text(event), force=_finished(event))
            return
        self._draw(f"{self._progress_text(first)}  |  {other[0].detail}", force=_finished(event))
        if _finished(first) and self.interactive and self.line:
            self.stream.write("\n")
            self.line = ""
            self._first_done = True

    # -- text -----------------------------------------------------------------------
    def _stage_text(self) -> str:
        s = self.stage
        if s is None:
            return ""
        where = f"[{s.index}/{s.total}] " if s.total > 1 else ""
        return f"{where}{s.name}" + (f": {s.detail}" if s.detail else "")

    def _progress_text(self, p: Progress) -> str:
        head = f"[{self.stage.index}/{self.stage.total}] " if self.stage and self.stage.total > 1 else ""
        if p.total <= 0:
            return f"{head}{p.done:g} {p.unit} {p.detail}".rstrip()
        fraction = p.fraction
        filled = int(round(fraction * BAR_WIDTH))
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        count = f"{p.done:.0f}/{p.total:.0f} {p.unit}" if p.unit else f"{fraction * 100:3.0f}%"
        left = self.etas.setdefault(p.unit, EtaMeter(self.clock)).seconds_left(p)
        eta = f"  ETA {format_duration(left)}" if left is not None else ""
        item = f"  {p.step.name}" if p.step else ""
        return f"{head}{bar} {count}{eta}{item}  {p.detail}".rstrip()

    # -- output ---------------------------------------------------------------------
    def _draw(self, text: str, *, force: bool = False) -> None:
        if not self.interactive or not text:
            return
        now = self.clock()
        if not force and now - self._last_draw < MIN_REDRAW_S:
            return
        self._last_draw = now
        width = 150
        self.stream.write("\r\033[K" + text[:width])
        self.stream.flush()
        self.line = text

    def _clear(self) -> None:
        if self.interactive and self.line:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.line = ""

    def done(self) -> None:
        """End the status line so that results print on a clean line."""
        self._clear()


def _finished(p: Progress) -> bool:
    return p.total > 0 and p.done >= p.total


def format_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
