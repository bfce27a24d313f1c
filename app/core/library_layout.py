"""Where a library's files live (DESIGN.md, "The library"); plain paths, no database."""

from __future__ import annotations

from pathlib import Path

from .atomic_files import atomic_write_text


class LibraryLayout:
    """Where a library's files live; needs no LanceDB connection (the UI reads files with it)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()

    def pdf_path(self, paper_id: str) -> Path:
        return self.root / "pdfs" / f"{paper_id}.pdf"

    def text_path(self, paper_id: str) -> Path:
        return self.root / "text" / f"{paper_id}.md"

    def summary_path(self, paper_id: str) -> Path:
        return self.root / "summaries" / f"{paper_id}.md"

    def write_notes(self, paper_id: str, text: str) -> Path:
        """Save the user's notes atomically (a crash leaves the old notes or the new, never half)."""
        path = self.notes_path(paper_id)
        atomic_write_text(path, text)
        return path

    def notes_path(self, paper_id: str) -> Path:
        return self.root / "notes" / f"{paper_id}.md"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"
