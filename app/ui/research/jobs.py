"""The research pane's work on the worker thread: ask, go deep, improve, save, export.

Like library/jobs.py: each takes a `JobContext` and calls one Desk operation with its task.
"""

from __future__ import annotations

from pathlib import Path

from app.core.records import ResearchResult

from ..common.worker import JobContext


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


def export_answer(ctx: JobContext, fmt: str, result: ResearchResult, path: str) -> Path:
    """`fmt`: the Desk's export format (md, bibtex, html, bundle, annotated-pdf)."""
    return ctx.desk.export(fmt, path, result, task=ctx.task)
