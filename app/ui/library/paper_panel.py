"""A paper's summary (rendered) and the user's notes (autosaved to notes/ID.md).

Saving writes the file atomically right here (a few KB, well under the UI
thread's budget); re-indexing, which needs the embedding model, is asked of
the worker through `notes_saved`.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QTabWidget, QTextBrowser, QVBoxLayout, QWidget

from app.core.desk import LibraryLayout
from app.core.records import Paper

from ..common import theme
from ..common.answer_render import markdown_to_html
from .paper_details import PaperDetails

AUTOSAVE_MS = 1200  # save this long after the last keystroke


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


class PaperPanel(QWidget):
    notes_saved = Signal(str)  # paper id
    summarize_requested = Signal(list)
    open_pdf_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        self.layout_: LibraryLayout | None = None
        self.paper: Paper | None = None
        self._saved_text = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 8)
        layout.setSpacing(6)
        head = QHBoxLayout()
        self.title = QLabel("No paper")
        self.title.setObjectName("paneTitle")
        self.title.setWordWrap(True)
        head.addWidget(self.title, 1)
        self.open_button = QPushButton(theme.icon("pdf", 16), "Open PDF")
        self.open_button.clicked.connect(lambda: self.paper and self.open_pdf_requested.emit(self.paper.id))
        head.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(head)
        self.meta = QLabel("")
        self.meta.setObjectName("muted")
        self.meta.setWordWrap(True)
        layout.addWidget(self.meta)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        summary_page = QWidget()
        sl = QVBoxLayout(summary_page)
        sl.setContentsMargins(0, 6, 0, 0)
        self.summary = QTextBrowser()
        self.summary.setObjectName("summary")
        self.summary.setOpenExternalLinks(True)
        sl.addWidget(self.summary, 1)
        self.summarize_button = QPushButton(theme.icon("improve", 16), "Summarize this paper")
        self.summarize_button.setToolTip("Write an LLM summary; it also helps research find this paper")
        self.summarize_button.clicked.connect(lambda: self.paper and self.summarize_requested.emit([self.paper.id]))
        sl.addWidget(self.summarize_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.tabs.addTab(summary_page, "Summary")

        notes_page = QWidget()
        nl = QVBoxLayout(notes_page)
        nl.setContentsMargins(0, 6, 0, 0)
        self.notes = QPlainTextEdit()
        self.notes.setPlaceholderText("Your notes on this paper (Markdown). They are saved as you type and searched with the summaries.")
        self.notes.textChanged.connect(self._notes_changed)
        nl.addWidget(self.notes, 1)
        self.notes_status = QLabel("")
        self.notes_status.setObjectName("muted")
        nl.addWidget(self.notes_status)
        self.tabs.addTab(notes_page, "Notes")
        self.details = PaperDetails()
        self.tabs.addTab(self.details, "Details")
        layout.addWidget(self.tabs, 1)

        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(AUTOSAVE_MS)
        self._autosave.timeout.connect(self.save_notes)
        self.setEnabled(False)

    def set_library(self, layout: LibraryLayout) -> None:
        self.save_notes()
        self.layout_ = layout
        self.paper = None
        self.setEnabled(False)

    def show_paper(self, paper: Paper, tab: str = "summary") -> None:
        self.save_notes()  # never lose the previous paper's edits
        self.paper = paper
        self.setEnabled(True)
        self.title.setText(paper.title or paper.id)
        authors = ", ".join(paper.authors) or "Unknown authors"
        self.meta.setText(f"{paper.id} · {authors}" + (f" · {paper.published}" if paper.published else "") + f" · {paper.page_count} pages"
                          + (" · ⚠ details to check" if paper.unsure else ""))
        self.details.show_paper(paper)
        if tab == "details":
            self.details.status.setText("Saved; kept when the paper is re-imported.")
        self.refresh_summary()
        text = _read(self.layout_.notes_path(paper.id)) if self.layout_ else ""
        self.notes.blockSignals(True)
        self.notes.setPlainText(text)
        self.notes.blockSignals(False)
        self._saved_text = text
        self.notes_status.setText("")
        self.notes.setEnabled(paper.complete)
        self.tabs.setCurrentIndex({"notes": 1, "details": 2}.get(tab, 0))
        if tab == "notes":
            self.notes.setFocus()

    def refresh_summary(self) -> None:
        paper = self.paper
        if paper is None or self.layout_ is None:
            return
        self.summary.document().setDefaultStyleSheet(theme.answer_css())
        text = _read(self.layout_.summary_path(paper.id))
        if text:
            # The panel's header already shows the title; drop the summary's own "# Title".
            lines = text.lstrip().splitlines()
            if lines and lines[0].startswith("# "):
                text = "\n".join(lines[1:])
            self.summary.setHtml(markdown_to_html(text))
            self.summarize_button.setText("Summarize again")
        else:
            abstract = html.escape(paper.abstract) if paper.abstract else "<i>No abstract was found in the PDF.</i>"
            self.summary.setHtml(
                f"<p class='muted'>No LLM summary yet — “Summarize this paper” writes one.</p><h3>Abstract</h3><p>{abstract}</p>"
            )
            self.summarize_button.setText("Summarize this paper")
        if paper.status == "failed":
            self.summary.append(f"<p class='muted'><b>Import failed:</b> {html.escape(paper.status_reason)}</p>")
        self.summarize_button.setEnabled(paper.complete)

    # -- notes autosave --------------------------------------------------------------------
    def _notes_changed(self) -> None:
        self.notes_status.setText("Editing…")
        self._autosave.start()

    def save_notes(self) -> bool:
        """Write the notes if they changed; returns True when a file was written."""
        self._autosave.stop()
        if self.paper is None or self.layout_ is None:
            return False
        text = self.notes.toPlainText()
        if text == self._saved_text:
            if self.notes_status.text() == "Editing…":
                self.notes_status.setText("Saved")
            return False
        try:
            path = self.layout_.write_notes(self.paper.id, text)
        except OSError as exc:
            self.notes_status.setText(f"Could not save the notes: {exc.strerror or exc}")
            return False
        self._saved_text = text
        self.notes_status.setText(f"Saved to {path.name} · updating the index…")
        self.notes_saved.emit(self.paper.id)
        return True

    def notes_indexed(self, paper_id: str) -> None:
        if self.paper is not None and self.paper.id == paper_id and self.notes_status.text().startswith("Saved"):
            self.notes_status.setText("Saved · research now sees these notes")
