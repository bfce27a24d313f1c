"""Edit the tags and collections of papers (the library pane's "Tags and collections…")."""

from __future__ import annotations

from functools import partial

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QWidget

from app.core.records import Paper

from ..common.worker import JobContext


class LabelsDialog(QDialog):
    """Comma-separated tags and collections ("Parent/Child" nests) for one paper or several.

    For one paper the fields hold its own labels and replace them; for several they start
    empty and what is typed is added to each paper's own."""

    def __init__(self, papers: list[Paper], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.papers = papers
        one = len(papers) == 1
        self.setWindowTitle("Tags and collections")
        form = QFormLayout(self)
        what = f"“{papers[0].title}”" if one else f"{len(papers)} papers (added to their own)"
        intro = QLabel(what)
        intro.setWordWrap(True)
        form.addRow(intro)
        self.tags = QLineEdit(", ".join(papers[0].tags) if one else "")
        self.tags.setPlaceholderText("e.g. robust, to read")
        self.tags.setAccessibleName("Tags, separated by commas")
        self.collections = QLineEdit(", ".join(papers[0].collections) if one else "")
        self.collections.setPlaceholderText("e.g. Thesis/Chapter 2")
        self.collections.setAccessibleName("Collections, separated by commas; a slash nests one in another")
        form.addRow("Tags:", self.tags)
        form.addRow("Collections:", self.collections)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(460, self.sizeHint().height())

    def values(self) -> tuple[list[str], list[str]]:
        split = lambda text: [x.strip() for x in text.split(",") if x.strip()]  # noqa: E731
        return split(self.tags.text()), split(self.collections.text())


def save_labels(ctx: JobContext, ids: list[str], tags: list[str], collections: list[str], add: bool) -> list[Paper]:
    return ctx.desk.set_labels(ids, tags=tags, collections=collections, add=add)


def edit_labels(window, ids: list[str], dialog: LabelsDialog | None = None):
    """Ask for the labels, then save them on the worker and refresh the library list."""
    papers = [p for p in (window.library_pane.paper(i) for i in ids) if p is not None]
    if not papers:
        return None
    dialog = dialog or LabelsDialog(papers, window)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    tags, collections = dialog.values()
    handle = window.host.submit("labels", partial(save_labels, ids=[p.id for p in papers], tags=tags,
                                                  collections=collections, add=len(papers) > 1))
    handle.finished.connect(lambda _papers: window.library.refresh())
    handle.failed.connect(lambda exc: window.statusBar().showMessage(f"Not saved: {getattr(exc, 'message', exc)}", 6000))
    return handle
