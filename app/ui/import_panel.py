"""Import progress: the current file and its pages, overall progress, ETA, Cancel.

The importer reports lines like "[3/30] paper.pdf: page 4/12, 20 chunks — ETA 1m 20s";
this panel splits such a line into what a user scans for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QProgressBar, QPushButton, QWidget

_LINE = re.compile(r"^\[(?P<n>\d+)/(?P<total>\d+)\]\s*(?P<body>.*?)(?:\s+—\s+ETA\s+(?P<eta>.+))?$")
_PAGE = re.compile(r"page (?P<page>\d+)/(?P<pages>\d+)")


@dataclass
class ImportStep:
    file_no: int = 0
    files: int = 0
    name: str = ""
    detail: str = ""
    page: int = 0
    pages: int = 0
    eta: str = ""


def parse_progress(message: str) -> ImportStep:
    m = _LINE.match(message.strip())
    if not m:
        eta = ""
        if " — ETA " in message:
            message, eta = message.rsplit(" — ETA ", 1)
        return ImportStep(detail=message, eta=eta)
    body = m.group("body")
    name, _, detail = body.partition(": ")
    step = ImportStep(int(m.group("n")), int(m.group("total")), name, detail, eta=m.group("eta") or "")
    p = _PAGE.search(detail)
    if p:
        step.page, step.pages = int(p.group("page")), int(p.group("pages"))
    return step


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
        grid.setColumnStretch(0, 1)
        self.step = ImportStep()
        self.hide()

    def start(self, title: str) -> None:
        self.title.setText(title)
        self.eta.setText("")
        self.file_label.setText("Preparing…")
        self.overall_bar.setValue(0)
        self.file_bar.setRange(0, 0)  # busy until the first page is read
        self.file_bar.show()
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self.show()

    def update_progress(self, fraction: float, message: str) -> None:
        step = parse_progress(message)
        self.step = step
        if 0 <= fraction <= 1:
            self.overall_bar.setRange(0, 1000)
            self.overall_bar.setValue(int(fraction * 1000))
        else:
            self.overall_bar.setRange(0, 0)
        if step.files:
            self.title.setText(f"{self.title.text().split(' — ')[0]} — file {step.file_no} of {step.files}")
            self.file_label.setText(f"{step.name} · {step.detail}" if step.detail else step.name)
            self.file_label.setToolTip(message)
        else:
            self.file_label.setText(step.detail)
        if step.pages:
            self.file_bar.setRange(0, step.pages)
            self.file_bar.setValue(step.page)
        self.eta.setText(f"about {step.eta} left" if step.eta else "")

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")
        self.cancel_requested.emit()

    def finish(self) -> None:
        self.hide()
