"""The window's wiring for reading: the library's text search, the viewer's reading positions,
and the accessible names of every control (accessibility.py).

Kept out of main_window.py, which builds the panes: one call there connects these.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from ..common.accessibility import name_on_focus, name_window
from .text_search_panel import TextSearchController


def wire_reader(window) -> TextSearchController:
    """Text search in the library pane (a hit opens the viewer there); reading positions per library."""
    viewer = window.pdf_viewer
    window.library.snapshot_loaded.connect(lambda snap: viewer.positions.set_library(snap.location))
    controller = TextSearchController(window)
    # Once the window is built (menus, toolbar and the panes added after this call), before it is used.
    QTimer.singleShot(0, window, lambda: name_window(window))
    if not getattr(QApplication.instance(), "_names_on_focus", False):
        QApplication.instance()._names_on_focus = True  # one hook for the process, whatever the windows
        name_on_focus(QApplication.instance())
    return controller
