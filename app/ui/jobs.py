"""The work the UI asks of the core, as functions that run on the worker thread.

Each function takes a `JobContext` (the Desk plus core-style callbacks) and
returns plain records. They hold no logic of their own beyond wiring: the
research, import and summary logic is the core's. UI code builds them with
`functools.partial` and submits them to the `WorkerHost`.
"""

from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core.errors import ModelNotFound, ResearchDeskError
from app.core.records import Paper, ResearchResult
from app.core.settings import Settings

from .worker import JobContext

STATE_KEY = "last_result"  # the CLI's key in state.json, so `research-desk improve` continues a UI answer
LIST_REFRESH_S = 1.5  # during an import, the table is refreshed at most this often


@dataclass
class LibrarySnapshot:
    location: str
    papers: list[Paper]
    stale_reason: str = ""
    last_result: ResearchResult | None = None


@dataclass
class ModelState:
    """Whether research can run, and if not, why (for the first-run offer)."""

    ready: bool
    chat: str = ""
    embedding: str = ""
    problem: ResearchDeskError | None = None
    needs_setup: bool = False  # nothing configured and nothing provisioned


# -- library -----------------------------------------------------------------------
def load_library(ctx: JobContext) -> LibrarySnapshot:
    desk = ctx.desk
    papers = desk.library.list_papers()
    stale = ""
    last = None
    try:
        stale = desk.stale_reason()
    except ResearchDeskError:
        pass  # no embedding model yet: nothing to compare against
    state = desk.library.load_state().get(STATE_KEY)
    if state:
        try:
            last = ResearchResult.from_dict(state)
        except (KeyError, TypeError):
            last = None
    return LibrarySnapshot(desk.location, papers, stale, last)


def list_papers(ctx: JobContext) -> list[Paper]:
    return ctx.desk.library.list_papers()


def import_paths(ctx: JobContext, paths: list[str]):
    """Import files/folders; emits ("papers", list[Paper]) as papers complete."""
    desk = ctx.desk
    state = {"file": "", "refreshed": 0.0}

    def progress(fraction: float, message: str) -> None:
        ctx.progress(fraction, message)
        # A new "[n/N]" prefix means the previous file is done: show it in the table.
        m = re.match(r"\[(\d+)/\d+\]", message)
        if m and m.group(1) != state["file"]:
            state["file"] = m.group(1)
            now = time.monotonic()
            if now - state["refreshed"] >= LIST_REFRESH_S:
                state["refreshed"] = now
                ctx.event("papers", desk.library.list_papers())

    report = desk.add(paths, progress=progress, cancelled=ctx.cancelled)
    ctx.event("papers", desk.library.list_papers())
    return report


def remove_papers(ctx: JobContext, ids: list[str]) -> list[str]:
    lib = ctx.desk.library
    for pid in ids:
        lib.remove_paper(pid)
    lib.finish_writes()
    return ids


def reindex_papers(ctx: JobContext, ids: list[str]):
    """Re-import papers from their stored PDF copies, keeping id, title and summary.

    Marking a paper "importing" makes the importer treat it as incomplete and
    redo it under the same id (the same mechanism `rebuild-index` uses).
    """
    desk = ctx.desk
    lib = desk.library
    for pid in ids:
        lib.set_status(pid, "importing")
    report = desk.add([lib.pdf_path(pid) for pid in ids], progress=ctx.progress, cancelled=ctx.cancelled)
    ctx.event("papers", lib.list_papers())
    return report


def rebuild_index(ctx: JobContext) -> int:
    from app.core.rebuild import rebuild_index as rebuild

    count = rebuild(ctx.desk, progress=ctx.progress, cancelled=ctx.cancelled)
    ctx.event("papers", ctx.desk.library.list_papers())
    return count


def summarize_papers(ctx: JobContext, ids: list[str]) -> list[str]:
    from app.core.summarize import summarize_paper

    desk = ctx.desk
    done: list[str] = []
    for i, pid in enumerate(ids):
        paper = desk.library.get_paper(pid)
        if paper is None:
            continue

        def progress(f: float, m: str, i: int = i) -> None:
            ctx.progress((i + f) / len(ids), f"[{i + 1}/{len(ids)}] {m}")

        summarize_paper(desk.library, desk.chat(), desk.embedder(), paper, progress=progress, cancelled=ctx.cancelled)
        done.append(pid)
        ctx.event("papers", desk.library.list_papers())
    return done


def reindex_notes(ctx: JobContext, paper_id: str) -> str:
    """After the notes file changed: re-embed the paper's summary side so research sees them."""
    from app.core.summary_index import index_summary_side

    desk = ctx.desk
    paper = desk.library.get_paper(paper_id)
    if paper is None or not paper.complete:
        return paper_id
    index_summary_side(desk.library, desk.embedder(), paper)
    return paper_id


# -- research ------------------------------------------------------------------------
def _funnel(ctx: JobContext):
    """The funnel built exactly as the CLI builds it (app/commands.py `_funnel`)."""
    from app.core.research.funnel import Funnel, resolve_cutoffs

    desk = ctx.desk
    stale = desk.stale_reason()
    if stale:
        raise ResearchDeskError("The index was built with another embedding model.", stale, action="reindex")
    params = desk.settings.research
    return Funnel(
        library=desk.library,
        embedder=desk.embedder(),
        params=params,
        cutoffs=resolve_cutoffs(params, desk.embedding_identity()),
        chat_model=desk.chat,
        progress=ctx.progress,
        cancelled=ctx.cancelled,
        on_token=ctx.token,
        on_event=ctx.event,
    )


def research(ctx: JobContext, question: str, mode: str = "standard", time_minutes: float | None = None) -> ResearchResult:
    if mode == "deep":
        result = deep_research(ctx, question, time_minutes)
    else:
        result = _funnel(ctx).run(question)
    ctx.desk.library.save_state({STATE_KEY: result.to_dict()})
    return result


def deep_available() -> bool:
    """True when app/core/research/deep.py is part of this build."""
    import importlib.util

    return importlib.util.find_spec("app.core.research.deep") is not None


def deep_research(ctx: JobContext, question: str, time_minutes: float | None):
    """The one place the Deep switch reaches the core (DESIGN.md, "Deep research").

    A user cancel raises the core's DeepCancelled, which carries the evidence
    gathered so far (`partial`); we attach the loop object (`deep`) so that
    "Synthesize from what was gathered" keeps the methodology of the run.
    """
    from app.core.research.deep import DeepCancelled, DeepResearch

    deep = DeepResearch(_funnel(ctx), ctx.desk.settings.deep, deep=True, time_minutes=time_minutes, cancelled=ctx.cancelled)
    try:
        return deep.run(question)
    except DeepCancelled as exc:
        exc.deep = deep  # type: ignore[attr-defined]
        raise


def synthesize_partial(ctx: JobContext, cancelled_exc) -> ResearchResult:
    """After a cancelled deep run: write the report from the evidence it gathered."""
    from app.core.research.deep import DeepResearch

    old = getattr(cancelled_exc, "deep", None)
    deep = DeepResearch(_funnel(ctx), ctx.desk.settings.deep, deep=True, time_minutes=None, cancelled=ctx.cancelled)
    if old is not None:  # keep what the cancelled run did, for the Methodology section
        deep.pool, deep.queries, deep.decisions = old.pool, old.queries, old.decisions
        deep.subquestions, deep.limits_hit = old.subquestions, [*old.limits_hit, "cancelled by the user"]
    result = deep.synthesize(cancelled_exc.partial)
    ctx.desk.library.save_state({STATE_KEY: result.to_dict()})
    return result


def improve(ctx: JobContext, previous: ResearchResult, feedback: str) -> ResearchResult:
    from app.core.research.followups import improve as core_improve

    result = core_improve(_funnel(ctx), previous, feedback)
    ctx.desk.library.save_state({STATE_KEY: result.to_dict()})
    return result


def save_result(ctx: JobContext, result: ResearchResult) -> Path:
    from app.core.research.followups import save_result as core_save

    return core_save(ctx.desk.library, result, model=ctx.desk.settings.chat.describe())


def export_markdown(ctx: JobContext, result: ResearchResult, path: str) -> Path:
    from app.core.research.followups import export_markdown as core_export

    return core_export(result, Path(path), model=ctx.desk.settings.chat.describe())


def export_bibtex(ctx: JobContext, result: ResearchResult, path: str) -> Path:
    from app.core.research.followups import export_bibtex as core_export

    return core_export(ctx.desk.library, result, Path(path))


# -- models and settings -----------------------------------------------------------
def model_state(ctx: JobContext) -> ModelState:
    desk = ctx.desk
    try:
        chat = desk.chat_config().describe()
        emb = desk.embedding_config().describe()
    except ModelNotFound as exc:
        s = desk.settings
        unconfigured = s.chat.backend == "llamacpp" and not s.chat.path
        return ModelState(False, problem=exc, needs_setup=unconfigured)
    except ResearchDeskError as exc:
        return ModelState(False, problem=exc)
    return ModelState(True, chat, emb)


def apply_settings(ctx: JobContext, settings: Settings, library: str | None) -> LibrarySnapshot:
    """New settings (and maybe a new library): models reload on next use."""
    ctx._worker.replace_settings(copy.deepcopy(settings), library)  # noqa: SLF001 - the worker's own hook
    return load_library(ctx)


def list_remote_models(ctx: JobContext, cfg) -> list:
    from app.core.models.factory import list_models

    return list_models(cfg)


def setup_models(ctx: JobContext, ids: list[str] | None = None) -> dict:
    from app.core.models import provision

    return provision.setup(ids, progress=ctx.progress, cancelled=ctx.cancelled)


@dataclass
class PaperText:
    paper: Paper | None
    summary: str = ""
    notes: str = ""
    extras: dict = field(default_factory=dict)


def paper_texts(ctx: JobContext, paper_id: str) -> PaperText:
    lib = ctx.desk.library
    paper = lib.get_paper(paper_id)

    def read(path: Path) -> str:
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            return ""

    return PaperText(paper, read(lib.summary_path(paper_id)), read(lib.notes_path(paper_id)))
