"""The question box: Enter runs, Shift+Enter breaks the line, Up/Down walk the history."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

MAX_HISTORY = 100


class QuestionBox(QPlainTextEdit):
    submitted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("questionBox")
        self.setPlaceholderText("Ask a question about your papers…")
        self.setToolTip("Enter runs the question · Shift+Enter starts a new line · Up/Down recall earlier questions")
        self.setTabChangesFocus(True)
        self.history: list[str] = []
        self._pos = 0  # == len(history): editing a new question
        self._draft = ""
        line = self.fontMetrics().lineSpacing()
        self.setFixedHeight(int(line * 3 + 18))

    def set_history(self, items: list[str]) -> None:
        self.history = list(items)[-MAX_HISTORY:]
        self._pos = len(self.history)

    def remember(self, question: str) -> None:
        if question in self.history:
            self.history.remove(question)
        self.history.append(question)
        self.history = self.history[-MAX_HISTORY:]
        self._pos = len(self.history)
        self._draft = ""

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        key = event.key()
        mods = event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & Qt.KeyboardModifier.ShiftModifier:
            text = self.toPlainText().strip()
            if text:
                self.submitted.emit(text)
            return
        cursor = self.textCursor()
        if key == Qt.Key.Key_Up and not cursor.hasSelection() and cursor.blockNumber() == 0:
            self._walk(-1)
            return
        if key == Qt.Key.Key_Down and not cursor.hasSelection() and cursor.blockNumber() == self.blockCount() - 1:
            self._walk(1)
            return
        super().keyPressEvent(event)

    def _walk(self, step: int) -> None:
        if not self.history:
            return
        if self._pos == len(self.history):
            self._draft = self.toPlainText()
        new = max(0, min(len(self.history), self._pos + step))
        if new == self._pos:
            return
        self._pos = new
        self.setPlainText(self.history[new] if new < len(self.history) else self._draft)
        self.moveCursor(QTextCursor.MoveOperation.End)

    # Dropped files belong to the library, not into the question text.
    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.ignore()
            return
        super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.ignore()
            return
        super().dragMoveEvent(event)

    def dropEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.ignore()
            return
        super().dropEvent(event)
