"""Drag-and-drop of PDFs and folders: which dropped paths count, and the overlay that says so."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtWidgets import QLabel, QWidget


def local_paths(mime: QMimeData) -> list[str]:
    """Dropped local PDFs and folders (folders are searched recursively by the importer)."""
    if not mime.hasUrls():
        return []
    found = []
    for url in mime.urls():
        if not url.isLocalFile():
            continue
        path = Path(url.toLocalFile())
        if path.is_dir() or path.suffix.lower() == ".pdf":
            found.append(str(path))
    return found


class DropOverlay(QLabel):
    """A translucent sheet over the window while files are dragged over it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setText("Drop PDFs or folders to add them to the library")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setStyleSheet(
            "background: rgba(47, 98, 201, 40); border: 3px dashed rgba(47, 98, 201, 200);"
            "border-radius: 12px; font-size: 16pt; font-weight: 600; color: #2f62c9;"
        )
        self.hide()

    def show_over(self, window: QWidget) -> None:
        self.setGeometry(window.rect().adjusted(12, 12, -12, -12))
        self.raise_()
        self.show()
