"""Desk operations on the library's papers: import, list, edit, summarize, validate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterable

from ..errors import ResearchDeskError
from ..events import PaperUpdated, Task
from ..ingest.pipeline import Importer, ImportReport
from ..records import Paper, PaperStatus, ResearchResult
from ..library.table_reader import latest_version
from ..library.text_search import TextHit
from .parts import DeskParts
from .results import LibrarySnapshot, PaperCheck, PaperFiles, PaperTexts, SummaryReport, ValidationReport

STATE_KEY = "last_result"  # the key of the last answer in the library's state.json (CLI and window share it)
EDITABLE = ("title", "authors", "published", "abstract", "doi", "arxiv_id", "venue")


class PaperOperations(DeskParts):
    # -- reading ---------------------------------------------------------------------
    def open_library(self) -> LibrarySnapshot:
        """The papers, whether the index is stale, and the last answer (for a new window)."""
        stale = ""
        try:
            stale = self.stale_reason()
        except ResearchDeskError:
            pass  # no embedding model configured yet: there is nothing to compare the index with
        return LibrarySnapshot(str(self.location), self.papers(), stale, self.last_result())

    def papers(self) -> list[Paper]:
        return self.library.list_papers()

    def library_version(self) -> int:
        """A number that changes whenever any writer (this process or another) adds or changes a
        paper: cheap enough to poll every few seconds (one folder listing)."""
        return latest_version(self.library.papers_table())

    def paper(self, paper_id: str) -> Paper:
        paper = self.library.get_paper(paper_id)
        if paper is None:
            raise ResearchDeskError(f"No paper with id {paper_id!r} in the library.", "See `research-desk list`.")
        return paper

    def paper_files(self, paper_id: str) -> PaperFiles:
        lib = self.library
        return PaperFiles(lib.pdf_path(paper_id), lib.text_path(paper_id), lib.summary_path(paper_id), lib.notes_path(paper_id))

    def paper_texts(self, paper_id: str) -> PaperTexts:
        lib = self.library  # not paper_files: a remote library would fetch the PDF for nothing
        return PaperTexts(lib.get_paper(paper_id), _read(lib.summary_path(paper_id)), _read(lib.notes_path(paper_id)))

    def search_text(self, query: str, *, limit: int = 200, papers: list[str] | None = None) -> list[TextHit]:
        """Every place the papers print `query` (a word or phrase), with its page and a snippet."""
        from ..library.text_search import search_text

        return search_text(self.library, query, limit=limit, papers=papers)

    def last_result(self) -> ResearchResult | None:
        state = self.library.load_state().get(STATE_KEY)
        if not state:
            return None
        try:
            return ResearchResult.from_dict(state)
        except (KeyError, TypeError):
            return None  # a state file from an older version: start afresh rather than fail

    # -- writing -----------------------------------------------------------------------
    def add(self, paths: Iterable[str | Path], task: Task | None = None) -> ImportReport:
        """Import PDF files and folders; `PaperImported` events as each file finishes."""
        importer = Importer(
            self.library,
            self.embedder(),
            embedding_identity=self.embedding_identity(),
            batch_size=self.settings.ingest.batch_size,
            task=task,
        )
        return importer.run(paths)

    def compute_vectors(self, task: Task | None = None):
        """Embed the passages of the papers searchable by their words only ("words": an import
        cancelled or killed in its vectors phase), oldest first; ingest/vectors.py."""
        from ..ingest.vectors import VectorsPhase

        try:
            return VectorsPhase(self.library, self.embedder(), batch_size=self.settings.ingest.batch_size,
                                task=task).run()
        finally:
            self.library.finish_writes()

    def import_zotero(self, path: str | Path | None = None, task: Task | None = None):
        """Import or sync a Zotero library (zotero.sqlite or its folder; default ~/Zotero), read-only:
        its PDFs with Zotero's metadata, collections and tags; a second run imports only what changed."""
        from ..importers import import_zotero

        return import_zotero(self._entry_importer, path, task or Task())

    def import_bibliography(self, path: str | Path, task: Task | None = None, *, kind: str = ""):
        """Import the entries of a .bib or .ris file that have a PDF (file field, or a PDF named
        by the key beside it); entries without one are listed as missing in the report."""
        from ..importers import import_bibliography

        return import_bibliography(self._entry_importer, path, task or Task(), kind=kind)

    def _entry_importer(self, entries, task: Task) -> Importer:
        return Importer(self.library, self.embedder(), embedding_identity=self.embedding_identity(),
                        batch_size=self.settings.ingest.batch_size, task=task, entries=entries)

    def reindex_papers(self, ids: list[str], task: Task | None = None) -> ImportReport:
        """Re-import papers from their stored PDF copies, keeping id, title and summary.

        Marking a paper "importing" makes the importer treat it as incomplete and redo it
        under the same id (the mechanism `rebuild_index` uses)."""
        lib = self.library
        for pid in ids:
            lib.set_status(pid, PaperStatus.IMPORTING.value)
        return self.add([lib.pdf_path(pid) for pid in ids], task)

    def rebuild_index(self, task: Task | None = None) -> int:
        from ..ingest.rebuild import rebuild_index

        return rebuild_index(self, task=task or Task())

    def remove_papers(self, ids: list[str]) -> list[str]:
        for pid in ids:
            self.library.remove_paper(pid)
        self.library.finish_writes()
        return ids

    def save_notes(self, paper_id: str, text: str) -> None:
        self.library.write_notes(paper_id, text)

    def reindex_notes(self, paper_id: str) -> None:
        """After the notes changed: re-embed the paper's summary side so research sees them."""
        from ..ingest.summary_index import index_summary_side

        paper = self.library.get_paper(paper_id)
        if paper is not None and paper.complete:
            index_summary_side(self.library, self.embedder(), paper)

    def edit_paper(self, paper_id: str, **fields) -> Paper:
        """Correct a paper's metadata; the correction survives re-import and index rebuilds."""
        from ..library import corrections

        unknown = set(fields) - set(EDITABLE)
        if unknown:
            raise ResearchDeskError(f"These fields cannot be edited: {', '.join(sorted(unknown))}.",
                                    f"Editable fields: {', '.join(EDITABLE)}.")
        paper = self.paper(paper_id)
        corrections.save_correction(self.library.root, paper.content_hash, **fields)
        unsure = [f for f in paper.unsure if f not in fields and not (f == "year" and "published" in fields)]
        updated = replace(paper, **fields, unsure=unsure)
        self.library.upsert_paper(updated)
        return updated

    def labels(self) -> tuple[list[str], list[str]]:
        """(tags, collections) used in the library, sorted: for the library's filter and the scope menu."""
        from ..scope import labels

        return labels(self.papers())

    def set_labels(self, ids: list[str], *, tags: list[str] | None = None, collections: list[str] | None = None,
                   add: bool = False) -> list[Paper]:
        """Set (or with `add`, add to) the tags and collections of papers, in one commit. A Zotero
        sync replaces only those it set itself (Paper.source_labels); a re-import keeps them all."""
        def merged(old: list[str], new: list[str] | None) -> list[str]:
            if new is None:
                return list(old)
            clean = [" ".join(x.split()).strip("/") for x in new if x.strip()]
            return list(dict.fromkeys((old if add else []) + clean))

        updated = [replace(p, tags=merged(p.tags, tags), collections=merged(p.collections, collections))
                   for p in (self.paper(pid) for pid in ids)]
        self.library.upsert_papers(updated)
        return updated

    def summarize(self, ids: list[str], task: Task | None = None) -> SummaryReport:
        """LLM summaries of papers (ids), one after another; a paper that fails does not stop the rest."""
        from ..ingest.summarize import summarize_paper

        task = task or Task()
        report = SummaryReport()
        for i, pid in enumerate(ids):
            paper = self.library.get_paper(pid)
            if paper is None:
                report.failed[pid] = "not in the library"
                continue
            task.stage("summarize", i + 1, len(ids), paper.id)

            def progress(fraction: float, message: str, i: int = i) -> None:
                task.progress(i + max(0.0, fraction), len(ids), "papers", message)

            try:
                summarize_paper(self.library, self.chat(), self.embedder(), paper, progress=progress, cancelled=task.token)
            except ResearchDeskError as exc:
                if exc.action in ("choose-model", "start-lmstudio"):
                    raise  # no paper can be summarized: say so once
                report.failed[pid] = exc.message
                task.notice(f"{pid}: {exc.message}", exc.hint)
                continue
            report.done.append(pid)
            task.emit(PaperUpdated(self.library.get_paper(pid)))
        return report

    def validate(self) -> ValidationReport:
        from ..ingest.validate import validate_library

        checks = [PaperCheck(c.paper_id, c.ok, list(c.problems)) for c in validate_library(self.library)]
        stale = ""
        try:
            stale = self.stale_reason()
        except ResearchDeskError as exc:
            stale = exc.message
        return ValidationReport(checks, stale)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""  # no summary or notes yet
