"""The PDF viewer: one page at a time, the cited passage highlighted.

Pages are rendered by QtPdf (`QPdfDocument` + `QPdfPageRenderer` in its
multi-threaded mode, so a 50–70 ms render never runs on the UI thread) and
painted by our own canvas, which also paints the highlight rectangles. We
draw the page ourselves rather than overlaying a QPdfView because the
highlight must sit exactly on the words: here the page image and the
rectangles share one coordinate system (PDF points × our scale), with no
guessing at QPdfView's internal layout, and it renders identically offscreen
(tests, screenshots) and on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QPoint, QRunnable, QSize, QSizeF, Qt, QThreadPool, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices, QImage
from PySide6.QtPdf import QPdfDocument, QPdfDocumentRenderOptions, QPdfPageRenderer
from PySide6.QtWidgets import (
    QFrame,
    QPushButton,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.records import Paper

from ..common import theme
from .page_canvas import ElidedLabel, PageCanvas
from .find import FindBar
from .highlight import PageHighlight, locate_passage
from .reading_position import ReadingPositions
from .keys import install_shortcuts

PAGE_MARGIN = 16  # px around the page inside the scroll area
MIN_SCALE, MAX_SCALE = 0.25, 6.0


class _LocateSignals(QObject):
    done = Signal(int, object)  # token, PageHighlight | Exception


class _LocateTask(QRunnable):
    """Finds the passage's rectangles off the UI thread (PyMuPDF takes 40–80 ms a page)."""

    def __init__(self, token: int, path: Path, page: int, text: str, signals: _LocateSignals) -> None:
        super().__init__()
        self.token, self.path, self.page, self.text, self.signals = token, path, page, text, signals

    def run(self) -> None:
        try:
            result: object = locate_passage(self.path, self.page, self.text)
        except Exception as exc:  # noqa: BLE001 - reported in the viewer's info line
            result = exc
        self.signals.done.emit(self.token, result)


@dataclass
class Passage:
    """What to highlight: the evidence text and a label for the info line."""

    text: str
    label: str = ""  # e.g. "Source 3 · §2 Methods"


class PdfViewer(QWidget):
    """Header (title, page navigation, zoom, system viewer) over a scrolling page."""

    page_changed = Signal(int)  # 1-based
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        self.path: Path | None = None
        self.paper: Paper | None = None
        self.current_page = 0  # 1-based; 0 when no document
        self.highlight: PageHighlight | None = None
        self._passage: Passage | None = None
        self._passage_page = 0
        self._fit_width = True
        self._scale = 1.0
        self._request_id = -1
        self._images: dict[tuple[int, int], QImage] = {}
        self.positions = ReadingPositions()
        self._pending_scroll: float | None = None  # a restored place on the page, applied once laid out

        # QtPdf objects are parented to this widget so they die with it, in order.
        self.document = QPdfDocument(self)
        self.renderer = QPdfPageRenderer(self)
        self.renderer.setRenderMode(QPdfPageRenderer.RenderMode.MultiThreaded)
        self.renderer.setDocument(self.document)
        self.renderer.pageRendered.connect(self._on_rendered)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._locate_signals = _LocateSignals(self)
        self._locate_signals.done.connect(self._on_located, Qt.ConnectionType.QueuedConnection)
        self._locate_token = 0

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._build_header())
        self.find_bar = FindBar(self)
        layout.addWidget(self.find_bar)
        self.info = QLabel()
        self.info.setObjectName("muted")
        self.info.setWordWrap(True)
        self.info.setContentsMargins(10, 4, 10, 4)
        layout.addWidget(self.info)

        self.scroll = QScrollArea()
        self.scroll.setObjectName("pdfCanvasBackground")
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidgetResizable(True)
        self.scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        holder = QFrame()
        holder.setObjectName("pdfCanvasBackground")
        hl = QVBoxLayout(holder)
        hl.setContentsMargins(PAGE_MARGIN, PAGE_MARGIN, PAGE_MARGIN, PAGE_MARGIN)
        self.canvas = PageCanvas()
        hl.addWidget(self.canvas, 0, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.scroll.setWidget(holder)
        self.scroll.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the viewer's keys work once it is clicked or tabbed to
        self.scroll.setAccessibleName("PDF page")
        layout.addWidget(self.scroll, 1)

        self._resize_timer = QTimer(self, singleShot=True, interval=80)
        self._resize_timer.timeout.connect(self._relayout)
        self._remember_timer = QTimer(self, singleShot=True, interval=400)  # scrolling: saved once it stops
        self._remember_timer.timeout.connect(self.remember)
        self.scroll.verticalScrollBar().valueChanged.connect(lambda _v: self._remember_timer.start())
        self.shortcuts = install_shortcuts(self)
        self._update_header()

    # -- header -------------------------------------------------------------------
    def _build_header(self) -> QWidget:
        """Row 1: the paper's title. Row 2: page navigation, zoom, system viewer, close."""
        bar = QWidget()
        rows = QVBoxLayout(bar)
        rows.setContentsMargins(10, 6, 6, 2)
        rows.setSpacing(2)
        top = QHBoxLayout()
        self.title = ElidedLabel("No document")
        self.title.setObjectName("paneTitle")
        top.addWidget(self.title, 1)
        row = QHBoxLayout()
        row.setSpacing(4)

        def tool(name: str, tip: str, slot, where: QHBoxLayout = row) -> QToolButton:
            b = QToolButton()
            b.setObjectName("flat")
            b.setIcon(theme.icon(name, 18))
            b.setToolTip(tip)
            b.clicked.connect(slot)
            where.addWidget(b)
            return b

        self.close_button = tool("close", "Close the viewer", self.closed.emit, top)
        self.prev_button = tool("prev", "Previous page (Page Up)", lambda: self.go_to(self.current_page - 1))
        self.page_box = QSpinBox()
        self.page_box.setMinimum(1)
        self.page_box.setKeyboardTracking(False)
        self.page_box.setFixedWidth(70)
        self.page_box.setToolTip("PDF page number")
        self.page_box.valueChanged.connect(self.go_to)
        row.addWidget(self.page_box)
        self.page_of = QLabel("of 0")
        self.page_of.setObjectName("muted")
        row.addWidget(self.page_of)
        self.next_button = tool("next", "Next page (Page Down)", lambda: self.go_to(self.current_page + 1))
        row.addStretch(1)
        tool("zoom-out", "Zoom out", lambda: self.zoom_by(1 / 1.2))
        tool("zoom-in", "Zoom in", lambda: self.zoom_by(1.2))
        self.fit_button = tool("fit-width", "Fit width", self.fit_width)
        row.addSpacing(6)
        self.external_button = QPushButton(theme.icon("external", 16), "Open in system viewer")
        self.external_button.setToolTip("Open the PDF in your usual PDF application")
        self.external_button.clicked.connect(self.open_external)
        row.addWidget(self.external_button)
        rows.addLayout(top)
        rows.addLayout(row)
        return bar

    def _update_header(self) -> None:
        count = self.document.pageCount() if self.path else 0
        has = count > 0
        for w in (self.prev_button, self.next_button, self.page_box, self.external_button, self.fit_button):
            w.setEnabled(has)
        self.page_box.blockSignals(True)
        self.page_box.setMaximum(max(1, count))
        self.page_box.setValue(max(1, self.current_page))
        self.page_box.blockSignals(False)
        label = self.page_label(self.current_page) if has else ""
        printed = f" · printed page {label}" if label and label != str(self.current_page) else ""
        self.page_of.setText(f"of {count}{printed}")
        if has:
            self.prev_button.setEnabled(self.current_page > 1)
            self.next_button.setEnabled(self.current_page < count)

    # -- opening -----------------------------------------------------------------------
    def open_document(self, path: str | Path, paper: Paper | None = None, page: int = 0, passage: Passage | None = None) -> bool:
        """Show `path` at 1-based `page`, highlighting `passage` there if given; page 0: where it was last read."""
        path = Path(path)
        if self.path != path:
            self.remember()
            self._images.clear()
            self.document.close()
            error = self.document.load(str(path))
            if error != QPdfDocument.Error.None_ or self.document.pageCount() == 0:
                self.path = None
                self.current_page = 0
                self.title.set_full_text(path.name)
                self.info.setText(f"This PDF cannot be shown ({error.name}). Try “Open in system viewer”.")
                self._update_header()
                return False
            self.path = path
            self.find_bar.document_changed()
        self.paper = paper
        if page <= 0:
            page = self.positions.restore(self)
        self.title.set_full_text(f"{paper.title} ({paper.id})" if paper else path.name)
        self._passage = passage
        self._passage_page = page if passage else 0
        self._show_page(page)
        return True

    def remember(self) -> None:
        """Keep where the current paper is being read (page, zoom, place on the page)."""
        self.positions.remember(self)

    def go_to(self, page: int) -> None:
        if self.path is None:
            return
        page = max(1, min(int(page), self.document.pageCount()))
        if page != self.current_page:
            self._show_page(page)

    def page_label(self, page: int) -> str:
        """The page number as printed on the page (from the library, else the PDF)."""
        if page <= 0:
            return ""
        if self.paper and len(self.paper.page_labels) >= page and self.paper.page_labels[page - 1]:
            return self.paper.page_labels[page - 1]
        return self.document.pageLabel(page - 1) or str(page)

    def _show_page(self, page: int) -> None:
        self.current_page = page
        self.highlight = None
        self.canvas.rects = []
        self.canvas.found, self.canvas.found_current = self.find_bar.marks_for(page)
        self._locate_token += 1  # a late result for another page is dropped
        locating = self._passage is not None and page == self._passage_page and self.path is not None
        if locating:
            self._pool.start(_LocateTask(self._locate_token, self.path, page, self._passage.text, self._locate_signals))
        self._update_info(locating=locating)
        self._update_header()
        self._relayout(scroll_to_highlight=True)  # to the top until the passage is found
        self.page_changed.emit(page)
        self.remember()

    @Slot(int, object)
    def _on_located(self, token: int, result: object) -> None:
        if token != self._locate_token:
            return
        if isinstance(result, Exception):
            self.info.setText(f"Could not search page {self.current_page} for the passage ({result}).")
            return
        self.highlight = result  # type: ignore[assignment]
        self.canvas.rects = list(self.highlight.rects)
        self.canvas.update()
        self._update_info()
        QTimer.singleShot(0, self, self._scroll_to_highlight)

    def _update_info(self, locating: bool = False) -> None:
        if self._passage is None or self.current_page != self._passage_page:
            self.info.setText("")
            self.info.setVisible(False)
            return
        self.info.setVisible(True)
        label = self._passage.label
        if locating:
            self.info.setText("Finding the passage on this page…")
        elif self.highlight is not None and self.highlight.found:
            lines = len(self.highlight.rects)
            self.info.setText((f"{label} · " if label else "") + f"passage highlighted ({lines} line{'s' if lines != 1 else ''})")
        else:
            self.info.setText("The passage could not be located in this page's text layer; the page is shown without highlight.")

    # -- layout and rendering ---------------------------------------------------------
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._fit_width:
            self._resize_timer.start()

    def fit_width(self) -> None:
        self._fit_width = True
        self._relayout()

    def zoom_by(self, factor: float) -> None:
        self._fit_width = False
        self._scale = max(MIN_SCALE, min(MAX_SCALE, self._scale * factor))
        self._relayout()

    def _page_points(self) -> QSizeF:
        size = self.document.pagePointSize(self.current_page - 1)
        return size if size.width() > 0 else QSizeF(612, 792)

    def _relayout(self, scroll_to_highlight: bool = False) -> None:
        if self.path is None or self.current_page <= 0:
            return
        points = self._page_points()
        if self._fit_width:
            available = self.scroll.viewport().width() - 2 * PAGE_MARGIN - 2
            self._scale = max(MIN_SCALE, min(MAX_SCALE, available / points.width()))
        self.canvas.set_geometry_points(points, self._scale)
        self._request_render()
        if scroll_to_highlight:
            # After the scroll area has taken the new canvas size.
            QTimer.singleShot(0, self, self._scroll_to_highlight)

    def _request_render(self) -> None:
        ratio = self.devicePixelRatioF() or 1.0
        size = self.canvas.pixel_size() * ratio
        key = (self.current_page, size.width())
        cached = self._images.get(key)
        if cached is not None:
            self.canvas.image = cached
            self.canvas.update()
            return
        # Keep showing the old image of this page (scaled) until the new one arrives.
        if self.canvas.image is not None and getattr(self.canvas, "_image_page", 0) != self.current_page:
            self.canvas.image = None
        options = QPdfDocumentRenderOptions()
        self._request_id = self.renderer.requestPage(self.current_page - 1, size, options)
        self.canvas.update()

    def _on_rendered(self, page_index: int, size: QSize, image: QImage, options, request_id: int) -> None:
        if len(self._images) > 8:
            self._images.pop(next(iter(self._images)))
        self._images[(page_index + 1, size.width())] = image
        if page_index + 1 == self.current_page:
            self.canvas.image = image
            self.canvas._image_page = self.current_page  # noqa: SLF001
            self.canvas.update()

    def _scroll_to_highlight(self) -> None:
        if self.highlight is None or not self.highlight.found:
            pending, self._pending_scroll = self._pending_scroll, None
            bar = self.scroll.verticalScrollBar()
            bar.setValue(round((pending or 0.0) * bar.maximum()))  # a restored reading position, else the top
            return
        self.scroll_to(self.highlight.bounds())

    def scroll_to(self, bounds: tuple[float, float, float, float]) -> None:
        """Bring a place on the page (PDF points) into view, a third of the way down, where the eye lands."""
        px = self.canvas.to_pixels(bounds)
        top_left = self.canvas.mapTo(self.scroll.widget(), QPoint(int(px.left()), int(px.top())))
        self.scroll.verticalScrollBar().setValue(max(0, top_left.y() - self.scroll.viewport().height() // 3))
        # Zoomed in: sideways too, the whole place and a margin (not just its first letter).
        centre = top_left.x() + int(px.width() / 2)
        self.scroll.ensureVisible(centre, top_left.y(), int(px.width() / 2) + 40, 0)

    def highlight_visible(self) -> bool:
        """True when the highlighted passage lies inside the visible part of the view."""
        if self.highlight is None or not self.highlight.found:
            return False
        px = self.canvas.to_pixels(self.highlight.bounds())
        top = self.canvas.mapTo(self.scroll.viewport(), QPoint(int(px.left()), int(px.top())))
        return 0 <= top.y() <= self.scroll.viewport().height()

    # -- outside ------------------------------------------------------------------------
    def open_external(self) -> None:
        if self.path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path)))

    def rendered(self) -> bool:
        """True once the current page's image is on the canvas (tests, screenshots)."""
        return self.canvas.image is not None and getattr(self.canvas, "_image_page", 0) == self.current_page

    def shutdown(self) -> None:
        """Finish the passage search and release the document before the widget tree
        is torn down (QtPdf is touchy about teardown order)."""
        self.remember()
        self.positions.sync()
        self._locate_token += 1
        self.find_bar.close_bar()  # its search, if any, is dropped
        self._pool.waitForDone()
        self.renderer.setDocument(None)
        self.document.close()
