"""The PDF viewer's painting parts: a page image with highlight rectangles, and a label that elides."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """A one-line label that shows "…" instead of forcing its parent wider."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(40, self.width())))


class PageCanvas(QWidget):
    """Paints one page image at `scale` px per point, and highlight rectangles."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.page_size = QSizeF(612, 792)  # points
        self.scale = 1.0
        self.image: QImage | None = None
        self.rects: list[tuple[float, float, float, float]] = []  # the cited passage
        self.found: list[tuple[float, float, float, float]] = []  # the find bar's other matches on this page
        self.found_current: list[tuple[float, float, float, float]] = []  # and its current one
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def set_geometry_points(self, page_size: QSizeF, scale: float) -> None:
        self.page_size = page_size
        self.scale = scale
        self.setFixedSize(self.pixel_size())
        self.update()

    def pixel_size(self) -> QSize:
        return QSize(max(1, round(self.page_size.width() * self.scale)), max(1, round(self.page_size.height() * self.scale)))

    def to_pixels(self, rect: tuple[float, float, float, float]) -> QRectF:
        x0, y0, x1, y1 = rect
        s = self.scale
        return QRectF(x0 * s, y0 * s, (x1 - x0) * s, (y1 - y0) * s)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        target = QRectF(0, 0, self.width(), self.height())
        painter.fillRect(target, QColor("white"))
        if self.image is not None and not self.image.isNull():
            painter.drawImage(target, self.image)
        else:
            painter.setPen(QColor("#8c959f"))
            painter.drawText(target, Qt.AlignmentFlag.AlignCenter, "Rendering…")
        if self.rects:
            # Multiply keeps the text readable under the marker colour.
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
            fill = QColor(255, 230, 110)  # a marker yellow; multiplied, the print stays black
            for r in self.rects:
                px = self.to_pixels(r).adjusted(-2, -1, 2, 1)
                painter.fillRect(px, fill)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
            # A bar in the margin marks the passage even when zoomed out.
            top = min(self.to_pixels(r).top() for r in self.rects)
            bottom = max(self.to_pixels(r).bottom() for r in self.rects)
            left = min(self.to_pixels(r).left() for r in self.rects)
            painter.setPen(QPen(QColor(230, 160, 0), 3))
            x = max(3.0, left - 8)
            painter.drawLine(int(x), int(top), int(x), int(bottom))
        if self.found or self.found_current:
            # Find matches in another colour than the passage's yellow: a light blue, the current one stronger and outlined.
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
            for rects, fill in ((self.found, QColor(170, 215, 255)), (self.found_current, QColor(255, 160, 60))):
                for r in rects:
                    painter.fillRect(self.to_pixels(r).adjusted(-1, -1, 1, 1), fill)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
            painter.setPen(QPen(QColor(200, 90, 0), 2))
            for r in self.found_current:
                painter.drawRect(self.to_pixels(r).adjusted(-2, -2, 2, 2))
        painter.setPen(QPen(QColor(0, 0, 0, 40), 1))
        painter.drawRect(target.adjusted(0, 0, -1, -1))
        painter.end()
