"""The question box (app/ui/research/question_box.py): Enter runs, the history walks."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent

from app.ui.research.question_box import QuestionBox


def test_question_box_enter_runs_and_history_walks(qtbot):
    box = QuestionBox()
    qtbot.addWidget(box)
    box.set_history(["first question", "second question"])
    with qtbot.waitSignal(box.submitted) as sig:
        box.setPlainText("new question")
        qtbot.keyClick(box, Qt.Key.Key_Return)
    assert sig.args == ["new question"]
    box.remember("new question")
    box.clear()
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "new question"
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "second question"
    qtbot.keyClick(box, Qt.Key.Key_Down)
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.toPlainText() == ""
    box.setPlainText("line one")
    box.keyPressEvent(QKeyEvent(QKeyEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier))
    assert "\n" in box.toPlainText()  # Shift+Enter breaks the line
