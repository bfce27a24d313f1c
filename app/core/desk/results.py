"""Typed results of Desk operations that are not library records themselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ResearchDeskError
from ..records import Paper, ResearchResult


@dataclass
class LibrarySnapshot:
    """What a front end shows on opening a library."""

    location: str
    papers: list[Paper]
    stale_reason: str = ""
    last_result: ResearchResult | None = None


@dataclass
class PaperTexts:
    """A paper with the files the paper panel shows."""

    paper: Paper | None
    summary: str = ""
    notes: str = ""


@dataclass
class PaperFiles:
    pdf: Path
    text: Path
    summary: Path
    notes: Path


@dataclass
class PaperCheck:
    """`validate`'s finding for one paper."""

    paper_id: str
    ok: bool
    problems: list[str]


@dataclass
class ValidationReport:
    checks: list[PaperCheck]
    stale_reason: str = ""  # the index was built with another embedding model

    @property
    def ok(self) -> bool:
        return not self.stale_reason and all(c.ok for c in self.checks)


@dataclass
class SummaryReport:
    done: list[str] = field(default_factory=list)  # paper ids summarized
    failed: dict[str, str] = field(default_factory=dict)  # paper id -> reason


@dataclass
class ModelState:
    """Whether research can run, and if not, why (for the first-run offer)."""

    ready: bool
    chat: str = ""
    embedding: str = ""
    problem: ResearchDeskError | None = None
    needs_setup: bool = False  # nothing configured and nothing provisioned
    uncalibrated_judge: str = ""  # the judge (described) where it has no cut-offs of its own: calibrating is offered


@dataclass
class ModelRow:
    """One line of `models list`: a catalog model or a configured one."""

    role: str  # "chat" | "embedding"
    name: str
    size_bytes: int | None
    installed: bool
    active: bool
    where: str = ""  # file path or server
