"""Drafting work as worker-thread jobs (the pattern of jobs.py): wiring only.

The pipeline is the Desk's `draft`, called exactly as the CLI calls it
(app/commands.py `cmd_draft`), with the JobContext's task: its typed events
(stages, rounds, evidence, draft text) reach the UI as the handle's `event`.
"""

from __future__ import annotations

from pathlib import Path

from app.core.desk import Desk, DraftContext

from ..common.worker import JobContext


def draft(ctx: JobContext, section: str, context: DraftContext, time_minutes: float | None):
    """Returns the core's DraftResult. The time budget counts from when the job runs,
    not from the click: a draft queued behind an import must not lose its minutes."""
    budget = "unlimited" if time_minutes is None else time_minutes
    return ctx.desk.draft(section, context, ctx.task, time_budget=budget)


def write_files(ctx: JobContext, result, folder: str) -> dict[str, Path]:
    """The .md, .tex, .bib and ledger files; needs no Desk, so any worker can run it."""
    return Desk.write_draft_files(result, folder)
