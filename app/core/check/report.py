"""The check's report: records, their JSON form and a Markdown rendering.

JSON: `{draft, bib, partial, counts: {verdict: n}, problems: [line], sentences: [{text,
location: {line, column}, citations: [{key, paper_id, verdict, page, printed_page, quote,
better_source, note}]}]}`. `better_source` is null or `{paper_id, page, printed_page, quote}`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    SUPPORTED = "supported"
    PARTIAL = "partial"
    NOT_FOUND = "not-found"  # not found in the cited paper (its best page is offered)
    NOT_IN_LIBRARY = "not-in-library"  # the key resolves to no library paper


LABELS = {
    Verdict.SUPPORTED.value: "supported",
    Verdict.PARTIAL.value: "partial",
    Verdict.NOT_FOUND.value: "not found in the cited paper",
    Verdict.NOT_IN_LIBRARY.value: "not in the library",
}
FLAGGED = frozenset({Verdict.NOT_FOUND.value, Verdict.NOT_IN_LIBRARY.value})


@dataclass
class Source:
    """A passage of a library paper: where it is and what it says."""

    paper_id: str
    page: int
    printed_page: str
    quote: str


@dataclass
class CheckedCitation:
    key: str
    paper_id: str | None
    verdict: str
    page: int | None = None
    printed_page: str | None = None
    quote: str = ""
    better_source: Source | None = None
    note: str = ""  # why (a missing number, the .bib problem), one line

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["better_source"] = asdict(self.better_source) if self.better_source else None
        return d


@dataclass
class CheckedSentence:
    text: str
    line: int
    column: int
    citations: list[CheckedCitation] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "location": {"line": self.line, "column": self.column},
                "citations": [c.to_dict() for c in self.citations]}


@dataclass
class CheckReport:
    draft: str
    bib: str = ""
    sentences: list[CheckedSentence] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # bad input, one clear line each
    partial: bool = False  # cancelled: the sentences after `sentences` were not checked
    total_sentences: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        counts = {v.value: 0 for v in Verdict}
        for s in self.sentences:
            for c in s.citations:
                counts[c.verdict] = counts.get(c.verdict, 0) + 1
        return counts

    def citations(self) -> list[CheckedCitation]:
        return [c for s in self.sentences for c in s.citations]

    def to_dict(self) -> dict[str, Any]:
        return {
            "draft": self.draft,
            "bib": self.bib,
            "partial": self.partial,
            "checked_sentences": len(self.sentences),
            "total_sentences": self.total_sentences,
            "counts": self.counts,
            "problems": list(self.problems),
            "sentences": [s.to_dict() for s in self.sentences],
            "timings": dict(self.timings),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CheckReport":
        sentences = []
        for s in d.get("sentences", []):
            cits = []
            for c in s.get("citations", []):
                c = dict(c)
                bs = c.pop("better_source", None)
                cits.append(CheckedCitation(**c, better_source=Source(**bs) if bs else None))
            sentences.append(CheckedSentence(s["text"], s["location"]["line"], s["location"]["column"], cits))
        return cls(draft=d.get("draft", ""), bib=d.get("bib", ""), sentences=sentences, problems=list(d.get("problems", [])),
                   partial=bool(d.get("partial")), total_sentences=int(d.get("total_sentences", len(sentences))),
                   timings=dict(d.get("timings", {})))

    def to_markdown(self) -> str:
        return render_markdown(self)


def _where(c: CheckedCitation) -> str:
    if not c.page:
        return ""
    printed = f" (printed {c.printed_page})" if c.printed_page and c.printed_page != str(c.page) else ""
    return f", page {c.page}{printed}"


def render_markdown(report: CheckReport) -> str:
    counts = report.counts
    lines = [f"# Citation check: {report.draft}", ""]
    if report.bib:
        lines.append(f"References: {report.bib}")
    summary = ", ".join(f"{n} {LABELS[v]}" for v, n in counts.items() if n) or "no citations checked"
    lines += [f"{len(report.sentences)} citing sentences checked: {summary}.", ""]
    if report.partial:
        lines += [f"**Stopped early**: {len(report.sentences)} of {report.total_sentences} sentences were checked.", ""]
    if report.problems:
        lines += ["## Problems", ""] + [f"- {p}" for p in report.problems] + [""]
    lines += ["## Sentences", ""]
    for s in report.sentences:
        lines.append(f"**Line {s.line}, column {s.column}:** {s.text}")
        lines.append("")
        for c in s.citations:
            paper = f" → {c.paper_id}" if c.paper_id else ""
            lines.append(f"- `{c.key}`{paper}: **{LABELS.get(c.verdict, c.verdict)}**{_where(c)}" + (f" — {c.note}" if c.note else ""))
            if c.quote:  # a not-found verdict still shows where the paper came closest
                lines.append(f"  > {'closest passage: ' if c.verdict == Verdict.NOT_FOUND.value else ''}{c.quote}")
            if c.better_source:
                b = c.better_source
                lines.append(f"  - better source: {b.paper_id}, page {b.page}"
                             + (f" (printed {b.printed_page})" if b.printed_page and b.printed_page != str(b.page) else "")
                             + (f": \"{b.quote}\"" if b.quote else ""))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
