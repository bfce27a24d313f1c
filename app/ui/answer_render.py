"""Answer markdown → HTML for the answer view, with citations as links.

Citations are replaced by placeholders before markdown-it renders the text
(so a citation's brackets are never read as markdown), then swapped for
links `cite:<paper_id>:<page>:<evidence_number>` plus a status mark.
Qt-free on purpose: the HTML is tested without a window.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt

from app.core.records import Citation, Reference, ResearchResult

_PLACEHOLDER = "\u27e6{}\u27e7"  # ⟦n⟧: survives markdown rendering untouched
_PLACEHOLDER_RE = re.compile("\u27e6(\\d+)\u27e7")
# While streaming, citations are not checked yet; show them as pending links.
_STREAM_CITE_RE = re.compile(r"\[([^\[\]\n,]{1,80}?),\s*(?:page|p\.|pp\.)\s*(\d+)\]")

STATUS_MARK = {
    "verified": ("\u2713", "ok", "Verified: the cited page's evidence supports this claim"),
    "page-mismatch": ("\u26a0", "warn", "Page mismatch: the paper is in the evidence, but not this page"),
    "unsupported": ("\u26a0", "warn", "Unsupported: the claim's key terms are not in the cited passage"),
    "not-in-evidence": ("\u2717", "bad", "Not in evidence: this paper was not given to the model"),
}

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": True}).enable("table")


@dataclass(frozen=True)
class CiteLink:
    paper_id: str
    page: int
    evidence_number: int  # 0 when the citation matches no evidence passage


def cite_href(paper_id: str, page: int, evidence_number: int | None) -> str:
    return f"cite:{quote(paper_id, safe='')}:{page}:{evidence_number or 0}"


def parse_href(href: str) -> tuple[str, list[str]]:
    """'cite:ID:5:3' → ('cite', ['ID', '5', '3']); ids are percent-decoded."""
    scheme, _, rest = href.partition(":")
    return scheme, [unquote(p) for p in rest.split(":")] if rest else []


def parse_cite(href: str) -> CiteLink | None:
    scheme, parts = parse_href(href)
    if scheme != "cite" or len(parts) != 3:
        return None
    try:
        return CiteLink(parts[0], int(parts[1]), int(parts[2]))
    except ValueError:
        return None


def markdown_to_html(text: str) -> str:
    return _md.render(text)


def _citation_html(c: Citation, titles: dict[str, str], labels: dict[tuple[str, int], str]) -> str:
    mark, cls, meaning = STATUS_MARK.get(c.status, ("?", "warn", c.status))
    page = f"p.\u00a0{c.page}" if c.page else "no page"
    # A cited paper in the References shows as its number (slug ids can be 60
    # characters); the tooltip carries the id, title and the check's verdict.
    label = f"{c.reference_number},\u00a0{page}" if c.reference_number else f"{c.paper_id},\u00a0{page}"
    printed = labels.get((c.paper_id, c.page), "")
    where = f"page {c.page or '?'}" + (f" (printed {printed})" if printed and printed != str(c.page) else "")
    title = f"{c.paper_id}" + (f" – {titles[c.paper_id]}" if c.paper_id in titles else "") + f", {where}\n{meaning}"
    if c.note:
        title += f" — {c.note}"
    href = cite_href(c.paper_id, c.page or 1, c.evidence_number)
    return (
        f'<a class="cite {cls}" href="{html.escape(href)}" title="{html.escape(title)}">[{html.escape(label)}]</a>'
        f'<span class="mark {cls}" title="{html.escape(meaning)}">{mark}</span>'
    )


def render_answer(result: ResearchResult) -> str:
    """The checked answer (citations linked and marked) and its References."""
    answer = result.answer
    pieces: list[str] = []
    pos = 0
    table: dict[int, Citation] = {}
    for i, c in enumerate(sorted(result.citations, key=lambda c: c.start)):
        if c.start < pos or c.end > len(answer) or c.start >= c.end:
            continue  # overlapping or stale span: leave the text as written
        pieces.append(answer[pos : c.start])
        pieces.append(_PLACEHOLDER.format(i))
        table[i] = c
        pos = c.end
    pieces.append(answer[pos:])
    body = markdown_to_html("".join(pieces))
    titles = {r.paper_id: r.title for r in result.references}
    labels = {(e.paper_id, e.page): e.page_label for e in result.evidence if e.page_label}
    body = _PLACEHOLDER_RE.sub(
        lambda m: _citation_html(table[int(m.group(1))], titles, labels) if int(m.group(1)) in table else m.group(0), body
    )
    return body + references_html(result.references, result)


def references_html(refs: list[Reference], result: ResearchResult | None = None) -> str:
    if not refs:
        return ""
    pages: dict[str, list[int]] = {}
    if result is not None:
        for c in result.citations:
            if c.page and c.page not in pages.setdefault(c.paper_id, []):
                pages[c.paper_id].append(c.page)
    items = []
    for r in refs:
        authors = ", ".join(r.authors) if r.authors else "Unknown authors"
        first_page = min(pages.get(r.paper_id) or [1])
        items.append(
            f'<li><a class="ref" href="{html.escape(cite_href(r.paper_id, first_page, 0))}">{html.escape(r.paper_id)}</a>'
            f" – {html.escape(r.title)}<br/><span class=\"meta\">{html.escape(authors)}, {html.escape(r.published or 'n.d.')}"
            f' · <a class="summary" href="summary:{quote(r.paper_id, safe="")}">summary</a></span></li>'
        )
    return '<h2 class="references">References</h2><ol class="references">' + "".join(items) + "</ol>"


def render_streaming(text: str) -> str:
    """The answer while it is being written: citations as not-yet-checked links."""
    placeholders: list[str] = []

    def keep(m: re.Match) -> str:
        placeholders.append(
            f'<a class="cite pending" href="{html.escape(cite_href(m.group(1).strip(), int(m.group(2)), 0))}">'
            f"[{html.escape(m.group(1).strip())}, p.\u00a0{m.group(2)}]</a>"
        )
        return _PLACEHOLDER.format(len(placeholders) - 1)

    body = markdown_to_html(_STREAM_CITE_RE.sub(keep, text))
    body = _PLACEHOLDER_RE.sub(lambda m: placeholders[int(m.group(1))], body)
    return body + '<p class="cursor">\u258d</p>'


def citation_summary(result: ResearchResult) -> str:
    """'12 citations · 10 verified · 2 flagged' for the status line."""
    total = len(result.citations)
    if not total:
        return "No citations"
    verified = sum(1 for c in result.citations if c.status == "verified")
    flagged = total - verified
    text = f"{total} citation{'s' if total != 1 else ''} · {verified} verified"
    return text + (f" · {flagged} flagged" if flagged else "")


_LIMIT_WORDS = {
    "time": "time limit",
    "iteration cap": "round cap",
    "time (answer cut at the deadline)": "time limit (answer cut off)",
}


def limit_words(limit: str) -> str:
    """A deep run's limit, as the core names it ("iteration cap"), in a reader's words."""
    return _LIMIT_WORDS.get(str(limit), str(limit))


def deep_summary_html(result: ResearchResult) -> str:
    """One line above a deep answer: how it was researched, and any limit that stopped it.

    The full account is the answer's own "## Methodology" section; this line makes
    a stop by a limit (time, round cap, …) visible before the reader trusts the answer.
    """
    method = result.extra.get("methodology") if isinstance(result.extra, dict) else None
    if not isinstance(method, dict):
        return ""
    searches = len(method.get("queries") or [])
    papers = len(method.get("papers_read") or [])
    kept = int(method.get("evidence_kept") or 0)
    parts = [
        "Deep research",
        f"{searches} search{'es' if searches != 1 else ''}",
        f"{kept} passage{'s' if kept != 1 else ''} from {papers} paper{'s' if papers != 1 else ''}",
    ]
    line = html.escape(" · ".join(parts))
    limits = result.extra.get("limits_hit") or method.get("limits_hit") or []
    if limits:
        words = ", ".join(limit_words(x) for x in dict.fromkeys(limits))
        line += f' · <span class="warn"><b>Stopped: {html.escape(words)}</b></span>'
    return f'<p class="muted">{line} · details under Methodology below</p>'

