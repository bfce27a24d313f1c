"""The settings' "Measure" tab: the support check's judge, its calibration, and a rating of the models.

The judge is chosen like the chat model (any backend) or left to the chat model. "Calibrate" runs
the labelled pairs through the judge shown and keeps its cut-offs; "Rate the models" measures every
available model on this library and recommends a chat model and a judge. Both run on the worker
thread (`run_job` submits them), with a progress bar and Cancel; the dialog stays usable.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.events import Progress, Stage
from app.core.settings import ModelConfig, Settings

from . import jobs as model_jobs
from .editor import ModelEditor

TABLE_MAX_PX = 260  # the rating table's height before it scrolls (the dialog grows to show it)
RunJob = Callable[[str, Callable], object]  # (kind, job function) -> JobHandle


class MeasureTab(QWidget):
    def __init__(self, settings: Settings, run_job: RunJob | None, list_models: Callable | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._run_job = run_job
        self._handle = None
        v = QVBoxLayout(self)
        self.same = QCheckBox("The chat model judges its own claims")
        self.same.setChecked(not settings.judge.backend)
        self.judge = ModelEditor("Judge (checks each claim against the passage it cites)", "chat", list_models)
        self.judge.load(settings.judge if settings.judge.backend else settings.chat)
        # Shown only where a judge apart from the chat model is chosen: otherwise nothing to edit here.
        self.judge.setVisible(not self.same.isChecked())
        self.judge.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.same.toggled.connect(lambda on: (self.judge.setVisible(not on), self._fit()))
        v.addWidget(self.same)
        v.addWidget(self.judge)
        about = QLabel("How sure a model is differs between models, so the judge's cut-offs are calibrated per model "
                       "on claims labelled by hand. Calibrate after choosing a new chat model or judge. "
                       "Rating asks each available model questions made from this library's own papers.")
        about.setWordWrap(True)
        about.setObjectName("muted")
        v.addWidget(about)
        row = QHBoxLayout()
        self.calibrate = QPushButton("Calibrate the judge")
        self.calibrate.clicked.connect(self._calibrate)
        self.rate = QPushButton("Rate the models")
        self.rate.clicked.connect(self._rate)
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(self._cancel)
        self.cancel.hide()
        for b in (self.calibrate, self.rate, self.cancel):
            row.addWidget(b)
        row.addStretch(1)
        v.addLayout(row)
        self.progress = QProgressBar()
        self.progress.hide()
        v.addWidget(self.progress)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v.addWidget(self.status)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.hide()
        v.addWidget(self.table, 1)
        v.addStretch(0)
        if run_job is None:
            for b in (self.calibrate, self.rate):
                b.setEnabled(False)
        else:
            handle = run_job("last-rating", model_jobs.last_rating)
            handle.finished.connect(lambda report: report is not None and self._show_report(report, "Last rating"))

    # -- the settings the tab edits ----------------------------------------------------
    def judge_config(self, current: ModelConfig) -> ModelConfig:
        return ModelConfig(backend="") if self.same.isChecked() else self.judge.config(copy.deepcopy(current))

    # -- jobs ---------------------------------------------------------------------------
    def start_calibration(self) -> None:
        """Calibrate the judge the tab shows, as its button does (the window offers it for a new model)."""
        if self._run_job is not None and self._handle is None:
            self._calibrate()

    def _calibrate(self) -> None:
        cfg = None if self.same.isChecked() else self.judge.config(ModelConfig())
        self._start("calibrate", partial(model_jobs.calibrate_judge, cfg=cfg), "Calibrating the judge…")
        self._handle.finished.connect(self._calibrated)

    def _rate(self) -> None:
        self._start("rate-models", model_jobs.rate_models, "Rating the models…")
        self._handle.finished.connect(lambda report: self._show_report(report, "Rated"))

    def _start(self, kind: str, fn: Callable, message: str) -> None:
        self._handle = handle = self._run_job(kind, fn)
        handle.event.connect(self._event)
        handle.failed.connect(lambda exc: self.status.setText(f"{getattr(exc, 'message', exc)}"
                                                             + (f"\n{exc.hint}" if getattr(exc, "hint", "") else "")))
        handle.cancelled.connect(lambda: self.status.setText("Cancelled: nothing was changed."))
        handle.ended.connect(self._ended)
        self.status.setText(message)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel.show()
        self.calibrate.setEnabled(False)
        self.rate.setEnabled(False)

    def _event(self, event: object) -> None:
        if isinstance(event, Stage):
            self.status.setText(f"{event.name[:1].upper()}{event.name[1:]}…" + (f" ({event.detail})" if event.detail else ""))
        elif isinstance(event, Progress) and event.total:
            self.progress.setRange(0, int(event.total))
            self.progress.setValue(int(event.done))
            self.progress.setFormat(f"%v of %m {event.unit}")

    def _cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self.status.setText("Cancelling…")

    def _ended(self) -> None:
        self._handle = None
        self.progress.hide()
        self.cancel.hide()
        self.calibrate.setEnabled(True)
        self.rate.setEnabled(True)

    def _fit(self) -> None:
        """Grow the dialog to what the tab now shows (a judge's form squeezed by the table is unreadable)."""
        win = self.window()
        win.layout().activate() if win.layout() is not None else None
        win.resize(win.width(), max(win.height(), win.sizeHint().height()))

    def _calibrated(self, cal) -> None:
        head, *rest = cal.lines()
        kept = " They are kept for this model." if cal.calibrated else ""
        self.status.setText(f"{head}\n" + "; ".join(rest) + "." + kept)

    def _show_report(self, report, title: str) -> None:
        header, *rows = report.rows()
        self.table.setColumnCount(len(header))
        self.table.setHorizontalHeaderLabels(list(header))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                if c >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumHeight(min(TABLE_MAX_PX, self.table.horizontalHeader().height() + 34 * (len(rows) + 1)))
        self.table.show()
        self._fit()
        when = f" {report.when.replace('T', ' ')}" if report.when else ""
        self.status.setText(f"{title}{when}: {report.questions} questions from this library. {report.recommendation()}")
