"""Where a library's files live (DESIGN.md, "The library"); plain paths, no database.

A library on object storage (`s3://bucket/prefix`, storage.py) has a local cache folder as its
root: the accessors of pdfs/ and text/ fetch a missing file from the bucket (read-through), so
every reader (the PDF viewer, summaries, validate) keeps working on paths.
"""

from __future__ import annotations

from pathlib import Path

from . import storage
from .atomic_files import atomic_write_text


class LibraryLayout:
    """Where a library's files live; needs no LanceDB connection (the UI reads files with it)."""

    def __init__(self, root: str | Path, *, endpoint: str = "") -> None:
        if storage.is_remote(root):
            self.mirror: storage.Mirror | None = storage.attach(str(root), endpoint)
            self.root = self.mirror.root
        else:
            self.root = Path(root).expanduser()
            self.mirror = storage.mirror_at(self.root)  # a layout built on a cache folder's path

    @property
    def location(self) -> str:
        """The library as the user named it: its URI, or its folder."""
        return self.mirror.uri if self.mirror is not None else str(self.root)

    @property
    def index_uri(self) -> str:
        """Where LanceDB keeps the tables: index/ here, or on the bucket (never cached)."""
        return self.mirror.index_uri if self.mirror is not None else str(self.root / "index")

    @property
    def index_options(self) -> dict[str, str] | None:
        """LanceDB storage options: endpoint and credentials of a remote library."""
        return self.mirror.lance_options if self.mirror is not None else None

    def _fetched(self, path: Path) -> Path:
        if self.mirror is not None and not path.exists():
            self.mirror.ensure_local(path)
        return path

    def pdf_path(self, paper_id: str) -> Path:
        return self._fetched(self.root / "pdfs" / f"{paper_id}.pdf")

    def _text_file(self, paper_id: str) -> Path:
        return self.root / "text" / f"{paper_id}.md"

    def text_path(self, paper_id: str) -> Path:
        path = self._text_file(paper_id)
        if self.mirror is not None and not path.exists():
            # The OCR words (ocr.layer_path) sit beside the text and are read with it.
            self.mirror.ensure_local(path.with_name(f"{paper_id}.ocr.json"))
        return self._fetched(path)

    def local_text_path(self, paper_id: str) -> Path | None:
        """The paper's text file if it is on this machine (never fetched: for work that can do without it)."""
        path = self._text_file(paper_id)
        return path if path.is_file() else None

    def summary_path(self, paper_id: str) -> Path:
        return self.root / "summaries" / f"{paper_id}.md"

    def write_notes(self, paper_id: str, text: str) -> Path:
        """Save the user's notes atomically (a crash leaves the old notes or the new, never half)."""
        path = self.notes_path(paper_id)
        atomic_write_text(path, text)
        return path

    def notes_path(self, paper_id: str) -> Path:
        return self.root / "notes" / f"{paper_id}.md"

    def paper_file_paths(self, paper_id: str) -> tuple[Path, ...]:
        """Every file a paper may have, as paths: nothing is fetched (for removal)."""
        text = self.root / "text" / f"{paper_id}.md"
        return (self.root / "pdfs" / f"{paper_id}.pdf", text, text.with_name(f"{paper_id}.ocr.json"),
                self.summary_path(paper_id), self.notes_path(paper_id))

    def local_folder(self, name: str) -> Path:
        """A folder of the library with all its files here (a remote library fetches them)."""
        if self.mirror is not None:
            return self.mirror.fetch_folder(name)
        return self.root / name

    def sync(self) -> None:
        """Bring a remote library's cached small files up to date (nothing to do locally)."""
        if self.mirror is not None:
            self.mirror.sync()

    @property
    def results_dir(self) -> Path:
        return self.root / "results"
