"""Settings: library location, chat and embedding models, funnel parameters, theme.

Edits a copy of the core's `Settings`; the caller saves it and hands it to
the worker. Server model lists are fetched through `list_models`, a callable
the main window provides that runs on a worker thread (never blocking here).
"""

from __future__ import annotations


import copy
from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core import paths
from app.core.settings import AnswerParams, DeepParams, RetrievalParams, Settings, describe

from ..models.editor import ModelEditor
from ..models.measure import MeasureTab

AUTO = -0.01  # cutoff spin boxes: the special value meaning "calibrated for the model"


def _cutoff_box() -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(AUTO, 1.0)
    box.setSingleStep(0.05)
    box.setDecimals(2)
    box.setSpecialValueText("Calibrated for the model")
    return box


class SettingsDialog(QDialog):
    setup_models_requested = Signal()

    def __init__(
        self,
        settings: Settings,
        *,
        library_flag: str | None = None,
        list_models: Callable | None = None,
        run_job: Callable | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(620)
        self.original = settings
        self.settings = copy.deepcopy(settings)
        layout = QVBoxLayout(self)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs)

        # Library
        page = QWidget()
        f = QFormLayout(page)
        row = QHBoxLayout()
        self.library = QLineEdit(settings.library)
        self.library.setPlaceholderText(str(paths.default_library()))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_library)
        row.addWidget(self.library, 1)
        row.addWidget(browse)
        f.addRow("Library folder", row)
        note = "Empty: the default folder shown. A folder that does not exist yet is created."
        if library_flag:
            note = f"This window was opened with --library {library_flag}, which takes precedence until restart."
        hint = QLabel(note)
        hint.setObjectName("muted")
        hint.setWordWrap(True)
        f.addRow("", hint)
        self.tabs.addTab(page, "Library")

        # Models
        page = QWidget()
        v = QVBoxLayout(page)
        self.chat = ModelEditor("Chat model (writes the answers)", "chat", list_models)
        self.chat.load(settings.chat)
        self.embedding = ModelEditor("Embedding model (searches the library)", "embedding", list_models)
        self.embedding.load(settings.embedding)
        self.embedding_warning = QLabel(
            "Changing the embedding model makes the existing index stale: research and imports stop "
            "until the index is rebuilt (you will be offered a rebuild)."
        )
        self.embedding_warning.setWordWrap(True)
        self.embedding_warning.setObjectName("muted")
        self.embedding_warning.setStyleSheet("color: #9a6700;")
        self.embedding_warning.hide()
        self.embedding.changed.connect(self._embedding_changed)
        v.addWidget(self.chat)
        v.addWidget(self.embedding)
        v.addWidget(self.embedding_warning)
        setup = QPushButton("Install the offline starter models…")
        setup.clicked.connect(self._setup_models)
        v.addWidget(setup, 0, Qt.AlignmentFlag.AlignLeft)
        v.addStretch(1)
        self.tabs.addTab(page, "Models")
        # The support check's judge, its calibration and a rating of the models (run on the worker via run_job).
        self.measure = MeasureTab(settings, run_job, list_models)
        self.tabs.addTab(self.measure, "Judge and rating")

        # Research
        page = QWidget()
        f = QFormLayout(page)
        r = settings.research
        self.k1 = QSpinBox()
        self.k1.setRange(1, 100)
        self.k1.setValue(r.k_summaries)
        self.lambda1 = QDoubleSpinBox()
        self.lambda1.setRange(0, 1)
        self.lambda1.setSingleStep(0.05)
        self.lambda1.setValue(r.mmr_lambda_summaries)
        self.cutoff1 = _cutoff_box()
        self.cutoff1.setValue(AUTO if r.cutoff_summaries is None else r.cutoff_summaries)
        self.k2 = QSpinBox()
        self.k2.setRange(1, 200)
        self.k2.setValue(r.k_evidence)
        self.lambda2 = QDoubleSpinBox()
        self.lambda2.setRange(0, 1)
        self.lambda2.setSingleStep(0.05)
        self.lambda2.setValue(r.mmr_lambda_evidence)
        self.cutoff2 = _cutoff_box()
        self.cutoff2.setValue(AUTO if r.cutoff_evidence is None else r.cutoff_evidence)
        self.hybrid = QCheckBox("Hybrid search (vectors + full-text BM25)")
        self.hybrid.setChecked(r.hybrid)
        self.min_short = QSpinBox()
        self.min_short.setRange(1, 50)
        self.min_short.setValue(r.min_shortlist)
        self.max_short = QSpinBox()
        self.max_short.setRange(1, 50)
        self.max_short.setValue(r.max_shortlist)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(64, 32768)
        self.max_tokens.setSingleStep(100)
        self.max_tokens.setValue(r.answer_max_tokens)
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0, 2)
        self.temperature.setSingleStep(0.1)
        self.temperature.setValue(r.temperature)
        self.citation_style = QComboBox()
        self.citation_style.addItem("Numbered passages: the model cites [3]", "numbers")
        self.citation_style.addItem("Tagged passages: the model copies [PAPER_ID, page N]", "tags")
        self.citation_style.setCurrentIndex(max(0, self.citation_style.findData(r.citation_style)))
        self.timeout = QSpinBox()
        self.timeout.setRange(10, 7200)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(int(r.synthesis_timeout_s))
        self.deep_time = QSpinBox()
        self.deep_time.setRange(0, 240)
        self.deep_time.setSuffix(" min")
        self.deep_time.setSpecialValueText("Unlimited")
        self.deep_time.setValue(int(settings.deep.time_minutes or 0))
        # Each knob's tooltip is its one line of doc in the core's settings.
        for widget, group, name in (
            (self.k1, RetrievalParams, "k_summaries"), (self.lambda1, RetrievalParams, "mmr_lambda_summaries"),
            (self.cutoff1, RetrievalParams, "cutoff_summaries"), (self.min_short, RetrievalParams, "min_shortlist"),
            (self.max_short, RetrievalParams, "max_shortlist"), (self.k2, RetrievalParams, "k_evidence"),
            (self.lambda2, RetrievalParams, "mmr_lambda_evidence"), (self.cutoff2, RetrievalParams, "cutoff_evidence"),
            (self.hybrid, RetrievalParams, "hybrid"), (self.max_tokens, AnswerParams, "answer_max_tokens"),
            (self.temperature, AnswerParams, "temperature"), (self.citation_style, AnswerParams, "citation_style"),
            (self.timeout, AnswerParams, "synthesis_timeout_s"), (self.deep_time, DeepParams, "time_minutes"),
        ):
            widget.setToolTip(describe(group, name))
        f.addRow(QLabel("<b>Stage 1 — scoping (summaries)</b>"))
        f.addRow("Passages (k)", self.k1)
        f.addRow("MMR λ", self.lambda1)
        f.addRow("Similarity cutoff", self.cutoff1)
        f.addRow("Shortlist size", _pair(self.min_short, "to", self.max_short))
        f.addRow(QLabel("<b>Stage 2 — evidence (full text)</b>"))
        f.addRow("Passages (k)", self.k2)
        f.addRow("MMR λ", self.lambda2)
        f.addRow("Similarity cutoff", self.cutoff2)
        f.addRow("", self.hybrid)
        f.addRow(QLabel("<b>Stage 3 — synthesis</b>"))
        f.addRow("Longest answer", _pair(self.max_tokens, "tokens"))
        f.addRow("Temperature", self.temperature)
        f.addRow("Citations", self.citation_style)
        f.addRow("Time limit", self.timeout)
        f.addRow(QLabel("<b>Deep research</b>"))
        f.addRow("Default time budget", self.deep_time)
        self.tabs.addTab(page, "Research")

        # Appearance
        page = QWidget()
        f = QFormLayout(page)
        self.theme = QComboBox()
        for key, label in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            self.theme.addItem(label, key)
        self.theme.setCurrentIndex(max(0, self.theme.findData(settings.theme)))
        f.addRow("Theme", self.theme)
        self.tabs.addTab(page, "Appearance")

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def show_tab(self, name: str) -> None:
        for i in range(self.tabs.count()):
            if self.tabs.tabText(i).lower() == name.lower():
                self.tabs.setCurrentIndex(i)

    def _browse_library(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Library folder", self.library.text() or str(paths.default_library()))
        if folder:
            self.library.setText(folder)

    def _embedding_changed(self) -> None:
        cfg = self.embedding.config(self.original.embedding)
        self.embedding_warning.setVisible(cfg.identity() != self.original.embedding.identity())

    def _setup_models(self) -> None:
        self.setup_models_requested.emit()

    def result_settings(self) -> Settings:
        s = copy.deepcopy(self.settings)
        s.library = self.library.text().strip()
        s.chat = self.chat.config(s.chat)
        s.embedding = self.embedding.config(s.embedding)
        s.judge = self.measure.judge_config(s.judge)
        r = s.research
        r.k_summaries = self.k1.value()
        r.mmr_lambda_summaries = self.lambda1.value()
        r.cutoff_summaries = None if self.cutoff1.value() <= AUTO + 1e-9 else self.cutoff1.value()
        r.k_evidence = self.k2.value()
        r.mmr_lambda_evidence = self.lambda2.value()
        r.cutoff_evidence = None if self.cutoff2.value() <= AUTO + 1e-9 else self.cutoff2.value()
        r.hybrid = self.hybrid.isChecked()
        r.min_shortlist = self.min_short.value()
        r.max_shortlist = max(self.max_short.value(), self.min_short.value())
        r.answer_max_tokens = self.max_tokens.value()
        r.temperature = self.temperature.value()
        r.citation_style = self.citation_style.currentData()
        r.synthesis_timeout_s = float(self.timeout.value())
        s.deep.time_minutes = float(self.deep_time.value()) or None
        s.theme = self.theme.currentData()
        return s


def _pair(first: QWidget, text: str, second: QWidget | None = None) -> QWidget:
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(first)
    label = QLabel(text)
    label.setObjectName("muted")
    row.addWidget(label)
    if second is not None:
        row.addWidget(second)
    row.addStretch(1)
    return holder
