"""The records of a draft: its parameters, searches, paragraphs, ledger rows and result."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..records import Citation, Evidence, Paper
from .context import DraftContext

_MARKER = re.compile(r"\[@[^\[\]]+\]")
CITE_KEY = re.compile(r"@([A-Za-z0-9_:\-]+)")  # a citation key within a marker


@dataclass
class DraftParams:
    max_custom_searches: int = 5
    max_evidence: int = 10  # passages offered to the writer (fewer if the context is small)
    max_per_paper: int = 2  # unless a further passage is the only evidence for a search
    passage_chars: int = 700  # each passage is clipped to this for the writer
    max_paragraphs: int | None = None  # None: per section (PARAGRAPHS)


@dataclass
class SearchRecord:
    number: int
    query: str
    kind: str  # "default" | "custom"
    gap: str  # the missing aspect a custom search was for
    found: int  # new passages kept
    papers: list[str]  # paper ids of those passages
    seconds: float
    note: str = ""


@dataclass
class Paragraph:
    text: str  # Markdown with [@key] citations
    keys: list[str]
    complete: bool = True  # False: salvaged from a reply cut off by the time or token limit


@dataclass
class LedgerRow:
    paragraph: int
    claim: str
    key: str
    paper_id: str
    title: str
    authors: str
    year: str
    page: int
    page_label: str
    quote: str
    vector_score: float | None
    llm_score: float | None
    combined_score: float
    support: str  # the support check's verdict: supported | partial | unsupported
    status: str  # verified | partial | unsupported (as answers' citations)
    query: str
    support_note: str = ""  # why the verdict is not "supported" (the rules' or the model's reason)


@dataclass
class DraftResult:
    section: str
    title: str
    context: DraftContext
    paragraphs: list[Paragraph] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)  # paper id → BibTeX key, cited papers only
    papers: dict[str, Paper] = field(default_factory=dict)  # cited papers
    offered: list[Evidence] = field(default_factory=list)  # evidence in the writer's prompt
    gathered: list[Evidence] = field(default_factory=list)  # everything the searches kept
    ledger: list[LedgerRow] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)  # spans in `markdown`, for links
    searches: list[SearchRecord] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stop_reason: str = ""
    limits_hit: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def markdown(self) -> str:
        """The section: heading and paragraphs (citation spans in `citations` refer to this)."""
        return f"# {self.title}\n\n" + "\n\n".join(p.text for p in self.paragraphs) + "\n"

    def cited_keys(self) -> list[str]:
        seen: list[str] = []
        for p in self.paragraphs:
            for k in citation_keys_in(p.text):
                if k not in seen:
                    seen.append(k)
        return seen

    def pages(self, key: str) -> list[int]:
        return sorted({r.page for r in self.ledger if r.key == key})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["papers"] = {pid: p.to_dict() for pid, p in self.papers.items()}
        d["markdown"] = self.markdown
        return d



def citation_keys_in(text: str) -> list[str]:
    """The `[@key]` keys of a paragraph, in order of first appearance."""
    keys: list[str] = []
    for m in _MARKER.finditer(text):
        for k in CITE_KEY.findall(m.group(0)):
            if k not in keys:
                keys.append(k)
    return keys
