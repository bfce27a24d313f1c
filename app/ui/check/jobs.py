"""Checking a manuscript as worker-thread jobs (the pattern of jobs.py): wiring only.

The check is the Desk's `check`, called as the CLI calls it (app/commands.py), with
the JobContext's task: its `Stage`, `Progress(…, "sentences")` and `SentenceChecked`
events reach the Check tab as the handle's `event`. Reading the manuscript for display
and writing an exported report need no Desk, so the helper worker runs them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..common.worker import JobContext

log = logging.getLogger(__name__)

DOCX = {".docx"}
# What the check reads (app/core/check/parse.py); anything else is not shown as text.
TEXT = {".tex", ".ltx", ".latex", ".md", ".markdown", ".pmd", ".rmd", ".qmd", ".txt"}


def check(ctx: JobContext, draft: str, bib: str | None = None):
    """The core's CheckReport. A cancel ends the job with the report of what is done (`partial`)."""
    return ctx.desk.check(draft, bib or None, ctx.task)


def read_manuscript(ctx: JobContext, path: str) -> str:
    """The manuscript as text whose lines are the check's lines: the file itself (.tex, .md),
    or a .docx's paragraphs one per line (the check counts a .docx's paragraphs as lines)."""
    source = Path(path)
    if source.suffix.lower() in DOCX:
        import docx  # python-docx, as the core's .docx reader uses

        return "\n".join(p.text for p in docx.Document(str(source)).paragraphs)
    if source.suffix.lower() not in TEXT:
        raise ValueError(f"{source.name} is not a manuscript the check reads (use .tex, .md or .docx)")
    try:
        return source.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        log.info("%s is not UTF-8; shown as Latin-1, as the check reads it", source)
        return source.read_text(encoding="latin-1")


def write_text(ctx: JobContext, path: str, text: str) -> str:
    """An exported report (Markdown or JSON) written to `path`; returns the path."""
    Path(path).write_text(text, encoding="utf-8")
    return path
