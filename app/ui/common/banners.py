"""Non-modal messages at the top of a pane, with the action that fixes the problem.

Every core error carries `message`, `hint` and `action` (choose-model,
start-lmstudio, reindex, retry); a banner shows the first two and turns the
action into a button. The owner connects `action_requested(action)`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QVBoxLayout, QWidget

from app.core.errors import ResearchDeskError

from . import theme

ACTION_LABELS = {
    "choose-model": "Choose a model…",
    "start-lmstudio": "Start LM Studio",
    "reindex": "Re-index",
    "rebuild": "Rebuild index",
    "retry": "Retry",
    "setup-models": "Set up models…",
    "settings": "Open Settings…",
    "details": "Details…",
    "calibrate-judge": "Calibrate now…",
}


def error_action(exc: BaseException) -> str:
    """The fixing action of an error, looking through wrappers.

    The funnel wraps a model-loading failure in SynthesisFailed ("retry"),
    but when the cause is LM Studio not running, starting it is the fix.
    """
    cause = exc.__cause__
    if isinstance(cause, ResearchDeskError) and cause.action and cause.action != "retry":
        return cause.action
    return getattr(exc, "action", "") or ""


def error_text(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, ResearchDeskError):
        return exc.message, exc.hint
    return f"Unexpected error: {exc}", "This is a bug; its details are in the log file (Help → Copy diagnostics)."


class Banner(QFrame):
    action_requested = Signal(str)
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setProperty("kind", "info")
        self.kind = "info"
        self.actions: list[str] = []
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 8, 6, 8)
        layout.setSpacing(10)
        self._icon = QLabel()
        self._icon.setFixedSize(20, 20)
        layout.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        text = QVBoxLayout()
        text.setSpacing(2)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setStyleSheet("font-weight: 600;")
        self.hint = QLabel()
        self.hint.setObjectName("bannerHint")
        self.hint.setWordWrap(True)
        self.hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text.addWidget(self.message)
        text.addWidget(self.hint)
        self._buttons = QHBoxLayout()
        self._buttons.setSpacing(6)
        self._buttons.addStretch(1)
        text.addLayout(self._buttons)
        layout.addLayout(text, 1)
        close = QToolButton()
        close.setObjectName("flat")
        close.setIcon(theme.icon("close", 14))
        close.setToolTip("Dismiss")
        close.clicked.connect(self.dismiss)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_message(self, kind: str, message: str, hint: str = "", actions: list[str] | tuple[str, ...] = ()) -> None:
        """kind: info | warning | error. actions: keys of ACTION_LABELS (or 'key:Label')."""
        self.kind = kind
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        self._icon.setPixmap(theme.icon(f"banner-{kind}", 20).pixmap(20, 20))
        self.message.setText(message)
        self.hint.setText(hint)
        self.hint.setVisible(bool(hint))
        while self._buttons.count() > 1:
            item = self._buttons.takeAt(1)
            if item.widget():
                item.widget().deleteLater()
        self.actions = []
        for action in actions:
            key, _, label = action.partition(":")
            button = QPushButton(label or ACTION_LABELS.get(key, key))
            button.setObjectName("bannerAction")
            button.clicked.connect(lambda _=False, k=key: self.action_requested.emit(k))
            self._buttons.addWidget(button)
            self.actions.append(key)
        self.show()
        self._fit_height()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        # Wrapped labels report their height only for a given width; a pane
        # short of space would otherwise clip the hint's last line.
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            self.setMinimumHeight(layout.heightForWidth(self.width()))

    def show_error(self, exc: BaseException, extra_actions: tuple[str, ...] = ()) -> None:
        message, hint = error_text(exc)
        action = error_action(exc)
        own = getattr(exc, "action", "") or ""
        # The cause's fix first (start LM Studio, choose a model), then the error's own (retry).
        actions = [a for a in (action, own, *extra_actions) if a]
        if action == "start-lmstudio" and "settings" not in actions:
            actions.append("settings")
        self.show_message("error", message, hint, list(dict.fromkeys(actions)))

    def dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
