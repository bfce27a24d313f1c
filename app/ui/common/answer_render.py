"""Answer markdown → HTML for the answer view, with citations as links.

Citations are replaced by placeholders before markdown-it renders the text
(so a citation's brackets are never read as markdown), then swapped for
links `cite:<paper_id>:<page>:<evidence_number>[:<citation index>]` plus a
mark of the support check's verdict. A claim that no source supports gets a
mark of its own. Before the first claim is written, the best focused sentences
of the evidence are shown (`render_evidence_preview`), linked as
`cite:<paper_id>:<page>:<evidence_number>:s<sentence index>`.
Qt-free on purpose: the HTML is tested without a window.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt

from app.core.records import Citation, Evidence, Reference, ResearchResult

_PLACEHOLDER = "\u27e6{}\u27e7"  # ⟦n⟧: survives markdown rendering untouched
_PLACEHOLDER_RE = re.compile("\u27e6(\\d+)\u27e7")
# While streaming, citations are not checked yet; show them as pending links.
_STREAM_CITE_RE = re.compile(r"\[([^\[\]\n,]{1,80}?),\s*(?:page|p\.|pp\.)\s*(\d+)\]")

# status → (mark, CSS class, meaning). Supported ✓ green, partly supported ? amber,
# unsupported ✗ red; the page and evidence checks keep their own marks.
STATUS_MARK = {
    "verified": ("\u2713", "ok", "Supported: the cited passage says this"),
    "partial": ("?", "partial", "Partly supported: the cited passage says only part of this"),
    "unsupported": ("\u2717", "bad", "Unsupported: the cited passage does not say this"),
    "page-mismatch": ("\u26a0", "warn", "Page mismatch: the paper is in the evidence, but not this page"),
    "not-in-evidence": ("\u2717", "bad", "Not in evidence: this paper was not given to the model"),
}
# A supported citation of a claim that does not answer what was asked (Claim.off_point): never the
# green mark of a right answer.
OFF_POINT_MARK = ("\u2713\u2009\u2260", "aside", "Supported, but it does not answer what was asked")
NO_SOURCE_MARK = ("\u2717\u00a0no\u00a0source", "No source supports this claim: it cites no passage")
QUOTED_TIP = "Quoted from the paper as it stands (a key sentence of the evidence, not written by the model)"
UNSUPPORTED_CLAIM_TIP = "No source supports this claim: none of its cited passages says it"
PREVIEW_SENTENCES = 5  # the best focused sentences shown before the first claim
QUOTE_TIP_CHARS = 400

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": True}).enable("table")


@dataclass(frozen=True)
class CiteLink:
    paper_id: str
    page: int
    evidence_number: int  # 0 when the citation matches no evidence passage
    citation: int | None = None  # index into ResearchResult.citations (its quote is highlighted)
    sentence: int | None = None  # index into the evidence passage's sentences (the evidence preview)


def cite_href(paper_id: str, page: int, evidence_number: int | None, citation: int | None = None, sentence: int | None = None) -> str:
    href = f"cite:{quote(paper_id, safe='')}:{page}:{evidence_number or 0}"
    if citation is not None:
        return f"{href}:{citation}"
    return f"{href}:s{sentence}" if sentence is not None else href


def parse_href(href: str) -> tuple[str, list[str]]:
    """'cite:ID:5:3' → ('cite', ['ID', '5', '3']); ids are percent-decoded."""
    scheme, _, rest = href.partition(":")
    return scheme, [unquote(p) for p in rest.split(":")] if rest else []


def parse_cite(href: str) -> CiteLink | None:
    """'cite:ID:5:3' (a citation seen while streaming), 'cite:ID:5:3:7' (citation 7 of the
    answer) or 'cite:ID:5:3:s2' (sentence 2 of evidence passage 3) → CiteLink."""
    scheme, parts = parse_href(href)
    if scheme != "cite" or len(parts) not in (3, 4):
        return None
    try:
        link = CiteLink(parts[0], int(parts[1]), int(parts[2]))
        if len(parts) == 4:
            tail = parts[3]
            if tail.startswith("s"):
                return CiteLink(link.paper_id, link.page, link.evidence_number, sentence=int(tail[1:]))
            return CiteLink(link.paper_id, link.page, link.evidence_number, citation=int(tail))
        return link
    except ValueError:
        return None


# A power of ten as the text stores it ("10^6.6", app/core/pdf/layout.py, which front ends may
# not import) is shown raised, as printed.
_POWER_OF_TEN = re.compile(r"(?<![\w.])10\^([-−–+]?\d+(?:\.\d+)?)")


def markdown_to_html(text: str) -> str:
    return _POWER_OF_TEN.sub(r"10<sup>\1</sup>", _md.render(text))


def _citation_html(c: Citation, index: int, titles: dict[str, str], labels: dict[tuple[str, int], str],
                   off_point: str = "") -> str:
    """`off_point`: why the citation's claim does not answer the question ("" where it does)."""
    mark, cls, meaning = STATUS_MARK.get(c.status, ("\u2022", "warn", c.status or "Not checked"))
    if off_point and c.status == "verified":
        mark, cls, meaning = OFF_POINT_MARK
        meaning = f"{meaning}: {off_point}"
    page = f"p.\u00a0{c.page}" if c.page else "no page"
    # A cited paper in the References shows as its number (slug ids can be 60
    # characters); the tooltip carries the id, title, the check's verdict and the quote.
    label = f"{c.reference_number},\u00a0{page}" if c.reference_number else f"{c.paper_id},\u00a0{page}"
    printed = c.printed_page or labels.get((c.paper_id, c.page), "")
    where = f"page {c.page or '?'}" + (f" (printed {printed})" if printed and printed != str(c.page) else "")
    verdict = meaning + (f" — {c.note}" if c.note else "")
    title = f"{c.paper_id}" + (f" – {titles[c.paper_id]}" if c.paper_id in titles else "") + f", {where}\n{verdict}"
    if c.quote:
        title += f"\n\n“{_clip(c.quote, QUOTE_TIP_CHARS)}”"
    href = cite_href(c.paper_id, c.page or 1, c.evidence_number, index)
    return (
        f'<a class="cite {cls}" href="{html.escape(href)}" title="{html.escape(title)}">[{html.escape(label)}]</a>'
        f'<span class="mark {cls}" title="{html.escape(verdict)}">{mark}</span>'
    )


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_BLOCK_START = re.compile(r"[-*+#>|\d]")  # a claim starting like a markdown block is not wrapped


def unbacked_claims(result: ResearchResult) -> list[int]:
    """Claims that no source supports: none of their citations is supported or partly supported."""
    backed = {c.claim for c in result.citations if c.claim is not None and c.status in ("verified", "partial")}
    return [i for i in range(len(result.claims)) if i not in backed]


def _claim_edits(result: ResearchResult) -> list[tuple[int, int, int, str]]:
    """Insertions that mark each unbacked claim: its text on a flag colour, and "✗ no source" after a claim citing nothing."""
    answer = result.answer
    edits: list[tuple[int, int, int, str]] = []
    unbacked = set(unbacked_claims(result))
    cursor = 0
    for i, claim in enumerate(result.claims):
        text = claim.text.strip()
        if text and text[-1] in ".!?":
            text = text[:-1].rstrip()
        at = answer.find(text, cursor) if text else -1
        ends = [c.end for c in result.citations if c.claim == i and c.end <= len(answer)]
        if at < 0 and not ends:
            continue
        if at >= 0:
            cursor = at + len(text)
        if claim.quoted and at >= 0:  # the paper's own words, set apart from what the model wrote
            edits.append((at, at, 3, f'<span class="quoted" title="{html.escape(QUOTED_TIP)}">'))
            edits.append((at + len(text), at + len(text), 0, "</span>"))
        if i not in unbacked:
            continue
        end = max([cursor if at >= 0 else 0, *ends])
        if answer[end : end + 1] in (".", "!", "?"):
            end += 1
        cited = any(c.claim == i for c in result.citations)
        mark, meaning = NO_SOURCE_MARK if not cited else ("", UNSUPPORTED_CLAIM_TIP)
        if at >= 0 and not _BLOCK_START.match(text):
            edits.append((at, at, 3, f'<span class="unbacked" title="{html.escape(meaning)}">'))
            edits.append((at + len(text), at + len(text), 0, "</span>"))
        if not cited:  # a cited claim already carries its ✗ marks
            edits.append((end, end, 2, f'\u00a0<span class="mark bad claim" title="{html.escape(meaning)}">{mark}</span>'))
    return edits


def render_answer(result: ResearchResult) -> str:
    """The checked answer (citations linked and marked, unbacked claims flagged) and its References."""
    answer = result.answer
    titles = {r.paper_id: r.title for r in result.references}
    labels = {(e.paper_id, e.page): e.page_label for e in result.evidence if e.page_label}
    # (start, end, order at the same position, html): citations replace their span;
    # claim marks are insertions (start == end).
    off_point = {i: claim.off_point for i, claim in enumerate(result.claims) if claim.off_point}
    edits = [
        (c.start, c.end, 1, _citation_html(c, i, titles, labels, off_point.get(c.claim, "") if c.claim is not None else ""))
        for i, c in enumerate(result.citations)
        if c.start < c.end <= len(answer)
    ]
    edits.extend(_claim_edits(result))
    edits.sort(key=lambda e: (e[0], e[2], e[1]))
    pieces: list[str] = []
    pos = 0
    table: list[str] = []
    for start, end, _order, snippet in edits:
        if start < pos:
            continue  # overlapping or stale span: leave the text as written
        pieces.append(answer[pos:start])
        pieces.append(_PLACEHOLDER.format(len(table)))
        table.append(snippet)
        pos = end
    pieces.append(answer[pos:])
    body = markdown_to_html("".join(pieces))
    body = _PLACEHOLDER_RE.sub(lambda m: table[int(m.group(1))] if int(m.group(1)) < len(table) else m.group(0), body)
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
    removed = set(result.extra.get("removed_papers") or ()) if result is not None else set()
    for r in refs:
        authors = ", ".join(r.authors) if r.authors else "Unknown authors"
        if r.paper_id in removed:  # an answer from the history that cited a paper deleted since
            authors += " · paper removed"
        first_page = min(pages.get(r.paper_id) or [1])
        items.append(
            f'<li><a class="ref" href="{html.escape(cite_href(r.paper_id, first_page, 0))}">{html.escape(r.paper_id)}</a>'
            f" – {html.escape(r.title)}<br/><span class=\"meta\">{html.escape(authors)}, {html.escape(r.published or 'n.d.')}"
            f' · <a class="summary" href="summary:{quote(r.paper_id, safe="")}">summary</a></span></li>'
        )
    return '<h2 class="references">References</h2><ol class="references">' + "".join(items) + "</ol>"


def record_html(result: ResearchResult) -> str:
    """Above an answer: the scope it was asked in and, reopened from the history, when it was asked."""
    from app.core.desk import Scope

    scope = Scope.from_dict(result.extra.get("scope"))
    within = "" if scope.empty else f"Asked within {scope.describe()}"
    number = result.extra.get("history")
    asked = f"Answer {number} of the history" if number is not None else ""
    line = " · ".join(x for x in (within, asked) if x)
    return f'<p class="muted">{html.escape(line)}</p>' if line else ""


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
    """'12 citations · 9 supported · 2 partly supported · 1 unsupported' for the status line of a
    free-text answer; page and evidence problems count as flagged. Claim-bound answers count claims."""
    if result.claims:  # claim-bound: the model's claims are the answer, the quotes its evidence
        return claims_summary(result)
    total = len(result.citations)
    if not total:
        return "No citations"
    counts = {s: sum(1 for c in result.citations if c.status == s) for s in ("verified", "partial", "unsupported")}
    flagged = total - sum(counts.values())
    parts = [f"{total} citation{'s' if total != 1 else ''}" if total else "No citations"]
    if total:
        parts.append(f"{counts['verified']} supported")
    if counts["partial"]:
        parts.append(f"{counts['partial']} partly supported")
    if counts["unsupported"]:
        parts.append(f"{counts['unsupported']} unsupported")
    if flagged:
        parts.append(f"{flagged} flagged")
    bare = len(unbacked_claims(result))
    if bare:
        parts.append(f"{bare} claim{'s' if bare != 1 else ''} without support")
    return " · ".join(parts)


def claims_summary(result: ResearchResult) -> str:
    """'2 claims · 2 supported · 4 key passages': the model's own sentences by verdict; the quoted
    key passages are counted apart, since a quote is supported by construction."""
    n = result.claim_counts()
    parts = [f"{n['claims']} claim{'s' if n['claims'] != 1 else ''}"]
    # "0 supported" only where no verdict else is shown: beside "1 partly supported" it is noise
    # that pushed the key passages out of the header.
    others = n["off_point"] or n["partial"] or n["unsupported"]
    parts += [f"{n[k]} {label}" for k, label in (("supported", "supported"), ("off_point", "supported, not the answer"),
                                                  ("partial", "partly supported"),
                                                  ("unsupported", "unsupported")) if n[k] or (k == "supported" and not others)]
    if n["key_passages"]:
        parts.append(f"{n['key_passages']} key passage{'s' if n['key_passages'] != 1 else ''}")
    return " · ".join(parts)


def render_evidence_preview(evidence: list[Evidence], writing: bool = False, top: int = PREVIEW_SENTENCES) -> str:
    """The best focused sentences across the passages, each linked to its page: the screen
    before the first claim arrives (and below the claims while they are written)."""
    ranked = sorted(
        ((s.score, -i, e, k) for i, e in enumerate(evidence) for k, s in enumerate(e.sentences) if s.text.strip()),
        key=lambda t: (t[0], t[1]), reverse=True,
    )
    items: list[str] = []
    seen: set[str] = set()
    for _score, _i, e, k in ranked:
        text = _clip(e.sentences[k].text, 420)
        if text in seen:
            continue
        seen.add(text)
        printed = f" (printed {e.page_label})" if e.page_label and e.page_label != str(e.page) else ""
        where = f"{e.paper_id}, page {e.page}{printed}" + (f" · § {e.section.strip('# ')}" if e.section else "")
        tip = f"{where}\nSource {e.number} — click to open the PDF with this sentence highlighted"
        href = cite_href(e.paper_id, e.page, e.number, sentence=k)
        items.append(
            f"<li>{html.escape(text)} "
            f'<a class="cite" href="{html.escape(href)}" title="{html.escape(tip)}">[{html.escape(_clip(e.paper_id, 28))},\u00a0p.\u00a0{e.page}]</a></li>'
        )
        if len(items) >= top:
            break
    if not items:
        return ""
    head = "Best evidence" if writing else "Best evidence so far — the model is reading"
    return f'<p class="preview"><b>{head}</b></p><ol class="preview">' + "".join(items) + "</ol>"


_LIMIT_WORDS = {
    "time": "time limit",
    "iteration cap": "round cap",
    "time (answer cut at the deadline)": "time limit (answer cut off)",
    "time (too short for a research round)": "time limit (answered as standard: too short for a research round)",
    "time (too short for scoring or agent searches)": "time limit (too short for scoring or searches)",
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

