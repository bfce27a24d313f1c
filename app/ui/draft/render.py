"""A drafted section → HTML for the Draft tab, with every citation key a link.

The core writes Pandoc citations (`[@zeileis2004; @berger2017]`) and records
one `Citation` span per key in `DraftResult.citations`, appended in step with
the evidence ledger (`DraftResult.ledger`): citation i and ledger row i are
the same key in the same sentence. A link is `draftcite:<i>`, so a click
resolves to that citation's paper, evidence page and ledger quote without
re-parsing the text.

Each bracket group is shown the way Pandoc renders it, author–year
("(Zeileis 2004; Berger et al. 2017)"), each name a link; the key, title,
page and quote are in the tooltip. Rendering reuses the answer view's
markdown and placeholder approach (answer_render), so a citation's brackets
are never read as markdown. Qt-free on purpose: tested without a window.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.desk import author_names

from ..common.answer_render import _PLACEHOLDER, _PLACEHOLDER_RE, STATUS_MARK, markdown_to_html

if TYPE_CHECKING:  # the drafting pipeline is heavy; the view only needs its records
    from app.core.desk import DraftResult, LedgerRow

SCHEME = "draftcite"
_GROUP = re.compile(r"\[@[^\[\]]+\]")  # the core's own marker pattern (draft._MARKER)
_KEY = re.compile(r"@([A-Za-z0-9_:\-]+)")


@dataclass(frozen=True)
class DraftCite:
    """What one citation link opens: the paper at its evidence page, the quote highlighted."""

    index: int  # in DraftResult.citations
    key: str
    paper_id: str
    page: int
    label: str  # "Zeileis 2004"
    quote: str  # the ledger's quote (≤ 30 words), else the evidence passage
    status: str  # verified | partial | unsupported (the support check's verdict, as answers' citations)
    paragraph: int = 0
    claim: str = ""  # the sentence the key is cited for (the ledger's claim)
    note: str = ""  # why the support check did not call it supported

    @property
    def href(self) -> str:
        return f"{SCHEME}:{self.index}"


def parse_draft_href(href: str) -> int | None:
    scheme, _, rest = href.partition(":")
    if scheme != SCHEME or not rest.isdigit():
        return None
    return int(rest)


def paper_label(paper) -> str:
    """'Zeileis 2004', 'Zeileis and Hothorn 2002', 'Berger et al. 2017' (Pandoc's author–year)."""
    if paper is None:
        return ""
    return f"{author_names(paper) or paper.title[:40] or paper.id} {paper.year or 'n.d.'}"


def key_labels(result: DraftResult) -> dict[str, str]:
    """Key → label; two papers with one label (Zeileis 2004 twice) show their keys instead."""
    labels = {key: paper_label(result.papers.get(pid)) or key for pid, key in result.keys.items()}
    for key, pid in ((c.note, c.paper_id) for c in result.citations):
        labels.setdefault(key, paper_label(result.papers.get(pid)) or key)
    seen: dict[str, int] = {}
    for label in labels.values():
        seen[label] = seen.get(label, 0) + 1
    return {key: (label if seen[label] == 1 else key) for key, label in labels.items()}


def _ledger_row(result: DraftResult, index: int) -> LedgerRow | None:
    c = result.citations[index]
    # The core appends a citation and its ledger row together; check before trusting that.
    if index < len(result.ledger):
        row = result.ledger[index]
        if row.key == c.note and row.paper_id == c.paper_id and row.page == c.page:
            return row
    return next((r for r in result.ledger if r.key == c.note and r.page == c.page), None) or next(
        (r for r in result.ledger if r.paper_id == c.paper_id), None
    )


def draft_cites(result: DraftResult) -> list[DraftCite]:
    """One DraftCite per citation span, in DraftResult.citations order."""
    labels = key_labels(result)
    out: list[DraftCite] = []
    for i, c in enumerate(result.citations):
        row = _ledger_row(result, i)
        text = row.quote.removesuffix(" …").strip() if row and row.quote else ""
        if not text:  # no quote: highlight the whole evidence passage the citation rests on
            e = next((e for e in result.offered if e.paper_id == c.paper_id and e.number == c.evidence_number), None)
            text = e.text if e is not None else ""
        key = c.note or (row.key if row else c.paper_id)
        out.append(DraftCite(i, key, c.paper_id, c.page or 1, labels.get(key, key), text, c.status,
                             row.paragraph if row else 0, row.claim if row else "",
                             getattr(row, "support_note", "") if row else ""))
    return out


def _cite_link(cite: DraftCite, title: str) -> str:
    tip = f"@{cite.key} — {title}\nPage {cite.page}" + (f": “{cite.quote}”" if cite.quote else "") + "\nClick to open the PDF at this page"
    link = f'<a class="cite" href="{cite.href}" title="{html.escape(tip)}">{html.escape(cite.label)}</a>'
    if cite.status != "verified":
        mark, cls, meaning = STATUS_MARK.get(cite.status, ("?", "warn", cite.status))
        link += f'<span class="mark {cls}" title="{html.escape(meaning)}">{mark}</span>'
    return link


def render_draft(result: DraftResult, notes: bool = True) -> str:
    """The section with linked author–year citations, its references, and (notes=True)
    the run's warnings and notes."""
    text = result.markdown
    cites = draft_cites(result)
    titles = {pid: p.title for pid, p in result.papers.items()}
    order = sorted(range(len(result.citations)), key=lambda i: result.citations[i].start)
    pieces: list[str] = []
    groups: list[str] = []
    pos = 0
    for m in _GROUP.finditer(text):
        inside = [cites[i] for i in order if m.start() <= result.citations[i].start < m.end()]
        covered = {c.key for c in inside}
        links = [_cite_link(c, titles.get(c.paper_id, c.paper_id)) for c in inside]
        # A key without a span (should not happen) stays readable as text.
        links += [html.escape("@" + k) for k in _KEY.findall(m.group(0)) if k not in covered]
        pieces.append(text[pos : m.start()])
        pieces.append(_PLACEHOLDER.format(len(groups)))
        groups.append("(" + "; ".join(links) + ")")
        pos = m.end()
    pieces.append(text[pos:])
    body = markdown_to_html("".join(pieces))
    body = _PLACEHOLDER_RE.sub(lambda g: groups[int(g.group(1))] if int(g.group(1)) < len(groups) else g.group(0), body)
    return body + references_html(result, cites) + (run_notes_html(result) if notes else "")


def references_html(result: DraftResult, cites: list[DraftCite]) -> str:
    first: dict[str, DraftCite] = {}
    for c in cites:
        first.setdefault(c.key, c)
    items = []
    for key in sorted(first, key=lambda k: first[k].label.lower()):
        c = first[key]
        paper = result.papers.get(c.paper_id)
        title = paper.title if paper else c.paper_id
        pages = sorted({x.page for x in cites if x.key == key})
        where = f"page{'s' if len(pages) > 1 else ''} {', '.join(map(str, pages))}"
        items.append(
            f'<li><a class="ref" href="{c.href}">{html.escape(c.label)}</a> – {html.escape(title)}<br/>'
            f'<span class="meta">@{html.escape(key)} · evidence on {where} · library id {html.escape(c.paper_id)}</span></li>'
        )
    if not items:
        return ""
    return '<h2 class="references">References</h2><ol class="references">' + "".join(items) + "</ol>"


def run_notes_html(result: DraftResult) -> str:
    """Warnings (things to fix before using the text) and notes on how the run went."""
    out = ""
    if result.warnings:
        rows = "".join(f'<li class="warning">{html.escape(w)}</li>' for w in result.warnings)
        out += f'<p class="warnings"><b>\u26a0 Check before use</b></p><ul class="notes">{rows}</ul>'
    notes = list(result.notes)
    searches = len(result.searches)
    if searches:
        why = result.stop_reason or ", ".join(result.limits_hit) or "the default searches were done"
        notes.insert(0, f"{searches} search{'es' if searches != 1 else ''}; searching stopped because {why}.")
    if result.limits_hit and result.stop_reason and not result.stop_reason.startswith("limit"):
        notes.append("Limits reached: " + ", ".join(result.limits_hit) + ".")
    if notes:
        rows = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
        out += f'<p class="muted" style="margin-top:14px"><b>Notes from this run</b></p><ul class="notes">{rows}</ul>'
    return out


def render_draft_streaming(title: str, paragraphs: list[str]) -> str:
    """Paragraphs while the model writes them: citation keys shown as not-yet-checked."""
    groups: list[str] = []

    def keep(m: re.Match) -> str:
        groups.append(f'<span class="pending">{html.escape(m.group(0))}</span>')
        return _PLACEHOLDER.format(len(groups) - 1)

    text = f"# {title}\n\n" + "\n\n".join(p.strip() for p in paragraphs if p.strip())
    body = markdown_to_html(_GROUP.sub(keep, text))
    body = _PLACEHOLDER_RE.sub(lambda m: groups[int(m.group(1))], body)
    return body + '<p class="cursor">\u258d</p>'


def draft_summary(result: DraftResult) -> str:
    """'3 paragraphs · 5 citations of 3 papers · 1 flagged · 52 s' for the status line."""
    n = len(result.paragraphs)
    cited = len(result.cited_keys())
    flagged = sum(1 for c in result.citations if c.status != "verified")
    text = f"{n} paragraph{'s' if n != 1 else ''} · {len(result.citations)} citation{'s' if len(result.citations) != 1 else ''} of {cited} paper{'s' if cited != 1 else ''}"
    if flagged:
        text += f" · {flagged} flagged"
    total = result.timings.get("total_s")
    return text + (f" · {total:.0f} s" if total else "")
