"""After an answer: improve, save, export (Markdown, BibTeX), summary N / open N."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from pathlib import Path

import numpy as np
import yaml

from ..bibtex import bibtex, citation_keys
from ..library.store import CONTENT_CHUNKS, Library, atomic_write_text
from ..records import Evidence, Paper, ResearchResult
from .evidence import retrieval
from .funnel import Funnel, answer_with_references
from .evidence.mmr import mmr, scale01

EXTRA_PER_FEEDBACK = 6  # new passages a feedback round may add


def improve(funnel: Funnel, previous: ResearchResult, feedback: str) -> ResearchResult:
    """A revised answer from the same evidence plus passages found for the feedback."""
    feedback = " ".join(feedback.split())
    result = ResearchResult(
        query=previous.query,
        papers=list(previous.papers),
        evidence=[Evidence(**vars(e)) for e in previous.evidence],
        mode=previous.mode,
        feedback=[*previous.feedback, feedback],
        messages=[],
        extra=dict(previous.extra),
    )
    funnel.load_papers()
    seen = {(e.paper_id, e.page, e.text) for e in result.evidence}
    new = targeted_search(funnel, f"{previous.query} {feedback}", result.papers, seen)
    for e in new:
        e.number = len(result.evidence) + 1
        result.evidence.append(e)
    result.messages.append(f"Improve: {len(new)} new passages found for the feedback.")
    funnel.synthesize_into(
        result,
        template="improve.md",
        extra={"previous_answer": previous.answer, "feedback": feedback},
    )
    return result


def targeted_search(funnel: Funnel, query: str, shortlist: list[str], seen: set) -> list[Evidence]:
    """Search the shortlist first, then the whole library (or scope), for passages not yet in evidence."""
    qvec = funnel.embedder.embed_one(query)
    table = funnel.library.chunks_table(CONTENT_CHUNKS)
    found: list[retrieval.Candidate] = []
    for papers in (shortlist or None, None):
        for c in retrieval.search(table, qvec, query, limit=30, papers=funnel.within(papers), hybrid=funnel.params.hybrid):
            if c.cosine >= funnel.cutoffs.evidence and (c.paper_id, c.page, c.text) not in seen:
                found.append(c)
                seen.add((c.paper_id, c.page, c.text))
    if not found:
        return []
    order = mmr(scale01([c.relevance for c in found]), np.stack([c.vector for c in found]), EXTRA_PER_FEEDBACK, funnel.params.mmr_lambda_evidence)
    return [
        Evidence(0, found[i].paper_id, found[i].page, found[i].page_label, found[i].section, found[i].text,
                 round(found[i].cosine, 4), stage="improve", query=query,
                 char_start=found[i].char_start, char_end=found[i].char_end)
        for i in order
    ]


def slugify(text: str, max_len: int = 50) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    return slug[:max_len].rstrip("-") or "answer"


def result_markdown(result: ResearchResult, *, model: str = "") -> str:
    """The answer with references, behind YAML front matter (query, date, papers, model)."""
    front = {
        "query": result.query,
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "mode": result.mode,
        "papers": [r.paper_id for r in result.references],
        "citations": {
            "total": len(result.citations),
            "verified": sum(1 for c in result.citations if c.status == "verified"),
        },
    }
    if model:
        front["model"] = model
    if result.feedback:
        front["feedback"] = result.feedback
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True).strip()
    return f"---\n{header}\n---\n\n# {result.query}\n\n{answer_with_references(result)}"


def save_result(library: Library, result: ResearchResult, *, model: str = "") -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = library.results_dir / f"{slugify(result.query)}_{stamp}.md"
    atomic_write_text(path, result_markdown(result, model=model))
    return path


def cited_papers(library: Library, result: ResearchResult) -> list[Paper]:
    papers = library.papers_by_id()
    return [papers[r.paper_id] for r in result.references if r.paper_id in papers]


def export_bibtex(library: Library, result: ResearchResult, path: Path) -> Path:
    keys = citation_keys(library.list_papers())  # keys stable across the whole library
    atomic_write_text(path, bibtex(cited_papers(library, result), keys))
    return path


def export_markdown(result: ResearchResult, path: Path, *, model: str = "") -> Path:
    atomic_write_text(path, result_markdown(result, model=model))
    return path


def reference(result: ResearchResult, number: int) -> str:
    """Paper id of reference `number` (1-based), as in "summary 2" / "open 2"."""
    for r in result.references:
        if r.number == number:
            return r.paper_id
    raise IndexError(f"There is no reference {number}; the answer cites {len(result.references)} papers.")
