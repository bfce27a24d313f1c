"""The window's wiring for reading: the library's text search and the viewer's reading positions.

Kept out of main_window.py, which builds the panes: one call there connects these.
"""

from __future__ import annotations

from .text_search_panel import TextSearchController


def wire_reader(window) -> TextSearchController:
    """Text search in the library pane (a hit opens the viewer there); reading positions per library."""
    viewer = window.pdf_viewer
    window.library.snapshot_loaded.connect(lambda snap: viewer.positions.set_library(snap.location))
    return TextSearchController(window)
