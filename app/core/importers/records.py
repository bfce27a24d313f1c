"""What the readers of other reference managers hand to the import, and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..ingest.pipeline import ImportReport
from ..records import PaperMeta

# The metadata fields a source entry can set on a paper (PaperMeta's, less `unsure`).
META_FIELDS = ("title", "authors", "published", "abstract", "doi", "arxiv_id", "venue")


@dataclass
class SourceEntry:
    """One reference of a Zotero library, .bib or .ris file, with the PDF it points to."""

    source_key: str  # "zotero:<libraryID>:<itemKey>", "bibtex:<citation key>", "ris:<id>"
    label: str  # how messages name it: "smith2020 (refs.bib, line 12)"
    meta: PaperMeta
    pdf: Path | None = None
    tags: list[str] = field(default_factory=list)
    missing: str = ""  # why `pdf` is None (or where it was looked for)
    collections: list[str] = field(default_factory=list)  # Zotero's "Parent/Child" collection paths

    def labels(self) -> list[str]:
        """Its tags and collections as Paper.source_labels records them."""
        return [f"tag:{t}" for t in self.tags] + [f"collection:{c}" for c in self.collections]

    def merged_meta(self, found: PaperMeta) -> PaperMeta:
        """The entry's values where it has them, the ones read from the PDF elsewhere.

        A field the entry fills is no longer unsure: the user keeps it in their reference
        manager and checked it there."""
        values = {name: getattr(self.meta, name) for name in META_FIELDS if getattr(self.meta, name)}
        unsure = [u for u in found.unsure if not _covers(values, u)]
        return replace(found, **values, unsure=unsure)


def _covers(values: dict, unsure_field: str) -> bool:
    if unsure_field == "year":
        return "published" in values
    return unsure_field in values


@dataclass
class EntryOutcome:
    """What happened to one entry."""

    label: str
    source_key: str
    status: str  # imported | updated | unchanged | missing | failed
    paper_id: str = ""
    message: str = ""


@dataclass
class SourceImportReport:
    """The result of importing a Zotero library or a bibliography file."""

    source: str  # the file read
    outcomes: list[EntryOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # about the whole source (encoding used, …)
    pdfs: ImportReport | None = None  # the PDF import's own report, when any PDF was imported

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def with_status(self, status: str) -> list[EntryOutcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def ok(self) -> bool:
        """Nothing failed (entries without a PDF are listed, not failures)."""
        return self.count("failed") == 0

    def summary(self) -> str:
        parts = [f"{self.count(s)} {s}" for s in ("imported", "updated", "unchanged", "missing", "failed") if self.count(s)]
        return f"{Path(self.source).name}: " + (", ".join(parts) if parts else "no entries")
