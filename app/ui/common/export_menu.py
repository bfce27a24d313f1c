"""The export menu of an answer (the research pane's and the History tab's): Markdown, BibTeX, and
the answer shared with its evidence (issue 81): a web page, a verifiable bundle, annotated PDFs."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

EXPORT_TIP = "Export the answer: Markdown, BibTeX, or shared with its evidence (a web page, a bundle to verify, annotated PDFs)"
# The export menu of the answer and of the History tab: (format, label); None a separator.
EXPORT_ITEMS = (
    ("markdown", "Markdown (answer with references)…"),
    ("bibtex", "BibTeX (cited papers)…"),
    None,
    ("html", "Share as web page…"),
    ("bundle", "Share as evidence bundle (.zip, verifiable)…"),
    ("annotated-pdf", "Share as annotated PDFs (folder)…"),
)
EXPORT_ITEM_TIPS = {
    "html": "One HTML file that opens anywhere, offline: the answer, its verdicts and a highlighted crop of every cited page",
    "bundle": "The web page and a manifest of each quote's PDF hash, page and text: `research-desk verify` re-checks it offline",
    "annotated-pdf": "A copy of each cited PDF with the cited sentences highlighted and the claims as notes (for any PDF reader or Zotero)",
}


def export_menu(parent: QWidget, emit: Callable[[str], None]) -> QMenu:
    """The export menu: one action per format, each calling `emit(format)`."""
    menu = QMenu(parent)
    menu.setToolTipsVisible(True)
    for item in EXPORT_ITEMS:
        if item is None:
            menu.addSeparator()
            continue
        fmt, label = item
        action = menu.addAction(label, lambda f=fmt: emit(f))
        action.setObjectName(f"export_{fmt}")
        action.setToolTip(EXPORT_ITEM_TIPS.get(fmt, ""))
    return menu


# format → (the Desk's format, the save dialog's filter; None: a folder is chosen)
FILES = {
    "markdown": ("md", "Markdown (*.md)"),
    "bibtex": ("bibtex", "BibTeX (*.bib)"),
    "html": ("html", "Web page (*.html)"),
    "bundle": ("bundle", "Evidence bundle (*.zip)"),
    "annotated-pdf": ("annotated-pdf", None),
}


def desk_format(fmt: str) -> str:
    return FILES.get(fmt, FILES["markdown"])[0]


def ask_export_path(parent: QWidget | None, fmt: str, start: str) -> str:
    """Where to export: a file (save dialog) or, for annotated PDFs, a folder; "" when cancelled."""
    _, files = FILES.get(fmt, FILES["markdown"])
    if files is None:
        return QFileDialog.getExistingDirectory(parent, "Export annotated PDFs into a folder", start)
    path, _ = QFileDialog.getSaveFileName(parent, "Export", start, files)
    return path
