"""One model's settings (backend, then its file, host or URL, and model name): a group box
the settings dialog shows once for the chat model and once for the embedding model."""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QWidget,
)

from app.core import paths
from app.core.desk import Desk
from app.core.errors import ResearchDeskError
from app.core.settings import ModelConfig

log = logging.getLogger(__name__)

BACKENDS = (
    ("llamacpp", "llama.cpp — a GGUF file, run in-process"),
    ("lmstudio", "LM Studio — local or on another machine"),
    ("openai", "OpenAI-compatible server (llama.cpp server, vLLM, …)"),
)

def _catalog_files(role: str) -> list[tuple[str, str]]:
    """(label, path) of catalog models for a role, installed ones first. Only stats files."""
    try:
        rows = Desk.catalog_models(role)
    except ResearchDeskError as exc:  # a broken catalog must not break the dialog
        log.warning("model catalog unreadable: %s", exc.message)
        return []
    return [(f"{r.name} (installed)", r.where) for r in rows if r.installed]


def _catalog_id_for(path: str) -> str:
    try:
        return Desk.catalog_id_for(path)
    except ResearchDeskError as exc:
        log.warning("model catalog unreadable: %s", exc.message)
        return ""


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


