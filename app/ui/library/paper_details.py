"""A paper's metadata as a form the user can correct (the paper panel's Details tab).

Fields the reader was unsure of (Paper.unsure) are marked so the user checks them first.
Saving emits the changed fields; the window hands them to the Desk (`edit_paper`), which
keeps the correction across re-imports.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.records import Paper

UNSURE_MARK = "  ⚠ check"
# Form rows: (Paper field, label, the `unsure` names that mark it).
ROWS = (
    ("title", "Title", ("title",)),
    ("authors", "Authors", ("authors",)),
    ("published", "Published", ("published", "year")),
    ("venue", "Venue", ("venue",)),
    ("doi", "DOI", ("doi",)),
)


class PaperDetails(QWidget):
    """Title, authors (one per line), date, venue, DOI and abstract, editable."""

    edited = Signal(str, dict)  # paper id, {field: new value} for the fields that changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.paper: Paper | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        self.hint = QLabel("")
        self.hint.setObjectName("muted")
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        form = QFormLayout()
        self.fields: dict[str, QLineEdit | QPlainTextEdit] = {}
        self.labels: dict[str, QLabel] = {}
        for name, label, _ in ROWS:
            editor: QLineEdit | QPlainTextEdit
            if name == "authors":
                editor = QPlainTextEdit()
                editor.setPlaceholderText("One author per line, in the paper's order")
                editor.setFixedHeight(80)
            else:
                editor = QLineEdit()
            self.fields[name] = editor
            self.labels[name] = QLabel(label)
            form.addRow(self.labels[name], editor)
        self.abstract = QPlainTextEdit()
        self.fields["abstract"] = self.abstract
        self.labels["abstract"] = QLabel("Abstract")
        form.addRow(self.labels["abstract"], self.abstract)
        layout.addLayout(form, 1)
        buttons = QHBoxLayout()
        self.status = QLabel("")
        self.status.setObjectName("muted")
        buttons.addWidget(self.status, 1)
        self.revert_button = QPushButton("Revert")
        self.revert_button.clicked.connect(lambda: self.paper and self.show_paper(self.paper))
        self.save_button = QPushButton("Save details")
        self.save_button.clicked.connect(self.save)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        layout.addLayout(buttons)

    def show_paper(self, paper: Paper) -> None:
        self.paper = paper
        values = self._values_of(paper)
        for name, editor in self.fields.items():
            if isinstance(editor, QPlainTextEdit):
                editor.setPlainText(values[name])
            else:
                editor.setText(values[name])
        unsure = set(paper.unsure)
        marked = []
        for name, label, marks in (*ROWS, ("abstract", "Abstract", ("abstract",))):
            doubtful = bool(unsure.intersection(marks))
            self.labels[name].setText(label + (UNSURE_MARK if doubtful else ""))
            self.labels[name].setToolTip("Read from the page with low confidence: please check it" if doubtful else "")
            if doubtful:
                marked.append(label.lower())
        self.hint.setText(
            f"Please check: {', '.join(marked)} — read from the page with low confidence." if marked
            else "Read from the paper's first pages. Corrections are kept when the paper is re-imported.")
        self.status.setText("")

    def changes(self) -> dict:
        """The fields whose value differs from the paper's, in the Paper's types."""
        if self.paper is None:
            return {}
        before = self._values_of(self.paper)
        changed = {}
        for name, editor in self.fields.items():
            text = editor.toPlainText() if isinstance(editor, QPlainTextEdit) else editor.text()
            if text.strip() == before[name].strip():
                continue
            if name == "authors":
                changed[name] = [a.strip() for a in text.splitlines() if a.strip()]
            else:
                changed[name] = text.strip()
        return changed

    def save(self) -> None:
        changed = self.changes()
        if self.paper is None or not changed:
            self.status.setText("Nothing changed.")
            return
        self.status.setText("Saving…")
        self.edited.emit(self.paper.id, changed)

    def saved(self, paper: Paper) -> None:
        self.show_paper(paper)
        self.status.setText("Saved; kept when the paper is re-imported.")

    @staticmethod
    def _values_of(paper: Paper) -> dict[str, str]:
        return {
            "title": paper.title, "authors": "\n".join(paper.authors), "published": paper.published,
            "venue": paper.venue, "doi": paper.doi, "abstract": paper.abstract,
        }
