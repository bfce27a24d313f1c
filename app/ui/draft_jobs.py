"""Drafting work as worker-thread jobs (the pattern of jobs.py): wiring only.

The pipeline is the core's `draft_section`, called exactly as the CLI calls
it (app/commands.py `cmd_draft`), with the JobContext's callbacks: progress
messages, the cancel flag, and events ("round", "search", "decision",
"evidence", "draft_text", "budget", "stage") that reach the UI as signals.
"""

from __future__ import annotations

from pathlib import Path

from app.core.drafting import DraftContext

from .worker import JobContext


def draft(ctx: JobContext, section: str, context: DraftContext, time_minutes: float | None):
    """Returns the core's DraftResult. The time budget counts from when the job runs,
    not from the click: a draft queued behind an import must not lose its minutes."""
    from app.core.drafting import draft_section

    return draft_section(
        ctx.desk, section, context, time_minutes=time_minutes,
        progress=ctx.progress, cancelled=ctx.cancelled, on_event=ctx.event,
    )


def write_files(ctx: JobContext, result, folder: str) -> dict[str, Path]:
    """The .md, .tex, .bib and ledger files; needs no Desk, so any worker can run it."""
    from app.core.drafting import write_outputs

    return write_outputs(result, folder)
