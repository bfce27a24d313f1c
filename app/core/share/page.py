"""The shared answer as one self-contained HTML file: no network, no script.

resources/share/page.html (a Jinja2 template, every value escaped) lays out the question, the
answer's claims with their verdicts, the key passages, an evidence card per quoted passage (the
page crop as an embedded PNG with a box over each line of the cited sentences, its PDF and printed
page, the paper's reference and DOI) and the references; resources/share/page.css makes it read in
light and dark, on a phone and on paper. A Content-Security-Policy forbids anything but the page's
own images and style, so opening it fetches nothing.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from ..paths import resources_dir
from .records import CLAIM, KEY_PASSAGE, EvidenceCard, SharedAnswer, SharedPaper

VERDICTS = {"supported": "Supported", "partial": "Partly supported", "unsupported": "Unsupported"}
MAX_AUTHORS = 6
_PLACEHOLDER = "\u27e6{}\u27e7"  # ⟦n⟧ survives markdown rendering untouched
_PLACEHOLDER_RE = re.compile("\u27e6(\\d+)\u27e7")
_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": True}).enable("table")


@dataclass
class _Link:
    href: str
    text: str


def render_page(answer: SharedAnswer, cards: list[EvidenceCard]) -> str:
    """The page's HTML."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(resources_dir() / "share"),
                             autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    by_number = {c.number: c for c in answer.citations}
    card_of = {c.number: c.card for c in answer.citations}

    def cite_title(n: int) -> str:
        c = by_number[n]
        where = f"{c.paper_id}, page {c.page}" + (f" (printed {c.printed_page})" if c.printed_page else "")
        return where + (f" — “{_clip(c.quote, 300)}”" if c.quote else "")

    def verdict_label(verdict: str, kind: str = CLAIM) -> str:
        if kind == KEY_PASSAGE:
            return "Quoted"
        return VERDICTS.get(verdict, "Not checked")

    claims = [c for c in answer.claims if c.kind == CLAIM]
    passages = [c for c in answer.claims if c.kind == KEY_PASSAGE]
    return env.get_template("page.html").render(
        a=answer,
        asked=_when(answer.asked_at),
        made=_when(datetime.now(timezone.utc).isoformat(timespec="seconds")),
        summary=_summary(answer),
        claims=claims,
        passages=passages,
        answer_html=_answer_html(answer, card_of, cite_title) if not answer.claims else "",
        cards=[_card_view(answer, card, by_number) for card in cards],
        references=[_reference_view(p) for p in answer.papers if p.reference is not None],
        card_of=card_of,
        cite_title=cite_title,
        verdict_label=verdict_label,
    )


def _card_view(answer: SharedAnswer, card: EvidenceCard, by_number: dict) -> dict[str, Any]:
    paper = answer.paper(card.paper_id)
    label = paper.title if paper is not None and paper.title else card.paper_id
    view: dict[str, Any] = {
        "number": card.number, "paper_id": card.paper_id, "page": card.page, "printed_page": card.printed_page,
        "citations": card.citations, "cited": [by_number[n] for n in card.citations],
        "crop": card.crop, "missing": card.missing, "paper_label": label,
        "reference": _reference_text(paper) if paper is not None else card.paper_id,
        "links": _links(paper) if paper is not None else [],
    }
    crop = card.crop
    if crop is not None:
        quotes = " … ".join(s.text for s in card.sentences)
        view["alt"] = f"Page {card.page} of {label}" + (f", the cited sentences highlighted: {quotes}" if crop.found else "")
        view["src"] = "data:image/png;base64," + base64.b64encode(crop.png).decode("ascii")
        view["clip"] = _numbers(crop.clip)
        view["boxes"] = [
            {"sentence": i, "rect": _numbers(r), **dict(zip(("left", "top", "width", "height"), (f"{v:.3f}" for v in crop.relative(r))))}
            for i, rects in enumerate(crop.boxes) for r in rects
        ]
        # Where a page holds sentences of several citations, each is tagged with their numbers.
        several = len({tuple(c) for c in card.cited_by}) > 1
        # The tag stands in the band's margin, level with the sentence's first line: it covers no text.
        view["tags"] = [
            {"text": ", ".join(map(str, cited)), "top": f"{crop.relative(rects[0])[1]:.3f}"}
            for rects, cited in zip(crop.boxes, card.cited_by) if rects and several
        ]
    return view


def _numbers(r) -> str:
    return " ".join(f"{v:.2f}" for v in r)


def _answer_html(answer: SharedAnswer, card_of: dict[int, int], cite_title) -> Markup:
    """A free-text answer's markdown, each citation tag a link to its evidence card."""
    text, pieces, table, pos = answer.answer, [], [], 0
    for n, (start, end) in enumerate(answer.citation_spans, 1):
        if not (pos <= start < end <= len(text)):
            continue  # an overlapping or stale span: the tag stays as written
        pieces += [text[pos:start], _PLACEHOLDER.format(len(table))]
        table.append(f'<a class="cite" href="#e{card_of[n]}" title="{escape(cite_title(n))}">[{n}]</a>')
        pos = end
    pieces.append(text[pos:])
    body = _md.render("".join(pieces))
    return Markup(_PLACEHOLDER_RE.sub(lambda m: table[int(m.group(1))], body))


def _reference_view(p: SharedPaper) -> dict[str, Any]:
    return {"number": p.reference, "text": _reference_text(p), "links": _links(p)}


def _reference_text(p: SharedPaper) -> str:
    authors = p.authors[:MAX_AUTHORS]
    names = ", ".join(authors) + (" et al." if len(p.authors) > MAX_AUTHORS else "") if authors else "Unknown authors"
    year = p.published[:4] if p.published else "n.d."
    venue = f" {p.venue.strip().rstrip('.')}." if p.venue.strip() else ""
    return f"{names} ({year}). {(p.title or p.paper_id).strip().rstrip('.')}.{venue} [{p.paper_id}]"


def _links(p: SharedPaper) -> list[_Link]:
    links = []
    if p.doi:
        links.append(_Link(f"https://doi.org/{p.doi}", f"doi:{p.doi}"))
    if p.arxiv_id:
        links.append(_Link(f"https://arxiv.org/abs/{p.arxiv_id}", f"arXiv:{p.arxiv_id}"))
    return links


def _summary(answer: SharedAnswer) -> str:
    if not answer.claims:
        n = len(answer.citations)
        return f"{n} citation{'s' if n != 1 else ''} · {len(answer.papers)} paper{'s' if len(answer.papers) != 1 else ''}"
    k = answer.counts()
    parts = [f"{k['claims']} claim{'s' if k['claims'] != 1 else ''}"]
    parts += [f"{k[v]} {VERDICTS[v].lower()}" for v in ("supported", "partial", "unsupported") if k[v]]
    if k["key_passages"]:
        parts.append(f"{k['key_passages']} key passage{'s' if k['key_passages'] != 1 else ''}")
    return " · ".join(parts)


def _when(iso: str) -> str:
    try:
        t = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc)
        return t.strftime("%Y-%m-%d %H:%M UTC")
    return t.strftime("%Y-%m-%d %H:%M")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
