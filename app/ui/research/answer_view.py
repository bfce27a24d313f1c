"""The answer view: the rendered, cited answer, streaming while the model writes,
with Improve / Save / Export / Copy."""

from __future__ import annotations

import html

from PySide6.QtCore import QMimeData, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QGuiApplication, QPainter
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.records import ResearchResult

from ..common import theme
from ..common.answer_render import (
    CiteLink,
    citation_summary,
    deep_summary_html,
    parse_cite,
    parse_href,
    record_html,
    render_answer,
    render_evidence_preview,
    render_streaming,
)
from ..common.banners import Banner
from ..common.export_menu import EXPORT_TIP, export_menu

RENDER_INTERVAL_MS = 100  # re-render the streaming answer at most ~10 times a second

WELCOME = """
<h2>Ask your library a question</h2>
<p class="muted">Type a question in the Research pane and press Enter. The answer appears here
as the model writes it, with every claim cited as <b>[paper, page]</b>.</p>
<p class="muted">Click a citation to open the PDF at that page with the sentences the claim
rests on highlighted. Each claim is checked against its sources:
<span class="ok">&#10003;</span> supported, <span class="partial"><b>?</b></span> partly supported,
<span class="bad">&#10007;</span> unsupported (or a paper that was not in the evidence),
<span class="warn">&#9888;</span> a page that was not in the evidence.
A claim that no source supports is <span class="unbacked">shaded</span>. Beneath the answer,
<b>Key passages</b> quote the papers' own sentences as they stand, in
<span class="quoted">“italics and quotation marks”</span>: the evidence, not the model's words.</p>
"""


class StatusLabel(QLabel):
    """The answer's status line: it ends in "…" rather than widening the pane (the full text is its tooltip)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt name
        super().setText(text)
        self.setToolTip(text)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, self.contentsRect().width())
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        self.style().drawItemText(painter, self.contentsRect(), align, self.palette(), self.isEnabled(), text, self.foregroundRole())


class AnswerView(QWidget):
    citation_clicked = Signal(object)  # CiteLink
    summary_clicked = Signal(str)  # paper id
    improve_requested = Signal(str)  # feedback
    save_requested = Signal()
    export_requested = Signal(str)  # a key of EXPORT_ITEMS: "markdown" | "bibtex" | "html" | "bundle" | "annotated-pdf"
    action_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        self.result: ResearchResult | None = None
        self.streaming = False
        self._buffer = ""
        self._preview: list = []  # focused evidence shown before (and below) the streaming answer
        self._dirty = False
        self._stopped = ""  # the note under a run's partial text, shown until the next run or answer
        self.render_count = 0  # how many times the streaming answer was re-rendered (tests)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 8)
        layout.setSpacing(6)
        head = QHBoxLayout()
        self.title = QLabel("Answer")
        self.title.setObjectName("paneTitle")
        head.addWidget(self.title)
        self.status = StatusLabel()
        self.status.setObjectName("paneSubtitle")
        head.addWidget(self.status, 1)

        self.improve_button = theme.header_button(head, "improve", "Improve", "Revise the answer with your feedback (same evidence plus new searches)")
        self.improve_button.clicked.connect(self._toggle_improve)
        self.save_button = theme.header_button(head, "save", "Save", "Save the answer with its references to the library's results folder")
        self.save_button.clicked.connect(self.save_requested)
        self.export_button = theme.header_button(head, "export", "Export", EXPORT_TIP)
        self.export_button.setMenu(export_menu(self.export_button, self.export_requested.emit))
        self.copy_button = theme.header_button(head, "copy", "Copy", "Copy the answer with its references (Markdown and rich text)")
        self.copy_button.clicked.connect(self.copy_to_clipboard)
        layout.addLayout(head)

        self.question_label = QLabel("")
        self.question_label.setWordWrap(True)
        self.question_label.setStyleSheet("font-size: 12pt; font-weight: 600;")
        self.question_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.question_label.hide()
        layout.addWidget(self.question_label)

        self.banner = Banner()
        self.banner.action_requested.connect(self.action_requested)
        layout.addWidget(self.banner)

        self.improve_bar = QWidget()
        bar = QHBoxLayout(self.improve_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        self.feedback = QLineEdit()
        self.feedback.setPlaceholderText("What should be better? e.g. “compare the two methods' assumptions”")
        self.feedback.returnPressed.connect(self._improve)
        self.revise_button = QPushButton("Revise")
        self.revise_button.setObjectName("primary")
        self.revise_button.clicked.connect(self._improve)
        close = QToolButton()
        close.setObjectName("flat")
        close.setIcon(theme.icon("close", 14))
        close.setToolTip("Close the feedback bar")
        close.clicked.connect(lambda: self.improve_bar.hide())
        bar.addWidget(self.feedback, 1)
        bar.addWidget(self.revise_button)
        bar.addWidget(close)
        self.improve_bar.hide()
        layout.addWidget(self.improve_bar)

        self.browser = QTextBrowser()
        self.browser.setObjectName("answer")
        self.browser.setOpenLinks(False)
        self.browser.setOpenExternalLinks(False)
        self.browser.anchorClicked.connect(self._link_clicked)
        self.browser.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.browser.document().setDocumentMargin(14)
        font = self.browser.font()
        font.setPointSizeF(font.pointSizeF() + 1)  # answers are read at length: a size up from the UI text
        self.browser.setFont(font)
        layout.addWidget(self.browser, 1)

        self._render_timer = QTimer(self)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render_stream)
        self.apply_theme()
        self.show_welcome()

    # -- states ------------------------------------------------------------------------
    def apply_theme(self) -> None:
        self.browser.document().setDefaultStyleSheet(theme.answer_css())
        if self._stopped and not self.streaming:  # a stopped run's partial text, not the answer before it
            self._show_partial(self._stopped)
        elif self.result is not None and not self.streaming:
            self.show_result(self.result)
        elif not self.streaming:
            self.show_welcome()

    def _set_actions_enabled(self, enabled: bool) -> None:
        for b in (self.improve_button, self.save_button, self.export_button, self.copy_button):
            b.setEnabled(enabled)

    def show_welcome(self) -> None:
        self.browser.setHtml(WELCOME)
        self.status.setText("")
        self.question_label.hide()
        self._set_actions_enabled(False)

    def begin_stream(self, question: str, note: str = "Working…") -> None:
        self.streaming = True
        self._buffer = ""
        self._preview = []
        self._dirty = False
        self._stopped = ""
        self.banner.hide()
        self.improve_bar.hide()
        self.question_label.setText(question)
        self.question_label.show()
        self.status.setText(note)
        self._set_actions_enabled(False)
        self.browser.setHtml(f'<p class="muted">{html.escape(note)}</p>')
        self._render_timer.start()

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    def show_evidence_preview(self, evidence: list) -> None:
        """The focused evidence arrived: its best sentences, linked, until the claims are written."""
        if not self.streaming:
            return
        self._preview = list(evidence)
        if self._buffer:
            self._dirty = True  # shown below the answer at the next render
        else:
            preview = render_evidence_preview(self._preview)
            if preview:
                self.browser.setHtml(preview)

    def preview_html(self) -> str:
        return render_evidence_preview(self._preview, writing=bool(self._buffer)) if self._preview else ""

    def append_tokens(self, text: str) -> None:
        self._buffer += text
        self._dirty = True

    def streamed_text(self) -> str:
        return self._buffer

    def _render_stream(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        bar = self.browser.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.browser.setHtml(render_streaming(self._buffer) + self.preview_html())
        self.render_count += 1
        if at_end:
            bar.setValue(bar.maximum())

    def end_stream(self) -> None:
        self.streaming = False
        self._render_timer.stop()

    def show_result(self, result: ResearchResult) -> None:
        self.end_stream()
        self._stopped = ""
        same = result is self.result
        self.result = result
        self.question_label.setText(result.query)
        self.question_label.show()
        body = deep_summary_html(result) + render_answer(result)
        if result.open_parts and result.answer:  # a part of the question the answer may leave open: before it is read
            named = " and ".join(f"“{html.escape(part)}”" for part in result.open_parts)
            # muted, not a caution: the words can miss a part answered in other words (research/text/question_reading.py)
            body = f'<p class="muted">This answer may not cover {named}: none of its sentences uses the words of {"those parts" if len(result.open_parts) > 1 else "that part"}.</p>' + body
        if result.caution and result.answer:  # the library may not hold the answer: say so first
            body = f'<p class="caution">{html.escape(result.caution)}</p>' + body
        if result.feedback:
            body = f'<p class="muted">Revised with feedback: “{html.escape(result.feedback[-1])}”</p>' + body
        body = record_html(result) + body
        if result.messages:
            notes = "".join(f"<li>{html.escape(m)}</li>" for m in result.messages)
            body += f'<p class="muted" style="margin-top:16px"><b>Notes from this run</b></p><ul class="notes">{notes}</ul>'
        scroll = self.browser.verticalScrollBar().value()
        self.browser.setHtml(body)
        # A re-render of the same answer (theme change) keeps the reading position.
        self.browser.verticalScrollBar().setValue(scroll if same else 0)
        timing = result.timings.get("total_s")
        caution = " · the library may not hold the answer" if result.caution else ""
        n = len(result.withdrawn)  # out of the answer: say so at a glance, the notes name them
        withdrawn = f" · {n} unsupported claim{'s' if n != 1 else ''} withdrawn (see notes)" if n else ""
        self.status.setText(citation_summary(result) + withdrawn + caution + (f" · {timing:.0f} s" if timing else ""))
        self._set_actions_enabled(bool(result.answer))

    def show_stopped(self, message: str) -> None:
        """Cancelled or failed mid-run: keep what was written and say it is incomplete.

        Stopped before anything was written, the previous answer comes back under its own
        question and the status line says it is the previous one: a second question that fails
        (no model, a cancel) never costs the user the answer they had, nor passes it off as new."""
        self.end_stream()
        if self._buffer:
            message = f"{message} The answer above is incomplete."
        elif self._preview and self.preview_html():
            message = f"{message} Nothing was written; the best evidence sentences are below."
        elif self.result is not None:
            self.show_result(self.result)
            self.status.setText(f"{message} The previous answer is shown.")
            return
        self._stopped = message
        self._show_partial(message)
        self.status.setText(message)
        self._set_actions_enabled(False)

    def _show_partial(self, message: str) -> None:
        """A stopped run's text (or its evidence sentences), with the note that says why it ends there."""
        note = f'<p class="muted"><i>{html.escape(message)}</i></p>'
        if self._buffer:
            self.browser.setHtml(render_streaming(self._buffer).replace('<p class="cursor">\u258d</p>', "") + note)
        elif self._preview and self.preview_html():
            self.browser.setHtml(note + self.preview_html())
        else:
            self.browser.setHtml(f'<p class="muted">{html.escape(message)}</p>')

    # -- actions ----------------------------------------------------------------------------
    def _toggle_improve(self) -> None:
        self.improve_bar.setVisible(not self.improve_bar.isVisible())
        if self.improve_bar.isVisible():
            self.feedback.setFocus()

    def _improve(self) -> None:
        text = self.feedback.text().strip()
        if text and self.result is not None and not self.streaming:
            self.improve_requested.emit(text)
            self.feedback.clear()
            self.improve_bar.hide()

    def copy_to_clipboard(self) -> None:
        if self.result is None:
            return
        from app.core.desk import Desk

        mime = QMimeData()
        mime.setText(f"# {self.result.query}\n\n{Desk.answer_markdown(self.result)}")
        mime.setHtml(self.browser.toHtml())
        QGuiApplication.clipboard().setMimeData(mime)
        self.status.setText("Copied to the clipboard")

    def _link_clicked(self, url: QUrl) -> None:
        href = bytes(url.toEncoded()).decode("ascii", "replace")
        scheme, parts = parse_href(href)
        if scheme == "cite":
            link = parse_cite(href)
            if link is not None:
                self.citation_clicked.emit(link)
        elif scheme == "summary" and parts:
            self.summary_clicked.emit(parts[0])

    def click_citation(self, index: int = 0) -> CiteLink | None:
        """Follow the index-th citation link of the current answer (tests, keyboard)."""
        if self.result is None:
            return None
        cites = sorted(enumerate(self.result.citations), key=lambda ic: ic[1].start)
        if not 0 <= index < len(cites):
            return None
        number, c = cites[index]
        link = CiteLink(c.paper_id, c.page or 1, c.evidence_number or 0, citation=number)
        self.citation_clicked.emit(link)
        return link

    def anchors(self) -> list[str]:
        """All link targets in the rendered answer."""
        out: list[str] = []
        block = self.browser.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fmt = it.fragment().charFormat()
                if fmt.isAnchor() and fmt.anchorHref() and (not out or out[-1] != fmt.anchorHref()):
                    out.append(fmt.anchorHref())
                it += 1
            block = block.next()
        return out
