"""The History tab: every answer asked of the library, newest first, with search, reopen,
export and delete (issue 53). The pane only shows and asks; history_controller.py does the work."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMessageBox,
                               QTableView, QVBoxLayout, QWidget)

from app.core.desk import HistoryEntry

from ..common import theme
from ..common.banners import Banner
from ..common.export_menu import EXPORT_TIP, export_menu
from ..common.list_table import style_list_table

COLUMNS = ("Asked", "Question", "Claims", "Within")
ASKED, QUESTION, CLAIMS, WITHIN = range(4)
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
SEARCH_DELAY_MS = 150  # typing pauses this long before the history is searched


def local_time(iso: str) -> str:
    """The stored UTC time as the user's clock reads it."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso[:16].replace("T", " ")


def _row_of(entries: Sequence[HistoryEntry], number: int) -> int:
    """Where answer `number` is listed, or -1; the core's listing finds it without building entries."""
    index_of = getattr(entries, "index_of", None)
    if index_of is not None:
        return index_of(number)
    return next((i for i, e in enumerate(entries) if e.number == number), -1)


def claims_text(e: HistoryEntry) -> str:
    if not e.claims:
        return f"{len(e.cited)} paper{'s' if len(e.cited) != 1 else ''}"
    return f"{e.supported}/{e.claims} supported"


class HistoryModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.entries: Sequence[HistoryEntry] = []

    def set_entries(self, entries: Sequence[HistoryEntry]) -> None:
        """Kept as given: the core's listing builds an entry only when its row is shown."""
        self.beginResetModel()
        self.entries = entries
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        e = self.entries[index.row()]
        col = index.column()
        if role == ENTRY_ROLE:
            return e
        if role == Qt.ItemDataRole.DisplayRole:
            if col == ASKED:
                return local_time(e.asked_at)
            if col == QUESTION:
                mark = "↻ " if e.improves else ""
                return mark + e.query + (" — paper removed" if e.removed else "")
            if col == CLAIMS:
                return claims_text(e)
            if col == WITHIN:
                return "" if e.scope == "all papers" else e.scope
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [e.query, f"Answer {e.number} · {e.mode} · {e.model} · {e.seconds:.0f} s"]
            if e.improves:
                lines.append(f"Revises answer {e.improves}")
            if e.removed:
                lines.append(f"Removed from the library since: {', '.join(e.removed)}")
            return "\n".join(lines)
        if role == Qt.ItemDataRole.ForegroundRole and col == QUESTION and e.removed:
            from PySide6.QtGui import QColor

            return QColor(theme.colors()["warn"])
        return None


class HistoryPane(QWidget):
    search_changed = Signal(str)
    reopen_requested = Signal(int)  # answer number
    delete_requested = Signal(int)
    export_requested = Signal(int, str)  # number, a format of the answer's export menu (answer_view.EXPORT_ITEMS)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        head = QHBoxLayout()
        for name, text in (("paneTitle", "History"), ("paneSubtitle", "")):
            label = QLabel(text)
            label.setObjectName(name)
            head.addWidget(label, 1 if name == "paneSubtitle" else 0)
        self.count_label = label  # how many answers (of how many, while searching)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(8)
        self.reopen_button = theme.header_button(head, "history", "Reopen", "Show this answer as it was, in the Research tab (Enter)")
        self.reopen_button.clicked.connect(self._reopen)
        self.export_button = theme.header_button(head, "export", "Export", EXPORT_TIP)
        self.export_button.setMenu(export_menu(self.export_button, self._export))
        self.delete_button = theme.header_button(head, "trash", "Delete", "Delete this answer from the history (Delete)")
        self.delete_button.clicked.connect(self._delete)
        layout.addLayout(head)
        self.banner = Banner()  # what an export wrote, or why it failed
        layout.addWidget(self.banner)

        self.search = QLineEdit()
        self.search.setPlaceholderText("Search questions and answers…")
        self.search.setClearButtonEnabled(True)
        self.search.addAction(theme.icon("search", 16), QLineEdit.ActionPosition.LeadingPosition)
        self.search.setAccessibleName("Search the history")
        layout.addWidget(self.search)
        self._search_timer = QTimer(self, singleShot=True, interval=SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(lambda: self.search_changed.emit(self.search.text()))
        self.search.textChanged.connect(lambda _t: self._search_timer.start())

        self.model = HistoryModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._enable())
        self.table.setAccessibleName("Answers asked of this library, newest first")
        style_list_table(self.table, QAbstractItemView.SelectionMode.SingleSelection)
        self.table.doubleClicked.connect(lambda _i: self._reopen())
        self.table.activated.connect(lambda _i: self._reopen())  # Enter
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QUESTION, QHeaderView.ResizeMode.Stretch)
        for col, width in ((ASKED, 126), (CLAIMS, 110), (WITHIN, 150)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, width)
        layout.addWidget(self.table, 1)
        self.empty_hint = QLabel("<p style='font-size:11pt'><b>No answers yet</b></p>"
                                 "<p>Every question you ask is kept here with its answer, evidence and checks.</p>")
        self.empty_hint.setObjectName("muted")
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setWordWrap(True)
        layout.addWidget(self.empty_hint, 1)
        from PySide6.QtGui import QAction, QKeySequence

        delete = QAction("Delete", self.table)
        delete.setShortcut(QKeySequence.StandardKey.Delete)
        delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete.triggered.connect(self._delete)
        self.table.addAction(delete)
        self.set_entries([], total=0)

    def set_entries(self, entries: Sequence[HistoryEntry], total: int) -> None:
        """The listed answers (a search's, or all), and how many the history holds."""
        selected = self.selected_number()
        self.model.set_entries(entries)
        searching = bool(self.search.text().strip())
        self.count_label.setText(f"{len(entries)} of {total}" if searching else f"{total} answer{'s' if total != 1 else ''}")
        self.table.setVisible(bool(entries) or searching)
        self.empty_hint.setVisible(not entries and not searching)
        row = _row_of(entries, selected) if selected is not None else -1
        row = row if row >= 0 else (0 if entries else -1)
        if row >= 0:
            self.table.selectRow(row)
        self._enable()

    def selected_number(self) -> int | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return rows[0].data(ENTRY_ROLE).number if rows else None

    def select_number(self, number: int) -> None:
        row = next((i for i, e in enumerate(self.model.entries) if e.number == number), -1)
        if row >= 0:
            self.table.selectRow(row)

    def _enable(self) -> None:
        has = self.selected_number() is not None
        for button in (self.reopen_button, self.export_button, self.delete_button):
            button.setEnabled(has)

    def _reopen(self) -> None:
        n = self.selected_number()
        if n is not None:
            self.reopen_requested.emit(n)

    def _delete(self) -> None:
        n = self.selected_number()
        if n is not None and self.confirm_delete(n):
            self.delete_requested.emit(n)

    def confirm_delete(self, number: int) -> bool:
        entry = next(e for e in self.model.entries if e.number == number)
        answer = QMessageBox.question(self, "Delete from the history", f"Delete the answer to “{entry.query}”?\n\n"
                                      "Its evidence and checks are deleted with it; the papers are not touched.",
                                      QMessageBox.StandardButton.Cancel | QMessageBox.StandardButton.Yes,
                                      QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes

    def _export(self, fmt: str) -> None:
        n = self.selected_number()
        if n is not None:
            self.export_requested.emit(n, fmt)
