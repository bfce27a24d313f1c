"""Import from the tools researchers keep their papers in: Zotero, BibTeX and RIS.

Each operation reads its source into `SourceEntry` records (metadata, tags, the PDF) and hands
them to `sync.sync_entries`, which imports new PDFs through `ingest.Importer` with the entries'
metadata and updates papers a previous run imported. The Desk wires them up:

    def make_importer(entries, task):
        return Importer(desk.library, desk.embedder(), embedding_identity=desk.embedding_identity(),
                        batch_size=desk.settings.ingest.batch_size, task=task, entries=entries)

    import_zotero(make_importer, path_or_None, task)        # research-desk add --zotero [PATH]
    import_bibliography(make_importer, "refs.bib", task)     # add --bib FILE / add --ris FILE
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..events import Task
from .bibliography import Bibliography, BibliographyError, read_bibtex, read_ris
from .records import EntryOutcome, SourceEntry, SourceImportReport
from .sync import MakeImporter, sync_entries
from .zotero import DEFAULT_DATABASE, ZoteroError, read_zotero

log = logging.getLogger(__name__)

__all__ = [
    "BibliographyError", "DEFAULT_DATABASE", "EntryOutcome", "MakeImporter", "SourceEntry",
    "SourceImportReport", "ZoteroError", "import_bibliography", "import_zotero",
]

STAGES = 3  # reading the source, matching with the library, importing the PDFs


def import_zotero(make_importer: MakeImporter, path: str | Path | None = None, task: Task | None = None,
                  *, attachments_base: str | Path | None = None) -> SourceImportReport:
    """Import (or sync again) a Zotero library: `path` is zotero.sqlite or its folder, default ~/Zotero.

    Raises ZoteroError when the database cannot be used at all (missing, not Zotero's, an
    unknown version, locked); everything else is an entry outcome in the report."""
    task = task or Task()
    task.stage("Reading the Zotero library", 1, STAGES, str(path or DEFAULT_DATABASE))
    library = read_zotero(path, attachments_base=attachments_base)
    report = SourceImportReport(str(library.database), notes=list(library.notes))
    for note in library.notes:
        task.notice(note, level="info")
    return _finish(sync_entries(library.entries, report, make_importer, task, stage=2, stages=STAGES), task)


def import_bibliography(make_importer: MakeImporter, path: str | Path, task: Task | None = None,
                        *, kind: str = "") -> SourceImportReport:
    """Import the entries of a .bib or .ris file (`kind` "bib"/"ris", else by its suffix) that have a PDF.

    Raises BibliographyError when the file cannot be read at all; broken entries and entries
    without a PDF are listed in the report, and the rest is imported."""
    task = task or Task()
    path = Path(path).expanduser()
    kind = kind or ("ris" if path.suffix.lower() in (".ris", ".txt") else "bib")
    task.stage(f"Reading {path.name}", 1, STAGES)
    bib: Bibliography = read_ris(path) if kind == "ris" else read_bibtex(path)
    report = SourceImportReport(str(path), notes=list(bib.notes))
    for note in bib.notes:
        task.notice(note, level="info")
    for label, message in bib.problems:
        report.outcomes.append(EntryOutcome(label, "", "failed", "", message))
        task.notice(message)
    return _finish(sync_entries(bib.entries, report, make_importer, task, stage=2, stages=STAGES), task)


def _finish(report: SourceImportReport, task: Task) -> SourceImportReport:
    missing = report.with_status("missing")
    if missing:
        task.notice(f"{len(missing)} entries have no PDF: " + "; ".join(o.label for o in missing[:5])
                    + (" …" if len(missing) > 5 else ""), hint="See the import report for where each was looked for.")
    log.info("%s", report.summary())
    return report
