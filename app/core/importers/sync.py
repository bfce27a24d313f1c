"""Bring a list of source entries into the library: import new PDFs, update what changed.

The readers (zotero.py, bibliography.py) turn a Zotero library or a .bib/.ris file into
`SourceEntry` records; this module decides, per entry, what the library needs:

- a new PDF goes through the ordinary `ingest.Importer`, with the entry's metadata, tags and
  source key applied to the paper it creates;
- an entry already in the library (same source key, same PDF) whose metadata or tags changed
  gets its paper row updated and its summary-side profile re-embedded (a few vectors), never
  its content chunks; an unchanged one costs one file hash;
- a PDF already imported as a bare file (same content hash) takes the entry's metadata and tags;
- an entry whose PDF changed is imported again and the old copy removed once the new one is in;
- an entry without a PDF is listed as missing.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping

from ..library import corrections
from ..events import Task
from ..ingest.pipeline import Importer, ImportOutcome, file_hash
from ..records import Paper, PaperMeta
from ..ingest.summary_index import index_summary_side
from .records import META_FIELDS, EntryOutcome, SourceEntry, SourceImportReport

log = logging.getLogger(__name__)

# Builds the Importer for one run: the entries it applies by PDF path, the task it reports to.
# The Desk supplies it (library, embedding model, batch size); see importers/__init__.py.
MakeImporter = Callable[[Mapping[Path, SourceEntry], Task], Importer]


def sync_entries(
    entries: list[SourceEntry],
    report: SourceImportReport,
    make_importer: MakeImporter,
    task: Task,
    *,
    stage: int = 2,
    stages: int = 3,
) -> SourceImportReport:
    """Match `entries` with the library and import or update each; fills `report`."""
    task.stage("Matching with the library", stage, stages, f"{len(entries)} entries")
    to_import: dict[Path, SourceEntry] = {}
    replaced: dict[Path, Paper] = {}  # new PDF of an entry → the paper it replaces
    # Updates need the library and the embedding model only; the PDFs get their own importer.
    updater = make_importer({}, task)
    library = updater.library
    papers = library.list_papers()
    by_key = {p.source_key: p for p in papers if p.source_key}
    by_hash = {p.content_hash: p for p in papers}
    claimed: dict[str, str] = {}  # content hash → label of the entry that took it in this run
    for done, entry in enumerate(entries):
        task.check()
        task.progress(done, len(entries), "entries", entry.label)
        existing = by_key.get(entry.source_key)
        if entry.pdf is None:
            if existing is not None:  # imported by an earlier run; its PDF is gone from the source now
                report.outcomes.append(_update(updater, existing, entry))
            else:
                report.outcomes.append(EntryOutcome(entry.label, entry.source_key, "missing", "", f"{entry.label}: no PDF ({entry.missing})"))
            continue
        try:
            content_hash = file_hash(entry.pdf)
        except OSError as exc:
            report.outcomes.append(EntryOutcome(entry.label, entry.source_key, "failed", "", f"{entry.label}: cannot read {entry.pdf} ({exc.strerror or exc})"))
            continue
        if content_hash in claimed:
            report.outcomes.append(EntryOutcome(entry.label, entry.source_key, "failed", "", f"{entry.label}: same PDF as {claimed[content_hash]}; imported once"))
            continue
        claimed[content_hash] = entry.label
        same_file = by_hash.get(content_hash)
        if existing is not None and existing.content_hash == content_hash and existing.complete:
            report.outcomes.append(_update(updater, existing, entry))
        elif same_file is not None and same_file.complete:
            # Imported before as a bare file (or from another source): it takes this entry's data.
            report.outcomes.append(_update(updater, same_file, entry))
        else:
            path = entry.pdf.resolve()
            to_import[path] = entry
            if existing is not None and existing.content_hash != content_hash:
                replaced[path] = existing
    task.progress(len(entries), len(entries), "entries")
    if any(o.status == "updated" for o in report.outcomes):
        library.finish_writes()

    if to_import:
        task.stage("Importing PDFs", stage + 1, stages, f"{len(to_import)} PDFs")
        imp = make_importer(to_import, task)
        pdf_report = imp.run(list(to_import))
        report.pdfs = pdf_report
        for outcome in pdf_report.outcomes:
            path = Path(outcome.path).resolve()
            entry = to_import.get(path)
            if entry is None:
                log.warning("import outcome for a file no entry named: %s", outcome.path)
                continue
            report.outcomes.append(_entry_outcome(imp, entry, outcome, replaced.get(path), by_hash))
        imp.library.finish_writes()
    return report


def _entry_outcome(importer: Importer, entry: SourceEntry, outcome: ImportOutcome, old: Paper | None,
                   by_hash: dict[str, Paper]) -> EntryOutcome:
    if outcome.status == "added":
        if old is not None and old.id != outcome.paper_id:
            importer.library.remove_paper(old.id)
            return EntryOutcome(entry.label, entry.source_key, "updated", outcome.paper_id,
                                f"{entry.label}: its PDF changed; imported again as {outcome.paper_id} (replaces {old.id})")
        return EntryOutcome(entry.label, entry.source_key, "imported", outcome.paper_id, f"{entry.label}: {outcome.message}")
    if outcome.status == "duplicate" and outcome.paper_id:
        # Completed since the library was listed (another writer): give it this entry's data.
        paper = importer.library.get_paper(outcome.paper_id)
        if paper is not None:
            return _update(importer, paper, entry)
    return EntryOutcome(entry.label, entry.source_key, "failed" if outcome.status != "duplicate" else "unchanged",
                        outcome.paper_id, f"{entry.label}: {outcome.message}")


def _labels_after_sync(paper: Paper, entry: SourceEntry) -> tuple[list[str], list[str]]:
    """The paper's tags and collections after a sync with `entry`.

    A sync replaces the labels its source set before (an item taken out of a collection leaves
    it here too) and keeps those the user added by hand; a paper that came from elsewhere keeps
    all its own beside the entry's. A paper synced before its source's labels were recorded
    (source_labels None) has them all replaced, as then."""
    if paper.source_key != entry.source_key:
        hand_tags, hand_collections = paper.tags, paper.collections
    elif paper.source_labels is None:
        hand_tags, hand_collections = [], []
    else:
        before = set(paper.source_labels)
        hand_tags = [t for t in paper.tags if f"tag:{t}" not in before]
        hand_collections = [c for c in paper.collections if f"collection:{c}" not in before]
    return (list(dict.fromkeys(entry.tags + hand_tags)), list(dict.fromkeys(entry.collections + hand_collections)))


def _update(importer: Importer, paper: Paper, entry: SourceEntry) -> EntryOutcome:
    """Give an imported paper the entry's metadata, tags and key; re-embed only its profile."""
    current = PaperMeta(*(getattr(paper, f) for f in META_FIELDS), unsure=list(paper.unsure))
    meta = entry.merged_meta(current)
    # Keep a key from another source: the paper's own source keeps syncing it.
    source_key = entry.source_key if not paper.source_key or paper.source_key == entry.source_key else paper.source_key
    tags, collections = _labels_after_sync(paper, entry)
    updated = replace(paper, **{f: getattr(meta, f) for f in META_FIELDS}, unsure=meta.unsure, tags=tags,
                      collections=collections, source_key=source_key, source_labels=entry.labels())
    # The user's own corrections outrank the source's metadata, as they do on re-import.
    updated = corrections.apply(updated, corrections.for_paper(importer.library.root, paper.content_hash))
    if updated == paper:
        return EntryOutcome(entry.label, entry.source_key, "unchanged", paper.id, f"{entry.label}: unchanged ({paper.id})")
    importer.library.upsert_paper(updated)
    profile_changed = (updated.title, updated.authors, updated.abstract) != (paper.title, paper.authors, paper.abstract)
    if profile_changed:
        index_summary_side(importer.library, importer.embedder, updated)
    changed = [f for f in (*META_FIELDS, "tags", "collections", "source_key") if getattr(updated, f) != getattr(paper, f)]
    return EntryOutcome(entry.label, entry.source_key, "updated", paper.id, f"{entry.label}: updated {', '.join(changed)} of {paper.id}")
