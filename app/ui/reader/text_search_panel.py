"""Search the papers' text from the library pane: Enter in the filter box lists every place
the papers print the words, by paper, each with its page and a snippet; activating one (double
click, Enter) opens the viewer at that page with the words found and marked there.

The filter still narrows the table as one types (titles, authors, ids); the text search runs
on Enter only, on the worker that owns the library (core: app/core/library/text_search.py), so it waits
behind a running import or question.
"""

from __future__ import annotations

import html
from functools import partial

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.desk import TextHit, plural

from ..common import theme
from ..common.worker import JobContext

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
HTML_ROLE = Qt.ItemDataRole.UserRole + 2


def search_text(ctx: JobContext, query: str) -> list[TextHit]:
    """The worker's side (like jobs.py's functions)."""
    return ctx.desk.search_text(query)


class _HtmlDelegate(QStyledItemDelegate):
    """Rows with the found words in bold (a QTreeWidget item shows plain text only)."""

    def paint(self, painter, option, index) -> None:
        text = index.data(HTML_ROLE)
        if not text:
            return super().paint(painter, option, index)
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        doc = self._document(text, opt)
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget)
        painter.save()
        painter.translate(rect.topLeft())
        ctx = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        ctx.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text))
        ctx.clip = QRectF(0, 0, rect.width(), rect.height())
        painter.setClipRect(ctx.clip)
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(self, option, index) -> QSize:  # noqa: N802 - Qt override
        text = index.data(HTML_ROLE)
        if not text:
            return super().sizeHint(option, index)
        view = option.widget
        # The text's own width: the view less the indentation of the row's level and the item's padding.
        width = view.viewport().width() - view.indentation() * (2 if index.parent().isValid() else 1) - 30 if view else 300
        doc = self._document(text, option, max(120, width))
        return QSize(int(doc.idealWidth()), int(doc.size().height()) + 4)

    @staticmethod
    def _document(text: str, option, width: float | None = None) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(1)
        doc.setHtml(text)
        doc.setTextWidth(width if width is not None else option.rect.width() - 30)
        return doc


class TextResults(QWidget):
    """The list of places found, under the papers table."""

    hit_activated = Signal(object, str)  # TextHit, the query
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        head = QHBoxLayout()
        self.status = QLabel("")
        self.status.setObjectName("paneSubtitle")
        self.status.setWordWrap(True)
        head.addWidget(self.status, 1)
        self.close_button = QToolButton()
        self.close_button.setObjectName("flat")
        self.close_button.setIcon(theme.icon("close", 16))
        self.close_button.setToolTip("Close the text search results")
        self.close_button.setAccessibleName("Close the text search results")
        self.close_button.clicked.connect(self.close_results)
        head.addWidget(self.close_button)
        layout.addLayout(head)
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(True)
        self.tree.setWordWrap(True)
        self.tree.setUniformRowHeights(False)
        self.tree.setItemDelegate(_HtmlDelegate(self.tree))
        self.tree.setAccessibleName("Places in the papers' text")
        self.tree.setAccessibleDescription("By paper; Enter or a double click opens the PDF at the page, the words marked")
        self.tree.itemActivated.connect(self._activated)
        self.tree.viewport().installEventFilter(self)  # a narrower pane: rows grow to keep their snippet whole
        layout.addWidget(self.tree, 1)
        self.hide()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if watched is self.tree.viewport() and event.type() == event.Type.Resize:
            self.tree.doItemsLayout()
        return super().eventFilter(watched, event)

    def searching(self, query: str) -> None:
        self.query = query
        self.tree.clear()
        self.status.setText(f"Searching the papers' text for “{query}”…")
        self.show()

    def failed(self, message: str) -> None:
        self.status.setText(f"The text search failed: {message}")

    def show_hits(self, hits: list[TextHit], titles: dict[str, str]) -> None:
        self.tree.clear()
        papers: dict[str, QTreeWidgetItem] = {}
        for hit in hits:
            parent = papers.get(hit.paper_id)
            if parent is None:
                parent = papers[hit.paper_id] = QTreeWidgetItem(self.tree)
                parent.setData(0, HIT_ROLE, hit)  # a paper's row opens its first place
            item = QTreeWidgetItem(parent)
            item.setData(0, HIT_ROLE, hit)
            page = f"p. {hit.page}" if not hit.page_label or hit.page_label == str(hit.page) else f"p. {hit.page} ({hit.page_label})"
            item.setData(0, HTML_ROLE, f"<span style='color:gray'>{page}</span>&nbsp; {html.escape(hit.snippet[:hit.start])}"
                                       f"<b>{html.escape(hit.matched)}</b>{html.escape(hit.snippet[hit.end:])}")
            item.setText(0, f"{page}: {hit.snippet}")  # what a screen reader reads
            item.setToolTip(0, "" if hit.exact else "The words, not side by side")
        for pid, parent in papers.items():
            title = titles.get(pid) or pid
            n = parent.childCount()
            parent.setText(0, f"{title} — {plural(n, 'place')}")
            parent.setData(0, HTML_ROLE, f"<b>{html.escape(title)}</b> <span style='color:gray'>· {plural(n, 'place')}</span>")
            parent.setExpanded(True)
        exact = sum(h.exact for h in hits)
        if not hits:
            self.status.setText(f"No paper prints “{self.query}”.")
        else:
            text = f"“{self.query}”: {plural(len(hits), 'place')} in {plural(len(papers), 'paper')}"
            if exact < len(hits):
                text += f" ({len(hits) - exact} with the words apart)"
            self.status.setText(text)
            self.tree.setCurrentItem(self.tree.topLevelItem(0).child(0))
        self.status.setAccessibleName(self.status.text())

    def close_results(self) -> None:
        self.tree.clear()
        self.hide()
        self.closed.emit()

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        hit = item.data(0, HIT_ROLE)
        if hit is not None:
            self.hit_activated.emit(hit, self.query)


class TextSearchController:
    """Wires the library pane's filter box to the text search and a hit to the viewer."""

    def __init__(self, window) -> None:
        self.window = window
        pane = window.library_pane
        self.results = TextResults(pane)
        layout = pane.layout()
        layout.insertWidget(layout.indexOf(pane.table) + 1, self.results, 2)
        pane.filter.setPlaceholderText("Filter by title, author, year, id… (Enter: search the papers' text)")
        pane.filter.setAccessibleName("Filter papers or search their text")
        pane.filter.setAccessibleDescription("Typing filters the papers by title, author, year or id; "
                                             "Enter searches the papers' text and lists each place with its page")
        pane.filter.returnPressed.connect(self.search)
        self.results.hit_activated.connect(self.open_hit)
        self.results.closed.connect(self._closed)
        self.handle = None

    def search(self) -> None:
        query = self.window.library_pane.filter.text().strip()
        if not query:
            self.results.close_results()
            return
        if self.handle is not None:
            self.handle.discard()
        running = self.window.host.running_handle()
        busy = running is not None and running.kind not in ("poll", "list")  # those take milliseconds
        self.results.searching(query)
        if busy:  # one worker owns the library: the search waits for the import or question under way
            self.results.status.setText(self.results.status.text() + " (after the task under way)")
        # The words rarely name a paper: an empty table (the filter's) gives its room to the places.
        self.window.library_pane.table.setVisible(self.window.library_pane.proxy.rowCount() > 0)
        handle = self.handle = self.window.host.submit("textsearch", partial(search_text, query=query))
        titles = {p.id: p.title for p in self.window.library_pane.papers()}
        handle.finished.connect(lambda hits: handle is self.handle and self.results.show_hits(hits, titles))
        handle.failed.connect(lambda exc: self.results.failed(getattr(exc, "message", str(exc))))

    def _closed(self) -> None:
        pane = self.window.library_pane
        pane.table.setVisible(bool(pane.papers()))
        pane.filter.setFocus(Qt.FocusReason.OtherFocusReason)

    def open_hit(self, hit: TextHit, query: str) -> bool:
        """The paper at the hit's page, the query found and marked there (the viewer's find bar)."""
        if not self.window.open_pdf(hit.paper_id, hit.page):
            return False
        self.window.pdf_viewer.find_bar.open_bar(hit.matched or query, hit.page)  # loose: the first word, as the list marks it
        return True
