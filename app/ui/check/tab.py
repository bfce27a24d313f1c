"""The Check tab: a manuscript's citations checked against the library, coloured by verdict.

Top: the draft and its optional .bib, Check/Cancel, "sentence n of m", a legend with the
counts per verdict and the two exports. Below: the manuscript itself, read-only, each
citation coloured as its sentence is checked (a link: click opens the cited page, hover
tells the verdict, note and better source), and the report's problem lines (bad input).

The tab only says what the user asked for; CheckController turns that into worker jobs
and tells the view where each citation is and what it got.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.desk import VERDICT_LABELS

from ..common import theme
from ..common.banners import Banner

DRAFT_FILTER = "Manuscripts (*.tex *.ltx *.latex *.md *.markdown *.qmd *.rmd *.txt *.docx);;All files (*)"
BIB_FILTER = "BibTeX (*.bib);;All files (*)"
# The theme colour of each verdict: green, amber, red, grey.
VERDICT_COLOR = {"supported": "ok", "partial": "warn", "not-found": "bad", "not-in-library": "pending"}
LEGEND_NAMES = {"supported": "supported", "partial": "partial", "not-found": "not found", "not-in-library": "not in library"}


def verdict_color(verdict: str) -> QColor:
    return QColor(theme.colors()[VERDICT_COLOR.get(verdict, "pending")])


class ManuscriptView(QTextBrowser):
    """The manuscript's text, read-only; citations become coloured links as they are checked."""

    citation_clicked = Signal(int)  # the index the controller gave the citation

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("answer")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.document().setDocumentMargin(14)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() + 0.5)
        self.setFont(font)
        self.anchorClicked.connect(self._anchor)
        self.spans: dict[int, tuple[int, int]] = {}  # citation index -> (start, end) in the text
        self.source = ""
        self.show_placeholder("Choose a manuscript (.tex, .md or .docx) to check its citations against your library.")

    def show_placeholder(self, text: str) -> None:
        self.source = ""
        self.spans = {}
        self.setHtml(f"<p style='color:{theme.colors()['muted']}'>{text}</p>")

    def set_source(self, text: str) -> None:
        """The manuscript's text, nothing marked yet."""
        self.source = text
        self.spans = {}
        self.setPlainText(text)

    def mark(self, index: int, start: int, end: int, verdict: str, tip: str) -> None:
        """Colour the citation at [start, end) by its verdict; a link with a tooltip."""
        end = max(end, start + 1)
        cursor = QTextCursor(self.document())
        cursor.setPosition(min(start, len(self.source)))
        cursor.setPosition(min(end, len(self.source)), QTextCursor.MoveMode.KeepAnchor)
        color = verdict_color(verdict)
        tint = QColor(color)
        tint.setAlpha(48 if verdict != "not-in-library" else 40)
        fmt = QTextCharFormat()
        fmt.setAnchor(True)
        fmt.setAnchorHref(f"cite:{index}")
        fmt.setForeground(color.darker(115) if not theme.is_dark() else color.lighter(110))
        fmt.setBackground(tint)
        fmt.setFontWeight(QFont.Weight.DemiBold)
        fmt.setToolTip(tip)
        cursor.mergeCharFormat(fmt)
        self.spans[index] = (start, end)

    def citation_point(self, index: int) -> QPoint:
        """The viewport point in the middle of a citation (scrolled into view first)."""
        start, end = self.spans[index]
        cursor = QTextCursor(self.document())
        cursor.setPosition(start + (end - start) // 2)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()
        return self.cursorRect(cursor).center()

    def _anchor(self, url) -> None:
        text = url.toString()
        if text.startswith("cite:") and text[5:].isdigit():
            self.citation_clicked.emit(int(text[5:]))


class CheckTab(QWidget):
    draft_chosen = Signal(str)  # a manuscript path: show it
    check_requested = Signal(str, str)  # draft, bib ("" = the one the draft names, or none)
    cancel_requested = Signal()
    export_requested = Signal(str)  # "md" | "json"
    action_requested = Signal(str)
    theme_changed = Signal()  # light <-> dark: the verdict colours are drawn again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        self._dark = theme.is_dark()
        self.running = False
        self.last_folder = ""  # where the file dialogs start
        self._shown = ""  # the draft the view was last asked to show
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 8)
        layout.setSpacing(7)

        head = QHBoxLayout()
        title = QLabel("Check a manuscript")
        title.setObjectName("paneTitle")
        head.addWidget(title)
        head.addStretch(1)
        self.export_md_button = theme.header_button(head, "export", "Export Markdown…", "Save the report as Markdown")
        self.export_md_button.clicked.connect(lambda: self.export_requested.emit("md"))
        self.export_json_button = theme.header_button(head, "export", "Export JSON…", "Save the report as JSON (the CLI's --json form)")
        self.export_json_button.clicked.connect(lambda: self.export_requested.emit("json"))
        layout.addLayout(head)
        subtitle = QLabel("Every citing sentence of your draft against the library paper it cites.")
        subtitle.setObjectName("paneSubtitle")
        layout.addWidget(subtitle)
        self.banner = Banner()
        self.banner.action_requested.connect(self.action_requested)
        layout.addWidget(self.banner)

        files = QGridLayout()
        files.setHorizontalSpacing(6)
        files.setVerticalSpacing(5)
        self.draft_edit = QLineEdit()
        self.draft_edit.setPlaceholderText("A LaTeX, Markdown or Word manuscript")
        self.draft_edit.editingFinished.connect(self._draft_edited)
        self.draft_edit.textChanged.connect(lambda _t: self._update_buttons())
        self.bib_edit = QLineEdit()
        self.bib_edit.setPlaceholderText("Optional: the .bib (else the one the draft names)")
        self.draft_browse = QPushButton(theme.icon("folder", 16), "Choose…")
        self.draft_browse.clicked.connect(self.choose_draft)
        self.bib_browse = QPushButton(theme.icon("folder", 16), "Choose…")
        self.bib_browse.clicked.connect(self.choose_bib)
        for row, (name, edit, button) in enumerate((("Draft", self.draft_edit, self.draft_browse),
                                                    ("References", self.bib_edit, self.bib_browse))):
            files.addWidget(QLabel(name), row, 0)
            files.addWidget(edit, row, 1)
            files.addWidget(button, row, 2)
        files.setColumnStretch(1, 1)
        layout.addLayout(files)

        run_row = QHBoxLayout()
        self.status = QLabel("")
        self.status.setObjectName("muted")
        self.status.setWordWrap(True)
        run_row.addWidget(self.status, 1)
        self.check_button = QPushButton(theme.icon("run", 16), "Check")
        self.check_button.setObjectName("primary")
        self.check_button.setMinimumWidth(110)
        self.check_button.setToolTip("Check every citing sentence against the cited paper")
        self.check_button.clicked.connect(self._check_clicked)
        run_row.addWidget(self.check_button)
        layout.addLayout(run_row)
        # The bar is thin in this theme: "sentence n of m" reads better beside it than on it.
        progress_row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress_label = QLabel("")
        self.progress_label.setObjectName("muted")
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.progress_label)
        layout.addLayout(progress_row)

        legend = QHBoxLayout()
        legend.setSpacing(16)
        self.legend: dict[str, QLabel] = {}
        for verdict in VERDICT_LABELS:
            label = QLabel()
            label.setToolTip(VERDICT_LABELS[verdict])
            self.legend[verdict] = label
            legend.addWidget(label)
        legend.addStretch(1)
        layout.addLayout(legend)

        self.view = ManuscriptView()
        self.problems = QListWidget()
        self.problems.setWordWrap(True)
        self.problems.setAlternatingRowColors(True)
        self.problems_title = QLabel("Problems")
        self.problems_title.setObjectName("sectionTitle")
        below = QWidget()
        column = QVBoxLayout(below)
        column.setContentsMargins(0, 4, 0, 0)
        column.setSpacing(3)
        column.addWidget(self.problems_title)
        column.addWidget(self.problems, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("checkSplitter")
        self.splitter.addWidget(self.view)
        self.splitter.addWidget(below)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([520, 120])
        self.problems_box = below
        layout.addWidget(self.splitter, 1)
        self.reset()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and theme.is_dark() != self._dark:
            self._dark = theme.is_dark()
            self.theme_changed.emit()

    # -- state ---------------------------------------------------------------------------
    def reset(self) -> None:
        """Nothing checked yet: empty legend, no problems, no exports."""
        self.set_counts({v: 0 for v in VERDICT_LABELS})
        self.set_problems([])
        self.progress.hide()
        self.progress_label.setText("")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.set_exportable(False)

    def set_running(self, running: bool) -> None:
        self.running = running
        self.check_button.setEnabled(True)
        if running:
            self.check_button.setText("Cancel")
            self.check_button.setIcon(theme.icon("stop", 16))
            self.check_button.setObjectName("")
        else:
            self.check_button.setText("Check")
            self.check_button.setIcon(theme.icon("run", 16))
            self.check_button.setObjectName("primary")
        for w in (self.draft_edit, self.bib_edit, self.draft_browse, self.bib_browse):
            w.setEnabled(not running)
        self.check_button.style().unpolish(self.check_button)
        self.check_button.style().polish(self.check_button)
        self._update_buttons()

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    def set_progress(self, done: int, total: int) -> None:
        self.progress.show()
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(min(done, max(1, total)))
        self.progress_label.setText(f"sentence {done} of {total}")

    def set_counts(self, counts: dict[str, int]) -> None:
        for verdict, label in self.legend.items():
            color = theme.colors()[VERDICT_COLOR[verdict]]
            n = counts.get(verdict, 0)
            label.setText(f"<span style='color:{color}; font-size:13pt'>■</span> {LEGEND_NAMES[verdict]} <b>{n}</b>")

    def set_problems(self, problems: list[str]) -> None:
        self.problems.clear()
        self.problems.addItems(problems)
        self.problems_title.setText(f"PROBLEMS ({len(problems)})")
        self.problems_box.setVisible(bool(problems))

    def set_exportable(self, exportable: bool) -> None:
        self.export_md_button.setEnabled(exportable)
        self.export_json_button.setEnabled(exportable)

    def _update_buttons(self) -> None:
        self.check_button.setEnabled(self.running or bool(self.draft_edit.text().strip()))

    # -- choosing files ----------------------------------------------------------------------
    def choose_draft(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a manuscript", self.last_folder, DRAFT_FILTER)
        if path:
            self.set_draft(path)

    def choose_bib(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose its references (.bib)", self.last_folder, BIB_FILTER)
        if path:
            self.bib_edit.setText(path)

    def set_draft(self, path: str, bib: str | None = None) -> None:
        self.draft_edit.setText(path)
        if bib is not None:
            self.bib_edit.setText(bib)
        self._draft_edited()

    def _draft_edited(self) -> None:
        path = self.draft_edit.text().strip()
        if path and path != self._shown:
            self._shown = path
            self.draft_chosen.emit(path)

    def _check_clicked(self) -> None:
        if self.running:
            self.check_button.setEnabled(False)
            self.check_button.setText("Cancelling…")
            self.cancel_requested.emit()
            return
        draft = self.draft_edit.text().strip()
        if draft:
            self._shown = draft
            self.check_requested.emit(draft, self.bib_edit.text().strip())
