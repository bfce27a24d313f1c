"""Import progress: the current file and its pages, overall progress, ETA, Cancel.

It renders the core's typed Progress events (app/core/events.py): overall
pages, and the file being read with its page (`Progress.step`); and, on a line of its
own, the vectors, computed behind the reading ("vectors: 1,234 of 6,220 passages",
ingest/vectors.py), while the papers already read are listed and searchable by their words.
The top line names what runs now and estimates when the whole job ends: the later of the
reading's end and the vectors' end, the vectors' total extrapolated from the pages read.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.core.events import VECTORS_UNIT, EtaMeter, Progress


# The long jobs the panel shows, by the worker's name for them (library/controller.py). The kind,
# not the title, says what runs: "vectors" (vectors alone) has no reading, so its top line counts papers.
LongJob = Literal["import", "vectors", "reindex", "summarize", "rebuild"]


def format_eta(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    return f"{minutes}m {secs:02d}s" if minutes < 60 else f"{minutes // 60}h {minutes % 60:02d}m"


class ImportPanel(QFrame):
    """Shown while an import (or summarize / re-index) runs in the library pane."""

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importPanel")
        grid = QGridLayout(self)
        grid.setContentsMargins(10, 8, 10, 8)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(4)
        self.title = QLabel("Importing…")
        self.title.setStyleSheet("font-weight: 600;")
        self.eta = QLabel("")
        self.eta.setObjectName("muted")
        self.eta.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.file_label = QLabel("")
        self.file_label.setObjectName("muted")
        self.file_label.setMinimumWidth(10)
        self.file_bar = QProgressBar()
        self.file_bar.setTextVisible(False)
        self.overall_bar = QProgressBar()
        self.overall_bar.setTextVisible(False)
        self.overall_bar.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self._cancel)
        grid.addWidget(self.title, 0, 0)
        grid.addWidget(self.eta, 0, 1)
        grid.addWidget(self.cancel_button, 0, 2, 2, 1, Qt.AlignmentFlag.AlignVCenter)
        grid.addWidget(self.overall_bar, 1, 0, 1, 2)
        grid.addWidget(self.file_label, 2, 0, 1, 3)
        grid.addWidget(self.file_bar, 3, 0, 1, 3)
        self.vectors_label = QLabel("")
        self.vectors_label.setObjectName("muted")
        self.vectors_bar = QProgressBar()
        self.vectors_bar.setTextVisible(False)
        self.vectors_bar.setRange(0, 1000)
        grid.addWidget(self.vectors_label, 4, 0, 1, 3)
        grid.addWidget(self.vectors_bar, 5, 0, 1, 3)
        grid.setColumnStretch(0, 1)
        self.eta_meter = EtaMeter()
        self.vectors_meter = EtaMeter()
        self._reading: Progress | None = None  # the latest of each progress: the top line reads both
        self._vectors: Progress | None = None
        self._title = "Importing"
        self._kind: LongJob = "import"
        self.hide()

    def start(self, title: str, kind: LongJob) -> None:
        self._title = title  # the job's name; the top line adds what runs now
        self._kind = kind
        self.title.setText(title)
        self.eta.setText("")
        self.file_label.setText("Preparing…")
        self.overall_bar.setValue(0)
        self.file_bar.setRange(0, 0)  # busy until the first page is read
        self.file_bar.show()
        self.eta_meter.reset()
        self.vectors_meter.reset()
        self._reading = self._vectors = None
        self.vectors_label.setText("")
        self.vectors_label.hide()
        self.vectors_bar.setValue(0)
        self.vectors_bar.hide()
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self.show()

    def update_progress(self, progress: Progress) -> None:
        if progress.unit == VECTORS_UNIT:
            self._vectors = progress
            self._update_vectors(progress)
        else:
            self._reading = progress
            self._update_reading(progress)
        self._update_top()

    def _update_reading(self, progress: Progress) -> None:
        """The first progress: the papers read (each searchable by its words once read)."""
        fraction = progress.fraction
        if 0 <= fraction <= 1:
            self.overall_bar.setRange(0, 1000)
            self.overall_bar.setValue(int(fraction * 1000))
        else:
            self.overall_bar.setRange(0, 0)
        step = progress.step
        if step is not None and not self._read_all():
            self.file_label.setText(f"{step.name} · {progress.detail}" if progress.detail else step.name)
            self.file_label.setToolTip(step.name)
            if step.total > 0:
                self.file_bar.setRange(0, int(step.total))
                self.file_bar.setValue(int(step.done))
        elif self._read_all():
            self._show_read_all()
        else:
            self.file_label.setText(progress.detail)

    def _update_vectors(self, progress: Progress) -> None:
        """The second progress: passages embedded, behind the reading (or alone: "Computing vectors")."""
        if self._read_all():
            self._show_read_all()
        fraction = self._vectors_expected(progress).fraction  # no jump back as papers are read
        if 0 <= fraction <= 1:
            self.vectors_bar.setRange(0, 1000)
            self.vectors_bar.setValue(int(fraction * 1000))
        else:
            self.vectors_bar.setRange(0, 0)
        self.vectors_label.setText(progress.detail if self._read_all() else f"{progress.detail} so far")
        if progress.step is not None:
            self.vectors_label.setToolTip(progress.step.name)
        self.vectors_label.show()
        self.vectors_bar.show()

    def _read_all(self) -> bool:
        """Whether every paper is read (or there is no reading: "Computing vectors" alone)."""
        reading = self._reading
        return reading is None or (reading.total > 0 and reading.done >= reading.total)

    def _show_read_all(self) -> None:
        reading = self._reading
        papers = reading.step.count if reading is not None and reading.step is not None else 0
        read = f"read {papers} of {papers} paper{'s' if papers != 1 else ''}" if papers else "Papers"
        self.file_label.setText(f"{read}: searchable by their words; computing their vectors")
        self.file_label.setToolTip("")
        self.overall_bar.setRange(0, 1000)
        self.overall_bar.setValue(1000)
        self.file_bar.setRange(0, 1)
        self.file_bar.setValue(1)

    def _update_top(self) -> None:
        """Title and time left: what runs now, and when the whole job should end."""
        base = self._title
        reading, vectors = self._reading, self._vectors
        if not self._read_all() and reading.step is not None:
            self.title.setText(f"{base} — file {reading.step.index} of {reading.step.count}")
        elif vectors is not None and vectors.step is not None:
            what = "paper" if self._kind == "vectors" else "vectors, paper"  # "Computing vectors — paper 2 of 5"
            self.title.setText(f"{base} — {what} {vectors.step.index} of {vectors.step.count}")
        left = [self.eta_meter.seconds_left(reading)] if reading is not None and not self._read_all() else []
        if vectors is not None:
            left.append(self.vectors_meter.seconds_left(self._vectors_expected(vectors)))
        known = [x for x in left if x is not None]
        self.eta.setText(f"about {format_eta(max(known))} left" if known and len(known) == len(left) else "")

    def _vectors_expected(self, vectors: Progress) -> Progress:
        """The vectors' progress against the passages expected once every paper is read: while
        reading, those of the papers read so far, scaled by the pages still to read."""
        reading = self._reading
        if self._read_all() or reading.done <= 0 or vectors.total <= 0:
            return vectors
        return Progress(vectors.done, vectors.total * reading.total / reading.done, vectors.unit, vectors.detail, vectors.step)

    def show_status(self, text: str) -> None:
        """A line without counts (a stage of summarizing, a notice)."""
        self.overall_bar.setRange(0, 0)
        self.file_label.setText(text)

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")
        self.cancel_requested.emit()

    def finish(self) -> None:
        self.hide()
