"""The viewer's own keys, active while the focus is in the viewer.

F3 / Shift+F3 next / previous match (the find bar opens if closed), Escape closes the find bar,
Page Up / Page Down the previous / next page, Home / End (and Ctrl+Home / Ctrl+End) the first /
last page, Ctrl+G the page number box. A line edit or the page box keeps its own Home and End
(Qt lets a focused editor override them).

Ctrl+F, zoom (Ctrl++ / Ctrl+=, Ctrl+-) and fit width (Ctrl+0) are the window's menu actions
(menus.py): Ctrl+F is also the library's filter key, and a key claimed twice is ignored by Qt,
so the one action finds in the PDF when the focus is in the viewer.
"""

from __future__ import annotations


from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget


def install_shortcuts(viewer: QWidget) -> dict[str, list[QShortcut]]:  # viewer: the PdfViewer, which imports this
    """Create the viewer's shortcuts; returned by action (for tests and the help)."""
    bar = viewer.find_bar

    def find_next(step: int) -> None:
        if bar.isVisible() and bar.edit.text().strip():
            bar.step(step)
        else:
            bar.open_bar()

    actions = {
        "find next": (["F3"], lambda: find_next(1)),
        "find previous": (["Shift+F3"], lambda: find_next(-1)),
        "close find": (["Esc"], lambda: bar.isVisible() and bar.close_bar()),
        "next page": (["PgDown"], lambda: viewer.go_to(viewer.current_page + 1)),
        "previous page": (["PgUp"], lambda: viewer.go_to(viewer.current_page - 1)),
        "first page": (["Home", "Ctrl+Home"], lambda: viewer.go_to(1)),
        "last page": (["End", "Ctrl+End"], lambda: viewer.go_to(viewer.document.pageCount())),
        "go to page": (["Ctrl+G"], lambda: (viewer.page_box.setFocus(Qt.FocusReason.ShortcutFocusReason), viewer.page_box.selectAll())),
    }
    made: dict[str, list[QShortcut]] = {}
    for name, (keys, slot) in actions.items():
        for key in keys:
            shortcut = QShortcut(QKeySequence(key), viewer)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
            made.setdefault(name, []).append(shortcut)
    return made
