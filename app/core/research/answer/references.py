"""The References section: exactly the cited papers, numbered, in a fixed order.

Order (DESIGN.md): by paper ID, arXiv IDs first. The numbered list is also the
"cited papers" list, so "summary 2" / "open 2" always mean reference 2.
"""

from __future__ import annotations

import re

from ...records import Citation, Paper, Reference

_ARXIV = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$|^[a-z\-]+(\.[A-Z]{2})?/\d{7}(v\d+)?$")


def is_arxiv_id(paper_id: str) -> bool:
    return bool(_ARXIV.match(paper_id))


def sort_key(paper_id: str) -> tuple[int, str]:
    return (0 if is_arxiv_id(paper_id) else 1, paper_id.lower())


def build_references(citations: list[Citation], papers: dict[str, Paper]) -> list[Reference]:
    """References for the cited papers that exist in the library; numbers set on citations."""
    cited = sorted({c.paper_id for c in citations if c.paper_id in papers}, key=sort_key)
    refs = []
    for n, pid in enumerate(cited, 1):
        p = papers[pid]
        refs.append(Reference(n, pid, p.title, list(p.authors), p.published))
    number = {r.paper_id: r.number for r in refs}
    for c in citations:
        c.reference_number = number.get(c.paper_id)
    return refs


def references_markdown(refs: list[Reference]) -> str:
    if not refs:
        return ""
    return "## References\n\n" + "\n".join(r.line() for r in refs) + "\n"
