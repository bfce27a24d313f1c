"""Table model of the library's papers, and the filter-as-you-type proxy."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt

from app.core.records import Paper

from ..common import theme

COLUMNS = ("Title", "Authors", "Year", "Pages", "")  # status: an icon, its text in the tooltip
TITLE, AUTHORS, YEAR, PAGES, STATUS = range(5)
PAPER_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2

STATUS_TEXT = {
    "words": "Words only",
    "indexed": "Indexed",
    "summarized": "Summarized",
    "importing": "Incomplete",
    "extracted": "Extracted",
    "failed": "Failed",
}
STATUS_ICON = {
    "words": "status-importing",
    "indexed": "status-indexed",
    "summarized": "status-summarized",
    "importing": "status-importing",
    "extracted": "status-importing",
    "failed": "status-failed",
}
STATUS_TIP = {
    "words": "Searchable by its words; its vectors are still being computed (they resume if stopped)",
    "indexed": "Indexed: full text searchable",
    "summarized": "Indexed and summarized",
    "importing": "Import did not finish; re-index it or add the file again",
    "extracted": "Text extracted, not indexed yet",
}


def authors_short(authors: list[str]) -> str:
    if not authors:
        return ""
    first = authors[0]
    if len(authors) == 1:
        return first
    if len(authors) == 2:
        return f"{first}, {authors[1]}"
    return f"{first} et al."


def status_key(paper: Paper) -> str:
    if paper.status == "indexed" and paper.summarized:
        return "summarized"
    return paper.status


class PaperTableModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._papers: list[Paper] = []

    # -- data --------------------------------------------------------------------
    def set_papers(self, papers: list[Paper]) -> None:
        """Replace the rows, keeping unchanged rows in place (selection survives refreshes)."""
        new_ids = [p.id for p in papers]
        if new_ids == [p.id for p in self._papers]:
            self._papers = list(papers)
            if papers:
                self.dataChanged.emit(self.index(0, 0), self.index(len(papers) - 1, len(COLUMNS) - 1))
            return
        self.beginResetModel()
        self._papers = list(papers)
        self.endResetModel()

    def papers(self) -> list[Paper]:
        return list(self._papers)

    def paper(self, row: int) -> Paper | None:
        return self._papers[row] if 0 <= row < len(self._papers) else None

    def row_of(self, paper_id: str) -> int:
        return next((i for i, p in enumerate(self._papers) if p.id == paper_id), -1)

    # -- Qt model ------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self._papers)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == STATUS:
            return "Status (sort by status)"
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.TextAlignmentRole and section in (YEAR, PAGES):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        p = self._papers[index.row()]
        col = index.column()
        if role == PAPER_ROLE:
            return p
        if role == Qt.ItemDataRole.DisplayRole:
            if col == TITLE:
                return p.title or p.id
            if col == AUTHORS:
                return authors_short(p.authors)
            if col == YEAR:
                return p.year
            if col == PAGES:
                return str(p.page_count) if p.page_count else ""
        if role == SORT_ROLE:
            if col == PAGES:
                return p.page_count
            if col == STATUS:
                return STATUS_TEXT.get(status_key(p), p.status)
            return (self.data(index, Qt.ItemDataRole.DisplayRole) or "").lower()
        if role == Qt.ItemDataRole.DecorationRole and col == STATUS:
            return theme.icon(STATUS_ICON.get(status_key(p), "status-importing"), 16)
        if role == Qt.ItemDataRole.ToolTipRole:
            if p.status == "failed":
                return f"Import failed: {p.status_reason or 'unknown reason'}"
            if col == STATUS:
                return STATUS_TIP.get(status_key(p), p.status)
            # (These two sat after the accessible text's return, so no title or author tooltip showed.)
            if col == TITLE:
                return f"{p.title}\n{p.id}" + (f"\n{p.source_file}" if p.source_file else "") + label_lines(p)
            if col == AUTHORS and p.authors:
                return ", ".join(p.authors)
        if role == Qt.ItemDataRole.AccessibleTextRole and col == STATUS:
            return STATUS_TEXT.get(status_key(p), p.status)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (YEAR, PAGES):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and p.status == "failed":
            from PySide6.QtGui import QColor

            return QColor(theme.colors()["bad"]) if col == STATUS else None
        return None


def label_lines(p: Paper) -> str:
    """A paper's tags and collections, as its tooltip lists them."""
    return "".join(f"\n{name}: {', '.join(values)}" for name, values in (("Tags", p.tags), ("Collections", p.collections)) if values)


class PaperFilterProxy(QSortFilterProxyModel):
    """Every word of the filter must occur in the title, authors, id, year, file name, tags or collections;
    with a label chosen, the paper must carry that tag, or be in that collection or one below it."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._words: list[str] = []
        self._label: tuple[str, str] | None = None  # ("tag" | "collection", value)
        self.setSortRole(SORT_ROLE)
        self.setSortCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

    def set_filter(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt 6.9+: invalidateFilter() is deprecated
            self.beginFilterChange()
            self._words = text.lower().split()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._words = text.lower().split()
            self.invalidateFilter()

    def set_label(self, label: tuple[str, str] | None) -> None:
        self._label = label
        self.invalidate()

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:  # noqa: N802
        paper: Paper | None = self.sourceModel().paper(source_row)  # type: ignore[attr-defined]
        if paper is None:
            return False
        if self._label is not None:
            kind, value = self._label
            if kind == "tag" and value.casefold() not in (t.casefold() for t in paper.tags):
                return False
            if kind == "collection" and not any(c == value or c.startswith(value + "/") for c in paper.collections):
                return False
        if not self._words:
            return True
        haystack = " ".join([paper.title, " ".join(paper.authors), paper.id, paper.year, paper.source_file,
                             " ".join(paper.tags), " ".join(paper.collections)]).lower()
        return all(w in haystack for w in self._words)
