"""The viewer's find bar: Ctrl+F, Enter/F3 next, Shift+Enter/Shift+F3 previous, "3 of 17", Esc closes.

The search itself (pdf_search.py) runs on the viewer's one-thread pool, like the passage
highlight, so a long paper's first search never blocks the window; later queries on the same
paper reuse its words. Every hit on the shown page is marked, the current one stronger.
"""

from __future__ import annotations


from PySide6.QtCore import QEvent, QObject, QRunnable, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from ..common import theme
from .search import FindHit, PdfWords, find_hits


TYPING_PAUSE_MS = 250  # search once the typing stops, not on every key


class _FindSignals(QObject):
    done = Signal(int, object)  # token, list[FindHit] | Exception


class _FindTask(QRunnable):
    def __init__(self, token: int, words: PdfWords, path, query: str, signals: _FindSignals, current) -> None:
        super().__init__()
        self.token, self.words, self.path, self.query, self.signals, self.current = token, words, path, query, signals, current

    def run(self) -> None:
        try:
            pages = self.words.pages(self.path, cancelled=lambda: self.current() != self.token)
            if pages is None:
                return  # a newer search (or another paper) took over
            result: object = find_hits(pages, self.query)
        except Exception as exc:  # noqa: BLE001 - shown in the bar
            result = exc
        self.signals.done.emit(self.token, result)


class FindBar(QWidget):
    """Query, previous / next, the count, close; drives the viewer's find marks."""

    def __init__(self, viewer: QWidget) -> None:  # the PdfViewer (not imported: it imports this module)
        super().__init__(viewer)
        self.viewer = viewer
        self.hits: list[FindHit] = []
        self.current = -1
        self._token = 0
        self._searched = ""  # the query the hits belong to
        self._start_page = 0  # a search started for a page (a library hit) begins there
        self._words = PdfWords()
        self._signals = _FindSignals(self)
        self._signals.done.connect(self._on_done, Qt.ConnectionType.QueuedConnection)
        self._timer = QTimer(self, singleShot=True, interval=TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.search)

        row = QHBoxLayout(self)
        row.setContentsMargins(10, 2, 6, 4)
        row.setSpacing(4)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Find in this PDF")
        self.edit.setClearButtonEnabled(True)
        self.edit.setAccessibleName("Find in the PDF")
        self.edit.setAccessibleDescription("Enter or F3: next match; Shift+Enter or Shift+F3: previous; Escape closes")
        self.edit.textChanged.connect(lambda _t: self._timer.start())
        self.edit.installEventFilter(self)
        row.addWidget(self.edit, 1)
        self.count = QLabel("")
        self.count.setObjectName("muted")
        self.count.setMinimumWidth(80)
        row.addWidget(self.count)

        def tool(icon: str, name: str, tip: str, slot) -> QToolButton:
            b = QToolButton()
            b.setObjectName("flat")
            b.setIcon(theme.icon(icon, 16))
            b.setToolTip(tip)
            b.setAccessibleName(name)
            b.clicked.connect(slot)
            row.addWidget(b)
            return b

        self.prev_button = tool("prev", "Previous match", "Previous match (Shift+Enter, Shift+F3)", lambda: self.step(-1))
        self.next_button = tool("next", "Next match", "Next match (Enter, F3)", lambda: self.step(1))
        self.close_button = tool("close", "Close find", "Close the find bar (Escape)", self.close_bar)
        self.hide()
        self._update_count()

    # -- opening and closing -------------------------------------------------------
    def open_bar(self, text: str | None = None, page: int = 0) -> None:
        """Show the bar with the cursor in it; with `text`, search it now (from `page` on)."""
        self.show()
        if text is not None:
            self._start_page = page
            self.edit.blockSignals(True)
            self.edit.setText(text)
            self.edit.blockSignals(False)
            self.search()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()

    def close_bar(self) -> None:
        self._token += 1  # a search under way is dropped
        self.hits, self.current, self._searched = [], -1, ""
        self.hide()
        self.mark([], [])
        self.viewer.scroll.setFocus(Qt.FocusReason.OtherFocusReason)

    def document_changed(self) -> None:
        """Another paper: its own hits, if the bar is open with a query."""
        self._token += 1
        self.hits, self.current, self._searched = [], -1, ""
        if self.isVisible() and self.edit.text().strip():
            self.search()
        else:
            self._update_count()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if watched is self.edit and event.type() == QEvent.Type.KeyPress:
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.step(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 1)
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return super().eventFilter(watched, event)

    # -- searching ------------------------------------------------------------------
    def search(self) -> None:
        self._timer.stop()
        query = self.edit.text().strip()
        self._token += 1
        if not query or self.viewer.path is None:
            self.hits, self.current, self._searched = [], -1, ""
            self.mark([], [])
            self._update_count()
            return
        self.count.setText("Searching…")
        token = self._token
        self.viewer._pool.start(_FindTask(token, self._words, self.viewer.path, query, self._signals, lambda: self._token))  # noqa: SLF001

    @Slot(int, object)
    def _on_done(self, token: int, result: object) -> None:
        if token != self._token:
            return
        if isinstance(result, Exception):
            self.hits, self.current = [], -1
            self.count.setText("Search failed")
            self.count.setToolTip(str(result))
            return
        self.hits = list(result)  # type: ignore[arg-type]
        self._searched = self.edit.text().strip()
        page = self._start_page or self.viewer.current_page
        self._start_page = 0
        # The first hit on or after the page in view, as a reader's find does.
        self.current = next((i for i, h in enumerate(self.hits) if h.page >= page), 0) if self.hits else -1
        self._show_current()

    def step(self, delta: int) -> None:
        """Next (+1) or previous (-1) match, wrapping; a changed query is searched first."""
        if self.edit.text().strip() != self._searched or self._timer.isActive():
            self.search()
            return
        if not self.hits:
            return
        self.current = (self.current + delta) % len(self.hits)
        self._show_current()

    # -- showing ----------------------------------------------------------------------
    def _show_current(self) -> None:
        """The current match: its page, every match there marked, this one brought into view."""
        self._update_count()
        if self.current < 0:
            self.mark([], [])
            return
        hit = self.hits[self.current]
        self.viewer.go_to(hit.page)  # marks the page's matches as it shows it
        self.mark(*self.marks_for(hit.page))
        QTimer.singleShot(0, self.viewer, lambda: self.viewer.scroll_to(hit.bounds()))

    def mark(self, others: list, current: list) -> None:
        self.viewer.canvas.found, self.viewer.canvas.found_current = others, current
        self.viewer.canvas.update()

    def marks_for(self, page: int) -> tuple[list, list]:
        """(other hits, the current hit) rectangles on `page`, for the canvas."""
        current = self.hits[self.current] if 0 <= self.current < len(self.hits) else None
        others = [r for h in self.hits if h.page == page and h is not current for r in h.rects]
        return others, list(current.rects) if current is not None and current.page == page else []

    def _update_count(self) -> None:
        self.count.setToolTip("")
        if not self._searched:
            self.count.setText("")
        elif not self.hits:
            self.count.setText("No matches")
        else:
            self.count.setText(f"{self.current + 1} of {len(self.hits)}")
        self.count.setAccessibleName(self.count.text() or "No search")
        for b in (self.prev_button, self.next_button):
            b.setEnabled(bool(self.hits))
