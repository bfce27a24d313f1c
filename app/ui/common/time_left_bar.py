"""A draining time-left bar for runs with a time budget (the Draft tab).

The core reports its clock in "budget" events ({total_s, reserve_s,
elapsed_s}) only at rounds and decisions; between them the bar ticks on its
own from the last reading, so it moves smoothly without polling the worker.
The stretch at the empty end is the writing reserve: when the bar drains
into it, searching stops and the model writes.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from . import theme

TICK_MS = 250


def clock_text(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


class _Track(QWidget):
    """The bar itself: time left in the accent colour, the reserve zone tinted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.left_fraction = 1.0
        self.reserve_fraction = 0.0
        self.setFixedHeight(8)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        c = theme.colors()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(0.5, 0.5, self.width() - 1.0, self.height() - 1.0)
        p.setPen(QPen(QColor(c["border"]), 1))
        p.setBrush(QColor(c["alt"]))
        p.drawRoundedRect(r, 4, 4)
        if self.reserve_fraction > 0:
            zone = QRectF(r.left(), r.top(), r.width() * self.reserve_fraction, r.height())
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(c["warn_bg"]))
            p.drawRoundedRect(zone, 4, 4)
        if self.left_fraction > 0:
            fill = QRectF(r.left(), r.top(), max(r.height(), r.width() * min(1.0, self.left_fraction)), r.height())
            color = QColor(c["accent"] if self.left_fraction > self.reserve_fraction else c["warn"])
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(color)
            p.drawRoundedRect(fill, 4, 4)
        if 0 < self.reserve_fraction < 1:
            x = r.left() + r.width() * self.reserve_fraction
            p.setPen(QPen(QColor(c["warn"]), 1.5))
            p.drawLine(int(x), 0, int(x), self.height())
        p.end()


class TimeLeftBar(QWidget):
    """'3:12 left · searching (writing starts at 2:00)' over the draining bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        self.label = QLabel("")
        self.label.setObjectName("muted")
        self.track = _Track()
        layout.addWidget(self.label)
        layout.addWidget(self.track)
        self.total_s: float | None = None
        self.reserve_s = 0.0
        self.phase = ""
        self._origin = 0.0  # time.monotonic() at the run's elapsed 0
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self.hide()

    # -- driving ----------------------------------------------------------------------
    def start(self, total_s: float | None, reserve_s: float = 0.0, phase: str = "searching the library") -> None:
        """The run began now; total_s None means no time limit."""
        self.total_s = total_s
        self.reserve_s = reserve_s
        self.phase = phase
        self._origin = time.monotonic()
        self.track.setVisible(total_s is not None)
        self.show()
        self._timer.start()
        self._tick()

    def sync(self, reading: dict) -> None:
        """A 'budget' event from the core: its own clock wins over ours."""
        total = reading.get("total_s")
        self.total_s = None if total is None else float(total)
        self.reserve_s = float(reading.get("reserve_s") or 0.0)
        self._origin = time.monotonic() - float(reading.get("elapsed_s") or 0.0)
        self.track.setVisible(self.total_s is not None)
        if not self._timer.isActive():
            self._timer.start()
        self._tick()

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self._tick()

    def finish(self, outcome: str) -> None:
        """'Drafted in 4:50 of 6:00': the bar has done its job and steps aside."""
        self._timer.stop()
        self.track.hide()
        budget = f" of {clock_text(self.total_s)}" if self.total_s is not None else ""
        self.label.setText(f"{outcome} in {clock_text(self.elapsed())}{budget}")

    def elapsed(self) -> float:
        return time.monotonic() - self._origin

    def remaining(self) -> float | None:
        return None if self.total_s is None else self.total_s - self.elapsed()

    # -- drawing ----------------------------------------------------------------------
    def _tick(self) -> None:
        left = self.remaining()
        phase = self.phase
        if left is None:
            self.label.setText(f"No time limit · {clock_text(self.elapsed())} elapsed" + (f" · {phase}" if phase else ""))
            return
        total = max(self.total_s or 1.0, 1.0)
        self.track.left_fraction = max(0.0, left) / total
        self.track.reserve_fraction = min(1.0, self.reserve_s / total)
        self.track.update()
        if left < 0:
            text = f"{clock_text(-left)} over the budget · finishing the paragraph being written"
        elif phase.startswith("search") and left > self.reserve_s:
            text = f"{clock_text(left)} left · {phase} (writing starts at {clock_text(self.reserve_s)} left)"
        else:
            text = f"{clock_text(left)} left" + (f" · {phase}" if phase else "")
        self.label.setText(text)
