"""manifest.json of an evidence bundle: what `verify` re-checks, and how the answer was made.

For each citation: its number (the page's [n]), the claim, the paper and its PDF's SHA-256, the
PDF page and printed page, the quote and the sentences it is made of (each with its character span
in the page's text as the library extracted it), and the support check's verdict. For the answer:
the question, when it was asked, the chat model, the judge and the research settings used; and the
SHA-256 of page.html, so a page edited after export is told apart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..errors import ResearchDeskError
from .records import QuotedSentence, SharedAnswer, SharedCitation, SharedPaper

FORMAT = "research-desk evidence bundle"
VERSION = 1
PAGE = "page.html"
MANIFEST = "manifest.json"


@dataclass
class Manifest:
    """A bundle's manifest as verify reads it."""

    question: str
    page_sha256: str
    citations: list[SharedCitation]
    papers: list[SharedPaper]
    made: dict[str, Any] = field(default_factory=dict)  # model, judge, settings, dates: reported, not checked

    def paper(self, paper_id: str) -> SharedPaper | None:
        return next((p for p in self.papers if p.paper_id == paper_id), None)


def manifest(answer: SharedAnswer, page_sha256: str) -> dict[str, Any]:
    papers = {p.paper_id: p for p in answer.papers}
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "question": answer.question,
        "asked_at": answer.asked_at,
        "history": answer.history,
        "mode": answer.mode,
        "scope": answer.scope,
        "model": answer.model,
        "judge": answer.judge,
        "settings": answer.settings,
        "settings_recorded": answer.settings_recorded,
        "page": PAGE,
        "page_sha256": page_sha256,
        "papers": [p.manifest() for p in answer.papers],
        "citations": [_citation(c, papers.get(c.paper_id)) for c in answer.citations],
    }


def _citation(c: SharedCitation, paper: SharedPaper | None) -> dict[str, Any]:
    start, end = c.char_span
    return {
        "number": c.number, "kind": c.kind, "claim": c.claim,
        "paper_id": c.paper_id, "sha256": paper.sha256 if paper else "",
        "page": c.page, "printed_page": c.printed_page,
        "quote": c.quote, "char_start": start, "char_end": end,
        "sentences": [asdict(s) for s in c.sentences],
        "verdict": c.verdict, "status": c.status, "note": c.note, "card": c.card,
    }


def read_manifest(data: Any) -> Manifest:
    """The manifest's JSON (already parsed) as records; a clear error where it is not one."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ResearchDeskError("This is not a Research Desk evidence bundle (its manifest.json names no such format).",
                                "Export one with: research-desk export --format bundle --out answer.zip")
    if int(data.get("version", 0)) > VERSION:
        raise ResearchDeskError(f"The bundle is format version {data.get('version')}; this Research Desk reads up to {VERSION}.",
                                "Update Research Desk to verify it.")
    try:
        papers = [SharedPaper(p["paper_id"], p.get("reference"), p.get("title", ""), list(p.get("authors", [])),
                              p.get("published", ""), p.get("doi", ""), p.get("arxiv_id", ""), p.get("venue", ""),
                              p.get("sha256", ""), p.get("file_name", "")) for p in data.get("papers", [])]
        citations = []
        for c in data["citations"]:
            cit = SharedCitation(int(c["number"]), c.get("kind", ""), c.get("claim", ""), c["paper_id"], int(c["page"]),
                                 c.get("printed_page", ""), c.get("quote", ""),
                                 [QuotedSentence(s["text"], int(s.get("char_start", -1)), int(s.get("char_end", -1)))
                                  for s in c.get("sentences", [])],
                                 c.get("verdict", ""), c.get("status", ""), c.get("note", ""), int(c.get("card", 0)))
            known = next((p for p in papers if p.paper_id == cit.paper_id), None)
            if known is None:  # a paper the manifest lists only through its citation
                papers.append(SharedPaper(cit.paper_id, None, "", [], "", sha256=c.get("sha256", "")))
            elif c.get("sha256") and c["sha256"] != known.sha256:
                raise ValueError(f"citation {cit.number} names another SHA-256 than its paper")
            citations.append(cit)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResearchDeskError(f"The bundle's manifest.json is damaged: {exc}.", "Export the bundle again.") from exc
    made = {k: data.get(k) for k in ("exported_at", "asked_at", "model", "judge", "settings", "settings_recorded")}
    return Manifest(data.get("question", ""), data.get("page_sha256", ""), citations, papers, made)
