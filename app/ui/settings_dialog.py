"""Settings: library location, chat and embedding models, funnel parameters, theme.

Edits a copy of the core's `Settings`; the caller saves it and hands it to
the worker. Server model lists are fetched through `list_models`, a callable
the main window provides that runs on a worker thread (never blocking here).
"""

from __future__ import annotations

import copy
from pathlib import Path
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
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core import paths
from app.core.settings import ModelConfig, Settings

BACKENDS = (
    ("llamacpp", "llama.cpp — a GGUF file, run in-process"),
    ("lmstudio", "LM Studio — local or on another machine"),
    ("openai", "OpenAI-compatible server (llama.cpp server, vLLM, …)"),
)
AUTO = -0.01  # cutoff spin boxes: the special value meaning "calibrated for the model"


def _catalog_files(role: str) -> list[tuple[str, str]]:
    """(label, path) of catalog models for a role, installed ones first. Only stats files."""
    try:
        from app.core.models import catalog
    except Exception:  # noqa: BLE001 - a broken catalog must not break the dialog
        return []
    out = []
    try:
        entries = catalog.by_role(role)
    except Exception:  # noqa: BLE001
        return []
    for e in entries:
        path = paths.models_dir() / e.file
        if path.is_file():
            out.append((f"{e.name} (installed)", str(path)))
    return out


def _catalog_id_for(path: str) -> str:
    try:
        from app.core.models import catalog

        entry = catalog.for_file(path) if path else None
    except Exception:  # noqa: BLE001
        return ""
    return entry.id if entry else ""


class ModelEditor(QGroupBox):
    """One ModelConfig: backend, then its file / host / URL and model name."""

    changed = Signal()

    def __init__(self, title: str, role: str, list_models: Callable | None, parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.role = role
        self._list_models = list_models
        self._handle = None
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.backend = QComboBox()
        for key, label in BACKENDS:
            self.backend.addItem(label, key)
        form.addRow("Backend", self.backend)
        self.pages = QStackedWidget()
        form.addRow(self.pages)

        # llama.cpp
        page = QWidget()
        f = QFormLayout(page)
        f.setContentsMargins(0, 0, 0, 0)
        self.catalog = QComboBox()
        self.catalog.addItem("Starter model (when installed)", "")
        for label, path in _catalog_files(role):
            self.catalog.addItem(label, path)
        self.catalog.activated.connect(self._catalog_chosen)
        f.addRow("Catalog", self.catalog)
        row = QHBoxLayout()
        self.path = QLineEdit()
        self.path.setPlaceholderText("Path to a .gguf file (empty: the installed starter model)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        f.addRow("GGUF file", row)
        self.context = QSpinBox()
        self.context.setRange(256, 262144)
        self.context.setSingleStep(1024)
        f.addRow("Context length", self.context)
        self.threads = QSpinBox()
        self.threads.setRange(0, 256)
        self.threads.setSpecialValueText("Automatic")
        f.addRow("Threads", self.threads)
        self.pages.addWidget(page)

        # LM Studio
        page = QWidget()
        f = QFormLayout(page)
        f.setContentsMargins(0, 0, 0, 0)
        self.host = QLineEdit()
        self.host.setPlaceholderText("localhost:1234")
        f.addRow("Host", self.host)
        self.lms_model, lms_row = self._model_row()
        f.addRow("Model", lms_row)
        self.pages.addWidget(page)

        # OpenAI-compatible
        page = QWidget()
        f = QFormLayout(page)
        f.setContentsMargins(0, 0, 0, 0)
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("http://127.0.0.1:8080/v1")
        f.addRow("Base URL", self.base_url)
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        f.addRow("API key", self.api_key)
        self.oai_model, oai_row = self._model_row()
        f.addRow("Model", oai_row)
        self.pages.addWidget(page)

        self.list_status = QLabel("")
        self.list_status.setObjectName("muted")
        self.list_status.setWordWrap(True)
        form.addRow(self.list_status)
        self.backend.currentIndexChanged.connect(self._backend_changed)
        for w in (self.path, self.host, self.base_url):
            w.textChanged.connect(self.changed)
        self.backend.currentIndexChanged.connect(self.changed)

    def _model_row(self) -> tuple[QComboBox, QWidget]:
        box = QComboBox()
        box.setEditable(True)
        box.lineEdit().setPlaceholderText("(the model loaded on the server)")
        box.currentTextChanged.connect(self.changed)
        refresh = QPushButton("Refresh list")
        refresh.setToolTip("Ask the server which models it has")
        refresh.clicked.connect(self.refresh_models)
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(box, 1)
        row.addWidget(refresh)
        return box, holder

    def _backend_changed(self) -> None:
        self.pages.setCurrentIndex(self.backend.currentIndex())
        self.list_status.setText("")

    def _catalog_chosen(self) -> None:
        self.path.setText(self.catalog.currentData() or "")

    def _browse(self) -> None:
        start = str(Path(self.path.text()).parent) if self.path.text() else str(paths.models_dir())
        file, _ = QFileDialog.getOpenFileName(self, f"Choose the {self.role} model", start, "GGUF models (*.gguf);;All files (*)")
        if file:
            self.path.setText(file)

    def refresh_models(self) -> None:
        if self._list_models is None:
            return
        cfg = self.config(ModelConfig())
        self.list_status.setText("Asking the server…")
        self._handle = self._list_models(cfg)
        self._handle.finished.connect(self._models_listed)
        self._handle.failed.connect(lambda exc: self.list_status.setText(getattr(exc, "message", str(exc))))

    def _models_listed(self, models: list) -> None:
        wanted = "embedding" if self.role == "embedding" else "llm"
        box = self.lms_model if self.backend.currentData() == "lmstudio" else self.oai_model
        current = box.currentText()
        box.clear()
        box.addItem("")
        fitting = [m for m in models if not m.kind or m.kind == wanted]
        for m in fitting:
            box.addItem(m.id + ("  (loaded)" if m.loaded else ""), m.id)
        box.setCurrentText(current)
        self.list_status.setText(f"{len(fitting)} {self.role} model{'s' if len(fitting) != 1 else ''} on the server.")

    # -- values -------------------------------------------------------------------------
    def load(self, cfg: ModelConfig) -> None:
        self.backend.setCurrentIndex(max(0, self.backend.findData(cfg.backend)))
        self._backend_changed()
        self.path.setText(cfg.path)
        index = self.catalog.findData(cfg.path)
        self.catalog.setCurrentIndex(max(0, index))
        self.context.setValue(cfg.context_length)
        self.threads.setValue(cfg.threads)
        self.host.setText(cfg.host)
        self.base_url.setText(cfg.base_url)
        self.api_key.setText(cfg.api_key)
        self.lms_model.setCurrentText(cfg.model if cfg.backend == "lmstudio" else "")
        self.oai_model.setCurrentText(cfg.model if cfg.backend == "openai" else "")

    def config(self, base: ModelConfig) -> ModelConfig:
        cfg = copy.deepcopy(base)
        cfg.backend = self.backend.currentData()
        cfg.path = self.path.text().strip()
        cfg.context_length = self.context.value()
        cfg.threads = self.threads.value()
        cfg.host = self.host.text().strip() or "localhost:1234"
        cfg.base_url = self.base_url.text().strip() or cfg.base_url
        cfg.api_key = self.api_key.text() or "not-needed"
        box = {"lmstudio": self.lms_model, "openai": self.oai_model}.get(cfg.backend)
        if box is not None:
            # A listed model carries its key as item data; typed text is taken as the key.
            listed = box.currentData() and box.itemText(box.currentIndex()) == box.currentText()
            cfg.model = box.currentData() if listed else box.currentText().replace("  (loaded)", "").strip()
        if cfg.path != base.path:
            cfg.catalog_id = _catalog_id_for(cfg.path)
        return cfg


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
        self.citation_style.setToolTip("How the prompt asks the model to cite. Answers always show [PAPER_ID, page N].")
        self.timeout = QSpinBox()
        self.timeout.setRange(10, 7200)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(int(r.synthesis_timeout_s))
        self.deep_time = QSpinBox()
        self.deep_time.setRange(0, 240)
        self.deep_time.setSuffix(" min")
        self.deep_time.setSpecialValueText("Unlimited")
        self.deep_time.setValue(int(settings.deep.time_minutes or 0))
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
