"""The Draft tab: the form and live progress on the left, the drafted section on the right.

The pane only says what the user asked for (draft / cancel / open a
citation / save files); DraftController turns that into worker jobs.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.desk import SECTIONS

from ..common import theme
from ..common.banners import Banner
from .form import DraftForm
from .progress import DraftProgress
from .view import DraftView


class DraftPane(QWidget):
    draft_requested = Signal(str, object, object)  # section key, DraftContext, minutes (None = unlimited)
    cancel_requested = Signal()
    action_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.running = False

        left = QWidget()
        left.setObjectName("pane")
        column = QVBoxLayout(left)
        column.setContentsMargins(10, 10, 10, 8)
        column.setSpacing(8)
        title = QLabel("Draft a section")
        title.setObjectName("paneTitle")
        subtitle = QLabel("From a description of your own work, with citations from your library.")
        subtitle.setObjectName("muted")
        subtitle.setWordWrap(True)
        column.addWidget(title)
        column.addWidget(subtitle)
        self.banner = Banner()  # run errors, as the research pane shows them
        self.banner.action_requested.connect(self.action_requested)
        column.addWidget(self.banner)

        self.form = DraftForm()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        holder = QWidget()
        holder.setObjectName("pane")
        inner = QVBoxLayout(holder)
        inner.setContentsMargins(0, 0, 4, 0)
        inner.addWidget(self.form)
        inner.addStretch(1)
        scroll.setWidget(holder)
        self.form_scroll = scroll
        column.addWidget(scroll, 1)

        run_row = QHBoxLayout()
        self.queue_label = QLabel("")
        self.queue_label.setObjectName("muted")
        self.queue_label.setWordWrap(True)
        run_row.addWidget(self.queue_label, 1)
        self.draft_button = QPushButton(theme.icon("run", 16), "Draft")
        self.draft_button.setObjectName("primary")
        self.draft_button.setMinimumWidth(110)
        self.draft_button.setToolTip("Search the library and write the section (Ctrl+Enter)")
        self.draft_button.clicked.connect(self._draft_clicked)
        run_row.addWidget(self.draft_button)
        column.addLayout(run_row)

        self.progress = DraftProgress()
        column.addWidget(self.progress)

        self.view = DraftView()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("draftSplitter")
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.view)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([390, 610])
        left.setMinimumWidth(320)  # the form's file buttons side by side, without clipping
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(self._shortcut)
        self.view.action_requested.connect(self.action_requested)

    # -- draft / cancel --------------------------------------------------------------------
    def _shortcut(self) -> None:
        if not self.running:
            self._draft_clicked()

    def _draft_clicked(self) -> None:
        if self.running:
            self.draft_button.setEnabled(False)
            self.draft_button.setText("Cancelling…")
            self.cancel_requested.emit()
            return
        context = self.form.validate()
        if context is None:
            return
        self.form.banner.hide()
        self.draft_requested.emit(self.form.section_key, context, self.form.time_minutes())

    def set_running(self, running: bool) -> None:
        self.running = running
        self.draft_button.setEnabled(True)
        if running:
            self.draft_button.setText("Cancel")
            self.draft_button.setIcon(theme.icon("stop", 16))
            self.draft_button.setObjectName("")
        else:
            self.draft_button.setText("Draft")
            self.draft_button.setIcon(theme.icon("run", 16))
            self.draft_button.setObjectName("primary")
            self.queue_label.hide()
        for w in (self.form.section, self.form.budget, self.form.load_button):
            w.setEnabled(not running)  # the run uses what was asked; editing the text stays possible
        self.draft_button.style().unpolish(self.draft_button)
        self.draft_button.style().polish(self.draft_button)

    def set_queued(self, text: str) -> None:
        self.queue_label.setText(text)
        self.queue_label.setVisible(bool(text))

    def section_title(self) -> str:
        return SECTIONS.get(self.form.section_key, "Section")

    # -- state between sessions ------------------------------------------------------------
    def save_state(self, qs) -> None:
        """Into QSettings: the form (so a half-written description survives a restart) and the split."""
        qs.beginGroup("draft")
        for key, value in self.form.state().items():
            qs.setValue(key, value)
        qs.setValue("splitter", self.splitter.saveState())
        qs.endGroup()

    def restore_state(self, qs) -> None:
        from PySide6.QtCore import QByteArray

        qs.beginGroup("draft")
        state = {key: qs.value(key) for key in qs.childKeys()}
        qs.endGroup()
        if state:
            self.form.restore(state)
        split = state.get("splitter")
        if isinstance(split, QByteArray) and not split.isEmpty():
            self.splitter.restoreState(split)
