"""Where each paper was being read (page, zoom, place on the page), kept per library.

Kept with the window's other state (QSettings, window.ini in the config folder), not in the
library: a reading position is one reader's, and a library shared on object storage is read by
several. Each library has its own group, named by a hash of its location, so two libraries with
a paper of the same id keep two positions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from app.core import paths


GROUP = "reading"


@dataclass(frozen=True)
class Position:
    page: int  # 1-based
    scale: float  # pixels per point; 0 = fit width
    scroll: float  # 0–1: how far down the page the view's top is


def _settings() -> QSettings:
    return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)


class ReadingPositions:
    def __init__(self) -> None:
        self._qs = _settings()
        self._library = ""

    def set_library(self, location: str) -> None:
        self._library = hashlib.sha1(location.rstrip("/").encode("utf-8")).hexdigest()[:12] if location else ""

    def _key(self, paper_key: str) -> str:
        return f"{GROUP}/{self._library or 'none'}/{paper_key}"

    def get(self, paper_key: str) -> Position | None:
        value = self._qs.value(self._key(paper_key))
        try:
            page, scale, scroll = (float(x) for x in str(value).split(","))
        except ValueError:
            return None  # never read, or written by something else
        return Position(max(1, int(page)), max(0.0, scale), min(1.0, max(0.0, scroll)))

    def put(self, paper_key: str, position: Position) -> None:
        self._qs.setValue(self._key(paper_key), f"{position.page},{position.scale:.4f},{position.scroll:.4f}")

    def sync(self) -> None:
        self._qs.sync()

    # -- the viewer's side (a PdfViewer, typed QWidget: it imports this module) ---------------
    @staticmethod
    def paper_key(viewer: QWidget) -> str:
        return viewer.paper.id if viewer.paper else (viewer.path.name if viewer.path else "")

    def remember(self, viewer: QWidget) -> None:
        """Keep where the viewer's paper is being read."""
        if viewer.path is None or viewer.current_page <= 0:
            return
        bar = viewer.scroll.verticalScrollBar()
        self.put(self.paper_key(viewer), Position(viewer.current_page, 0.0 if viewer._fit_width else viewer._scale,  # noqa: SLF001
                                                  bar.value() / bar.maximum() if bar.maximum() > 0 else 0.0))

    def restore(self, viewer: QWidget) -> int:
        """The page to open the viewer's paper at, its zoom set and its place on the page pending."""
        kept = self.get(self.paper_key(viewer))
        if kept is None:
            return 1
        viewer._fit_width = kept.scale <= 0  # noqa: SLF001 - the viewer's zoom state, restored
        viewer._scale = kept.scale or viewer._scale  # noqa: SLF001
        viewer._pending_scroll = kept.scroll  # noqa: SLF001
        return min(kept.page, viewer.document.pageCount())
