"""The library pane: papers table, filter, Add papers…, import progress, context menu.

The pane only shows and asks: it emits intents (add, open, summarize, …)
that the main window turns into worker jobs.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.records import Paper

from ..common import theme
from ..common.banners import Banner
from .import_panel import ImportPanel
from ..common.list_table import style_list_table
from .model import AUTHORS, PAGES, PAPER_ROLE, STATUS, TITLE, YEAR, PaperFilterProxy, PaperTableModel


class LibraryPane(QWidget):
    add_requested = Signal(list)  # paths (files and folders)
    import_source_requested = Signal(str, str)  # ("zotero" | "bib" | "ris", path; "" = Zotero's default)
    open_pdf_requested = Signal(str)  # paper id
    summary_requested = Signal(str)
    notes_requested = Signal(str)
    summarize_requested = Signal(list)  # paper ids
    reindex_requested = Signal(list)
    remove_requested = Signal(list)
    scope_requested = Signal(list)  # paper ids: ask the next question within them
    labels_requested = Signal(list)  # paper ids: edit their tags and collections
    action_requested = Signal(str)  # banner actions

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(8)

        head = QHBoxLayout()
        self.title = QLabel("Library")
        self.title.setObjectName("paneTitle")
        self.count_label = QLabel("")
        self.count_label.setObjectName("paneSubtitle")
        self.add_button = QPushButton(theme.icon("add", 16), "Add papers…")
        self.add_button.setToolTip("Add PDF files or folders (or drop them onto the window), or import from Zotero or a .bib/.ris file")
        add_menu = QMenu(self)
        add_menu.addAction(theme.icon("add", 16), "PDF files…", self.choose_files)
        add_menu.addAction(theme.icon("folder", 16), "A folder…", self.choose_folder)
        add_menu.addSeparator()
        add_menu.addAction("From Zotero…", self.choose_zotero)
        add_menu.addAction("From BibTeX or RIS…", self.choose_bibliography)
        self.add_button.setMenu(add_menu)
        # With its menu arrow the button must not be squeezed by the count beside it in a narrow pane.
        self.add_button.setMinimumWidth(self.add_button.sizeHint().width())
        head.addWidget(self.title)
        head.addStretch(1)
        head.addWidget(self.add_button)
        layout.addLayout(head)

        self.banner = Banner()
        self.banner.action_requested.connect(self.action_requested)
        layout.addWidget(self.banner)

        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by title, author, year, id…")
        self.filter.setClearButtonEnabled(True)
        self.filter.addAction(theme.icon("search", 16), QLineEdit.ActionPosition.LeadingPosition)
        layout.addWidget(self.filter)
        self.label_filter = QComboBox()  # a tag or collection (shown once the library has any)
        self.label_filter.setAccessibleName("Show the papers of a tag or collection")
        self.label_filter.currentIndexChanged.connect(lambda _i: self.proxy.set_label(self.label_filter.currentData()))
        layout.addWidget(self.label_filter)

        self.model = PaperTableModel(self)
        self.proxy = PaperFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.filter.textChanged.connect(self._filter_changed)
        for changed in (self.proxy.modelReset, self.proxy.rowsInserted, self.proxy.rowsRemoved, self.proxy.layoutChanged):
            changed.connect(self._update_count)  # a filter that hides papers says how many it shows

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(TITLE, Qt.SortOrder.AscendingOrder)
        style_list_table(self.table, QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.doubleClicked.connect(self._double_clicked)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(AUTHORS, QHeaderView.ResizeMode.Interactive)
        for col, width in ((AUTHORS, 120), (YEAR, 52), (PAGES, 58), (STATUS, 30)):
            header.resizeSection(col, width)
        header.setSectionResizeMode(YEAR, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(PAGES, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(STATUS, QHeaderView.ResizeMode.Fixed)
        header.setMinimumSectionSize(24)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.table.viewport().installEventFilter(self)
        self.table.installEventFilter(self)  # Enter opens the current paper, as a double click does
        layout.addWidget(self.table, 1)
        self.setMinimumWidth(260)

        self.empty_hint = QLabel(
            "<p style='font-size:11pt'><b>Your library is empty</b></p>"
            "<p>Drop PDF files or folders anywhere on this window,<br/>or use <b>Add papers…</b>.</p>"
        )
        self.empty_hint.setObjectName("muted")
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setWordWrap(True)
        layout.addWidget(self.empty_hint, 1)
        # Under the list, as a file browser's status line: beside the title it pushed "Add papers…"
        # out of a pane at its minimum width.
        layout.addWidget(self.count_label)

        self.import_panel = ImportPanel()
        layout.addWidget(self.import_panel)

        self.remove_action = QAction("Remove", self)
        self.remove_action.setShortcut(QKeySequence.StandardKey.Delete)
        self.remove_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.remove_action.triggered.connect(self._remove_selected)
        self.table.addAction(self.remove_action)
        self.set_papers([])

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if watched is self.table.viewport() and event.type() == event.Type.Resize:
            self._fit_columns(event.size().width())
        elif (watched is self.table and event.type() == event.Type.KeyPress
              and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.table.currentIndex().isValid()):
            self._double_clicked(self.table.currentIndex())
            return True
        return super().eventFilter(watched, event)

    def _fit_columns(self, width: int) -> None:
        """A narrow pane drops Authors, then Year, rather than squeezing the title to nothing."""
        self.table.setColumnHidden(AUTHORS, width < 440)
        self.table.setColumnHidden(YEAR, width < 300)

    # -- data -------------------------------------------------------------------------
    def set_papers(self, papers: list[Paper]) -> None:
        self.model.set_papers(papers)
        self._fill_label_filter(papers)
        self._update_count()
        empty = not papers
        self.table.setVisible(not empty)
        self.filter.setVisible(not empty)
        self.empty_hint.setVisible(empty)
        self.count_label.setVisible(not empty)

    def _update_count(self, *_args) -> None:
        """"29 papers", or "12 of 29 papers" while the text or label filter hides some."""
        papers = self.model.papers()
        shown = self.proxy.rowCount()
        text = f"{len(papers)} paper{'s' if len(papers) != 1 else ''}"
        if shown < len(papers):
            text = f"{shown} of {text}"
        failed = sum(1 for p in papers if p.status == "failed")
        if failed:
            text += f" · {failed} failed"
        self.count_label.setText(text)

    def _fill_label_filter(self, papers: list[Paper]) -> None:
        tags = sorted({t for p in papers for t in p.tags}, key=str.casefold)
        collections = sorted({"/".join(c.split("/")[: i + 1]) for p in papers for c in p.collections
                              for i in range(c.count("/") + 1)}, key=str.casefold)
        current = self.label_filter.currentData()
        self.label_filter.blockSignals(True)
        self.label_filter.clear()
        self.label_filter.addItem("All papers", None)
        for kind, values in (("tag", tags), ("collection", collections)):
            for v in values:
                self.label_filter.addItem(f"{kind.capitalize()}: {v}", (kind, v))
        index = self.label_filter.findData(current) if current else 0
        self.label_filter.setCurrentIndex(max(0, index))
        self.label_filter.blockSignals(False)
        self.proxy.set_label(self.label_filter.currentData())
        self.label_filter.setVisible(bool(tags or collections))

    def papers(self) -> list[Paper]:
        return self.model.papers()

    def paper(self, paper_id: str) -> Paper | None:
        row = self.model.row_of(paper_id)
        return self.model.paper(row)

    def selected_ids(self) -> list[str]:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return [r.data(PAPER_ROLE).id for r in rows]

    def visible_ids(self) -> list[str]:
        return [self.proxy.index(r, 0).data(PAPER_ROLE).id for r in range(self.proxy.rowCount())]

    def select(self, paper_id: str) -> None:
        row = self.model.row_of(paper_id)
        if row < 0:
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if index.isValid():
            self.table.selectRow(index.row())
            self.table.scrollTo(index)

    # -- actions ------------------------------------------------------------------------
    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add papers", "", "PDF files (*.pdf);;All files (*)")
        if files:
            self.add_requested.emit(files)

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder of papers (searched recursively)")
        if folder:
            self.add_requested.emit([folder])

    def choose_zotero(self) -> None:
        """Zotero's database: its default place if it is there, else the user picks zotero.sqlite."""
        default = Path.home() / "Zotero" / "zotero.sqlite"
        start = str(default if default.exists() else Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Import a Zotero library (read-only)", start,
                                              "Zotero database (zotero.sqlite);;All files (*)")
        if path:
            self.import_source_requested.emit("zotero", path)

    def choose_bibliography(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import the PDFs of a bibliography", "",
                                              "Bibliographies (*.bib *.ris *.txt);;All files (*)")
        if path:
            self.import_source_requested.emit("ris" if path.lower().endswith((".ris", ".txt")) else "bib", path)

    def _filter_changed(self, text: str) -> None:
        self.proxy.set_filter(text)

    def _double_clicked(self, index: QModelIndex) -> None:
        paper: Paper = index.data(PAPER_ROLE)
        if paper is not None:
            self.open_pdf_requested.emit(paper.id)

    def _context_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if not index.isValid():
            menu = QMenu(self)
            menu.addAction(theme.icon("add", 16), "Add papers…", self.choose_files)
            menu.addAction(theme.icon("folder", 16), "Add a folder…", self.choose_folder)
            menu.exec(self.table.viewport().mapToGlobal(pos))
            return
        if not self.table.selectionModel().isRowSelected(index.row(), index.parent()):
            self.table.selectRow(index.row())
        ids = self.selected_ids()
        one = ids[0] if len(ids) == 1 else None
        paper = self.paper(ids[0]) if ids else None
        menu = self.build_menu(ids, one, paper)
        menu.exec(self.table.viewport().mapToGlobal(pos))

    def build_menu(self, ids: list[str], one: str | None, paper: Paper | None) -> QMenu:
        menu = QMenu(self)
        complete = paper is not None and paper.complete
        a = menu.addAction(theme.icon("summary", 16), "Show summary", lambda: self.summary_requested.emit(one))
        a.setEnabled(one is not None)
        a = menu.addAction(theme.icon("pdf", 16), "Open PDF", lambda: self.open_pdf_requested.emit(one))
        a.setEnabled(one is not None)
        a = menu.addAction(theme.icon("notes", 16), "Edit notes", lambda: self.notes_requested.emit(one))
        a.setEnabled(one is not None and complete)
        menu.addSeparator()
        a = menu.addAction(theme.icon("search", 16), "Ask about this paper" if len(ids) == 1 else f"Ask about these {len(ids)} papers",
                           lambda: self.scope_requested.emit(ids))
        a.setToolTip("The next question reads and cites only these papers (the research pane shows the scope)")
        menu.addAction("Tags and collections…", lambda: self.labels_requested.emit(ids))
        menu.addSeparator()
        label = "Summarize" if len(ids) == 1 else f"Summarize {len(ids)} papers"
        a = menu.addAction(theme.icon("improve", 16), label, lambda: self.summarize_requested.emit(ids))
        a.setToolTip("Write an LLM summary (used to shortlist papers in research)")
        label = "Re-index" if len(ids) == 1 else f"Re-index {len(ids)} papers"
        menu.addAction(theme.icon("reindex", 16), label, lambda: self.reindex_requested.emit(ids))
        menu.addSeparator()
        label = "Remove…" if len(ids) == 1 else f"Remove {len(ids)} papers…"
        menu.addAction(theme.icon("trash", 16), label, self._remove_selected)
        return menu

    def _remove_selected(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        if len(ids) == 1:
            paper = self.paper(ids[0])
            what = f"“{paper.title if paper else ids[0]}”"
        else:
            what = f"{len(ids)} papers"
        answer = QMessageBox.question(
            self,
            "Remove from library",
            f"Remove {what} from the library?\n\nThe library's copy of the PDF, its extracted text, "
            "summary and notes are deleted. Your original files are not touched.",
            QMessageBox.StandardButton.Cancel | QMessageBox.StandardButton.Yes,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.remove_requested.emit(ids)
