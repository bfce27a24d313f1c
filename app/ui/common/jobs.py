"""The work the UI asks of the core, as functions that run on the worker thread.

Each function takes a `JobContext` and calls one Desk operation with the
context's task, so the core's typed events reach the UI as they happen. They
hold no logic of their own beyond wiring. UI code builds them with
`functools.partial` and submits them to the `WorkerHost`.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path

from app.core.desk import LibrarySnapshot, ModelState, PaperTexts
from app.core.events import PaperImported, PaperUpdated, Task
from app.core.records import Paper, ResearchResult
from app.core.settings import Settings

from .worker import JobContext

LIST_REFRESH_S = 1.5  # during an import, the table is refreshed at most this often

__all__ = ["LibrarySnapshot", "ModelState", "PaperTexts", "PapersChanged"]


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


# -- library -----------------------------------------------------------------------
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


# -- research ------------------------------------------------------------------------
def research(ctx: JobContext, question: str, mode: str = "standard", time_minutes: float | None = None,
             scope=None) -> ResearchResult:
    """`scope`: a Scope (the research pane's scope line) or None for the whole library."""
    if mode == "deep":
        return deep_research(ctx, question, time_minutes, scope)
    return ctx.desk.research(question, ctx.task, scope=scope)


def deep_research(ctx: JobContext, question: str, time_minutes: float | None, scope=None):
    """The one place the Deep switch reaches the core (DESIGN.md, "Deep research").

    A user cancel raises the core's DeepCancelled, which carries the evidence gathered
    so far (`partial`) and the loop (`deep`), so that "Synthesize from what was
    gathered" keeps the methodology of the run."""
    budget = "unlimited" if time_minutes is None else time_minutes
    return ctx.desk.deep_research(question, ctx.task, time_budget=budget, scope=scope)


def synthesize_partial(ctx: JobContext, cancelled_exc) -> ResearchResult:
    """After a cancelled deep run: write the report from the evidence it gathered."""
    return ctx.desk.synthesize_partial(cancelled_exc, ctx.task)


def improve(ctx: JobContext, previous: ResearchResult, feedback: str) -> ResearchResult:
    return ctx.desk.improve(feedback, ctx.task, previous=previous)


def save_result(ctx: JobContext, result: ResearchResult) -> Path:
    return ctx.desk.save_result(result)


def export_markdown(ctx: JobContext, result: ResearchResult, path: str) -> Path:
    return ctx.desk.export("md", path, result)


def export_bibtex(ctx: JobContext, result: ResearchResult, path: str) -> Path:
    return ctx.desk.export("bibtex", path, result)


# -- models and settings -----------------------------------------------------------
def model_state(ctx: JobContext) -> ModelState:
    return ctx.desk.model_state()


def apply_settings(ctx: JobContext, settings: Settings, library: str | None) -> LibrarySnapshot:
    """New settings (and maybe a new library): models reload on next use."""
    ctx._worker.replace_settings(copy.deepcopy(settings), library)  # noqa: SLF001 - the worker's own hook
    return load_library(ctx)


def list_remote_models(ctx: JobContext, cfg) -> list:
    return ctx.desk.remote_models(cfg)


def setup_models(ctx: JobContext, ids: list[str] | None = None) -> dict:
    return ctx.desk.setup_models(ids, ctx.task)


def paper_texts(ctx: JobContext, paper_id: str) -> PaperTexts:
    return ctx.desk.paper_texts(paper_id)
