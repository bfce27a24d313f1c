"""The library pane's work on the worker thread: open, list, import, remove, re-index, edit.

Each function takes a `JobContext` and calls one Desk operation with the context's task, so the
core's typed events reach the UI as they happen; they hold no logic beyond wiring. UI code builds
them with `functools.partial` and submits them to the `WorkerHost` (common/worker.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.core.desk import LibrarySnapshot
from app.core.events import PaperImported, PaperUpdated, Task
from app.core.records import Paper

from ..common.worker import JobContext

LIST_REFRESH_S = 1.5  # during an import, the table is refreshed at most this often

__all__ = ["LibrarySnapshot", "PapersChanged"]


@dataclass(frozen=True)
class PapersChanged:
    """The UI's own event: the library's paper list after papers were added or changed."""

    papers: list[Paper]


def _with_paper_list(ctx: JobContext) -> Task:
    """The context's task, plus a fresh paper list (at most every LIST_REFRESH_S) when papers change."""
    state = {"refreshed": 0.0}

    def sink(event) -> None:
        ctx.emit(event)
        if isinstance(event, (PaperImported, PaperUpdated)):
            now = time.monotonic()
            if now - state["refreshed"] >= LIST_REFRESH_S:
                state["refreshed"] = now
                ctx.emit(PapersChanged(ctx.desk.papers()))

    return Task(sink=sink, token=ctx.task.token)


def load_library(ctx: JobContext) -> LibrarySnapshot:
    return ctx.desk.open_library()


def warm_up(ctx: JobContext) -> bool:
    return ctx.desk.warm_up()


def list_papers(ctx: JobContext) -> list[Paper]:
    return ctx.desk.papers()


def import_paths(ctx: JobContext, paths: list[str]):
    """Import files/folders; emits PapersChanged as papers complete."""
    report = ctx.desk.add(paths, _with_paper_list(ctx))
    ctx.emit(PapersChanged(ctx.desk.papers()))
    return report


def compute_vectors(ctx: JobContext):
    """The vectors of papers an earlier import left searchable by their words only; emits PapersChanged."""
    report = ctx.desk.compute_vectors(ctx.task)
    ctx.emit(PapersChanged(ctx.desk.papers()))
    return report


def import_source(ctx: JobContext, kind: str, path: str):
    """A Zotero library or a .bib/.ris file's PDFs, with their metadata; emits PapersChanged."""
    desk = ctx.desk
    task = _with_paper_list(ctx)
    if kind == "zotero":
        report = desk.import_zotero(path or None, task)
    else:
        report = desk.import_bibliography(path, task, kind=kind)
    ctx.emit(PapersChanged(desk.papers()))
    return report


def remove_papers(ctx: JobContext, ids: list[str]) -> list[str]:
    return ctx.desk.remove_papers(ids)


def reindex_papers(ctx: JobContext, ids: list[str]):
    report = ctx.desk.reindex_papers(ids, _with_paper_list(ctx))
    ctx.emit(PapersChanged(ctx.desk.papers()))
    return report


def rebuild_index(ctx: JobContext) -> int:
    count = ctx.desk.rebuild_index(_with_paper_list(ctx))
    ctx.emit(PapersChanged(ctx.desk.papers()))
    return count


def summarize_papers(ctx: JobContext, ids: list[str]) -> list[str]:
    report = ctx.desk.summarize(ids, _with_paper_list(ctx))
    ctx.emit(PapersChanged(ctx.desk.papers()))
    return report.done


def reindex_notes(ctx: JobContext, paper_id: str) -> str:
    """After the notes file changed: re-embed the paper's summary side so research sees them."""
    ctx.desk.reindex_notes(paper_id)
    return paper_id


def edit_paper(ctx: JobContext, paper_id: str, fields: dict) -> Paper:
    paper = ctx.desk.edit_paper(paper_id, **fields)
    ctx.emit(PapersChanged(ctx.desk.papers()))
    return paper
