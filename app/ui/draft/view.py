"""The Draft tab's output: the drafted section as it streams and when done,
its evidence ledger, and Save files / Copy Markdown / Copy LaTeX."""

from __future__ import annotations

import html

from PySide6.QtCore import QMimeData, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..common import theme
from ..common.answer_render import STATUS_MARK
from ..research.answer_view import AnswerView
from ..common.banners import Banner
from .render import (
    DraftCite,
    draft_cites,
    draft_summary,
    parse_draft_href,
    render_draft,
    render_draft_streaming,
)
from ..reader.viewer import ElidedLabel

RENDER_INTERVAL_MS = 100  # re-render the streaming paragraphs at most ~10 times a second
CITE_ROLE = Qt.ItemDataRole.UserRole + 20

WELCOME = """
<h2>Draft a section of your paper</h2>
<p class="muted">Describe your own work on the left (the concept at least), pick the section
and press <b>Draft</b>. Research Desk searches your library for evidence, then writes the
section with author–year citations, ready as Markdown (<code>[@key]</code>), LaTeX
(<code>\\cite{key}</code>) and BibTeX.</p>
<p class="muted">Every citation is a link: click it to open the paper at the evidence page,
with the quoted passage highlighted. The evidence ledger lists each citation's quote.</p>
"""


def draft_css() -> str:
    """The answer view's stylesheet plus the draft's own marks."""
    c = theme.colors()
    return theme.answer_css() + f"""
    span.pending {{ color: {c['pending']}; font-size: 9.5pt; }}
    p.warnings {{ color: {c['warn']}; margin-top: 16px; }}
    li.warning {{ color: {c['text']}; }}
    """


class DraftView(QWidget):
    citation_clicked = Signal(object)  # DraftCite
    save_files_requested = Signal()
    action_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        self.result = None  # DraftResult
        self.cites: list[DraftCite] = []
        self.streaming = False
        self._title = ""
        self._paragraphs: list[str] = []
        self._dirty = False
        self.render_count = 0  # streaming re-renders (tests)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 8)
        layout.setSpacing(6)
        head = QHBoxLayout()
        self.title = QLabel("Draft")
        self.title.setObjectName("paneTitle")
        head.addWidget(self.title)
        head.addStretch(1)

        self.save_button = theme.header_button(head, "save", "Save files…", "Write the section as .md, .tex and .bib, plus the evidence ledger, into a folder")
        self.save_button.clicked.connect(self.save_files_requested)
        self.copy_md_button = theme.header_button(head, "copy", "Copy Markdown", "Copy the section with [@key] citations and its reference list")
        self.copy_md_button.clicked.connect(self.copy_markdown)
        self.copy_tex_button = theme.header_button(head, "copy", "Copy LaTeX", "Copy the section as LaTeX with \\cite{key} (the keys are in the .bib file)")
        self.copy_tex_button.clicked.connect(self.copy_latex)
        layout.addLayout(head)
        # Its own line under the buttons: elided, so a long summary never widens the tab.
        self.status = ElidedLabel("")
        self.status.setObjectName("paneSubtitle")
        layout.addWidget(self.status)

        self.banner = Banner()
        self.banner.action_requested.connect(self.action_requested)
        layout.addWidget(self.banner)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.browser = QTextBrowser()
        self.browser.setObjectName("answer")
        self.browser.setOpenLinks(False)
        self.browser.setOpenExternalLinks(False)
        self.browser.anchorClicked.connect(self._link_clicked)
        self.browser.document().setDocumentMargin(14)
        font = self.browser.font()
        font.setPointSizeF(font.pointSizeF() + 1)  # read at length, as the answer view is
        self.browser.setFont(font)
        # A table, not a tree: its rows grow to show each quote whole (≤ 30 words).
        self.ledger = QTableWidget(0, 4)
        self.ledger.setHorizontalHeaderLabels(["¶", "Citation", "Page", "Quote from the evidence"])
        self.ledger.verticalHeader().hide()
        self.ledger.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.ledger.setWordWrap(True)
        self.ledger.setShowGrid(False)
        self.ledger.setAlternatingRowColors(True)
        self.ledger.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.ledger.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.ledger.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.ledger.itemActivated.connect(lambda item: self.citation_clicked.emit(self.ledger.item(item.row(), 0).data(CITE_ROLE)))
        header = self.ledger.horizontalHeader()
        header.setStretchLastSection(True)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.resizeSection(0, 30)
        header.resizeSection(1, 150)
        header.resizeSection(2, 46)
        self.tabs.addTab(self.browser, "Text")
        self.tabs.addTab(self.ledger, "Evidence ledger")
        layout.addWidget(self.tabs, 1)

        self._render_timer = QTimer(self)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render_stream)
        self.apply_theme()

    # -- states ------------------------------------------------------------------------
    def apply_theme(self) -> None:
        self.browser.document().setDefaultStyleSheet(draft_css())
        if self.result is not None and not self.streaming:
            self.show_result(self.result)
        elif not self.streaming:
            self.show_welcome()

    def _set_actions_enabled(self, enabled: bool) -> None:
        for b in (self.save_button, self.copy_md_button, self.copy_tex_button):
            b.setEnabled(enabled)

    def show_welcome(self) -> None:
        self.browser.setHtml(WELCOME)
        self.status.set_full_text("")
        self.ledger.setRowCount(0)
        self.tabs.setTabText(1, "Evidence ledger")
        self._set_actions_enabled(False)

    def begin(self, title: str, note: str = "Working…") -> None:
        """A run started (or was queued): clear the old draft, say what is happening."""
        self.streaming = True
        self._title = title
        self._paragraphs = []
        self._dirty = False
        self.banner.hide()
        self.status.set_full_text(note)
        self.ledger.setRowCount(0)
        self.tabs.setTabText(1, "Evidence ledger")
        self.tabs.setCurrentWidget(self.browser)
        self._set_actions_enabled(False)
        self.browser.setHtml(f"<h1>{html.escape(title)}</h1><p class=\"muted\">{html.escape(note)}</p>")
        self._render_timer.start()

    def set_status(self, text: str) -> None:
        self.status.set_full_text(text)

    def set_waiting_text(self, text: str) -> None:
        """Before the first paragraph: what the run is doing (searching, reading…)."""
        if self.streaming and not self._paragraphs:
            self.browser.setHtml(f"<h1>{html.escape(self._title)}</h1><p class=\"muted\">{html.escape(text)}</p>")

    def show_paragraphs(self, paragraphs: list[str]) -> None:
        """The model's paragraphs so far (a "draft_text" event); rendered on the next tick."""
        self._paragraphs = list(paragraphs)
        self._dirty = True

    def streamed_paragraphs(self) -> list[str]:
        return list(self._paragraphs)

    def _render_stream(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        bar = self.browser.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.browser.setHtml(render_draft_streaming(self._title, self._paragraphs))
        self.render_count += 1
        if at_end:
            bar.setValue(bar.maximum())

    def end_stream(self) -> None:
        self.streaming = False
        self._render_timer.stop()

    def show_result(self, result) -> None:
        self.end_stream()
        same = result is self.result
        self.result = result
        self.cites = draft_cites(result)
        scroll = self.browser.verticalScrollBar().value()
        self.browser.setHtml(render_draft(result))
        self.browser.verticalScrollBar().setValue(scroll if same else 0)
        self.status.set_full_text(draft_summary(result))
        self._fill_ledger()
        self._set_actions_enabled(bool(result.paragraphs))

    def show_stopped(self, message: str) -> None:
        """Cancelled or failed: keep what was written, say that it is incomplete.

        Stopped before writing anything, the previous draft (if any) comes back,
        so a cancelled second attempt never costs the user the first one."""
        self.end_stream()
        if not self._paragraphs and self.result is not None:
            self.show_result(self.result)
            self.status.set_full_text(message + " The previous draft is shown.")
            return
        if self._paragraphs:
            body = render_draft_streaming(self._title, self._paragraphs).replace('<p class="cursor">\u258d</p>', "")
            self.browser.setHtml(body + f'<p class="muted"><i>{html.escape(message)}</i></p>')
        else:
            self.browser.setHtml(f"<h1>{html.escape(self._title)}</h1><p class=\"muted\">{html.escape(message)}</p>")
        self.status.set_full_text(message)
        self.result = None  # the partial text is no draft: nothing to save or copy
        self._set_actions_enabled(False)

    def _fill_ledger(self) -> None:
        self.ledger.setRowCount(0)
        self.ledger.setRowCount(len(self.cites))
        for row, cite in enumerate(self.cites):
            flagged = cite.status != "verified"
            mark = STATUS_MARK.get(cite.status, ("\u2022",))[0]
            cells = [str(cite.paragraph or ""), cite.label + (f" {mark}" if flagged else ""), str(cite.page), cite.quote]
            tip = f"@{cite.key} ({cite.paper_id}), page {cite.page}\nClaim: {cite.claim}\nQuote: “{cite.quote}”\n\nDouble-click to open the PDF at this page"
            if flagged:
                mark, _, meaning = STATUS_MARK.get(cite.status, ("\u2022", "warn", cite.status))
                tip = f"{mark} {meaning}" + (f" — {cite.note}" if cite.note else "") + "\n" + tip
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                item.setTextAlignment((Qt.AlignmentFlag.AlignRight if col in (0, 2) else Qt.AlignmentFlag.AlignLeft) | Qt.AlignmentFlag.AlignTop)
                self.ledger.setItem(row, col, item)
            self.ledger.item(row, 0).setData(CITE_ROLE, cite)
        self.tabs.setTabText(1, f"Evidence ledger ({len(self.cites)})")

    # -- actions ----------------------------------------------------------------------------
    def copy_markdown(self) -> None:
        if self.result is None:
            return
        from app.core.desk import Desk

        mime = QMimeData()
        mime.setText(Desk.draft_document(self.result, "md"))
        mime.setHtml(render_draft(self.result, notes=False))  # a word processor gets the formatted text
        QGuiApplication.clipboard().setMimeData(mime)
        self.status.set_full_text("Copied the Markdown (with its reference list) to the clipboard")

    def copy_latex(self) -> None:
        if self.result is None:
            return
        from app.core.desk import Desk

        QGuiApplication.clipboard().setText(Desk.draft_document(self.result, "tex"))
        self.status.set_full_text(f"Copied the LaTeX to the clipboard; its keys resolve in {self.result.section}.bib (Save files…)")

    def _link_clicked(self, url: QUrl) -> None:
        index = parse_draft_href(bytes(url.toEncoded()).decode("ascii", "replace"))
        if index is not None and 0 <= index < len(self.cites):
            self.citation_clicked.emit(self.cites[index])

    def click_citation(self, index: int = 0) -> DraftCite | None:
        """Follow the index-th citation in reading order (tests, keyboard)."""
        ordered = sorted(self.cites, key=lambda c: self.result.citations[c.index].start) if self.result else []
        if not 0 <= index < len(ordered):
            return None
        self.citation_clicked.emit(ordered[index])
        return ordered[index]

    # The answer view's walk over the rendered links; it only needs `self.browser`.
    anchors = AnswerView.anchors
