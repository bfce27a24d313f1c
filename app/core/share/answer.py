"""An answer made ready to share: each citation with the sentences of its page it rests on (and their
span in the page's text), each cited paper with its reference and its PDF's hash.

A citation's quote is the support check's (`Citation.quote`, what the viewer highlights); a citation
the check gave no quote rests on its passage's focused sentences, or the whole passage, as the viewer
shows it. A quote is split into the passage's own sentences, so each is highlighted, annotated and
checked on its own, with its span in the page's markdown.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from datetime import datetime, timezone
from typing import Any

from ..library.store import Library
from ..records import Evidence, ResearchResult
from ..research.answer.key_sentences import unquoted
from ..research.evidence.focus import split_sentences
from ..scope import Scope
from .records import CLAIM, KEY_PASSAGE, EvidenceCard, QuotedSentence, SharedAnswer, SharedCitation, SharedClaim, SharedPaper

log = logging.getLogger(__name__)

_PATTERNS: dict[str, str] = {
    "sentence_end": r"(?<=[.!?])\s+",
    # A file path in a model's description ("llama.cpp: /home/ana/.local/share/…/qwen.gguf"): only its name is shared.
    "path": r"(?:[A-Za-z]:)?[\\/](?:[^\\/\s]+[\\/])*([^\\/\s]+)",
    "server": r" at (?:[a-z][a-z0-9+.-]*://)?[^\s]+?(?=:\s|\s|$)",  # " at localhost:1234", " at http://…/v1"
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def shared_answer(library: Library, result: ResearchResult, *, model: str, judge: str, settings: dict[str, Any],
                  settings_recorded: bool, asked_at: str = "") -> SharedAnswer:
    """`result` with its citations resolved against its evidence and the library's papers."""
    evidence = {e.number: e for e in result.evidence}
    citations: list[SharedCitation] = []
    for n, c in enumerate(result.citations, 1):
        e = evidence.get(c.evidence_number) if c.evidence_number is not None else None
        if e is not None and (e.paper_id, e.page) != (c.paper_id, c.page):
            e = None  # the check flagged it (page mismatch): the passage is not on the cited page
        quote = c.quote.strip() or (_passage_quote(e) if e is not None else "")
        claim = result.claims[c.claim] if c.claim is not None and 0 <= c.claim < len(result.claims) else None
        kind = KEY_PASSAGE if claim is not None and claim.quoted else CLAIM
        if claim is not None:
            text = unquoted(claim.text) if claim.quoted else claim.text.strip()
        else:
            text = _sentence_before(result.answer, c.start)
        verdict = c.support or ("supported" if kind == KEY_PASSAGE else "")
        citations.append(SharedCitation(n, kind, text, c.paper_id, c.page, c.printed_page or (e.page_label if e else ""),
                                        quote, quoted_sentences(quote, e), verdict, c.status, c.note))
    papers = _papers(library, result)
    for c in citations:
        paper = next((p for p in papers if p.paper_id == c.paper_id), None)
        if c.printed_page == str(c.page) or not c.printed_page:
            c.printed_page = paper.printed(c.page) if paper is not None else ""
    claims = [SharedClaim(unquoted(cl.text) if cl.quoted else cl.text.strip(), KEY_PASSAGE if cl.quoted else CLAIM,
                          cl.support or ("supported" if cl.quoted else ""),
                          [n for n, c in enumerate(result.citations, 1) if c.claim == i])
              for i, cl in enumerate(result.claims)]
    scope = Scope.from_dict(result.extra.get("scope"))
    return SharedAnswer(
        question=result.query, asked_at=asked_at or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        mode=result.mode, answer=result.answer, claims=claims, citations=citations, papers=papers,
        model=public(model), judge=public(judge), settings=settings, settings_recorded=settings_recorded,
        scope="all papers" if scope.empty else scope.describe(), history=result.extra.get("history"),
        caution=result.caution, withdrawn=list(result.withdrawn), notes=list(result.messages),
        citation_spans=[(c.start, c.end) for c in result.citations],
    )


def evidence_cards(answer: SharedAnswer) -> list[EvidenceCard]:
    """One card per cited page (paper, page), in the order the answer first cites it: each of its
    cited sentences once, with the citations that quote it."""
    cards: dict[tuple[str, int], EvidenceCard] = {}
    for c in answer.citations:
        card = cards.get((c.paper_id, c.page))
        if card is None:
            card = cards[(c.paper_id, c.page)] = EvidenceCard(len(cards) + 1, c.paper_id, c.page, c.printed_page, [])
        card.citations.append(c.number)
        c.card = card.number
        for s in c.sentences:
            known = next((i for i, t in enumerate(card.sentences) if sentence_key(t.text) == sentence_key(s.text)), None)
            if known is None:
                card.sentences.append(s)
                card.cited_by.append([c.number])
                continue
            if len(s.text) > len(card.sentences[known].text):
                card.sentences[known] = s  # a key passage's quote may lack the stop its claim's quote has
            if c.number not in card.cited_by[known]:
                card.cited_by[known].append(c.number)
    return list(cards.values())


def sentence_key(text: str) -> str:
    """What makes two quotes one sentence: their letters and digits (a stop, a space or a quote
    mark apart, as a claim's quote and a key passage's may differ)."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if ch.isalnum()).casefold()


def quoted_sentences(quote: str, e: Evidence | None) -> list[QuotedSentence]:
    """`quote` as the passage's sentences (or a table's rows) it is made of, each with its page span.

    The support check joins a quote's sentences with a space (a table's rows with a line break),
    so the quote is read off the passage's own sentences, longest first; a quote they do not make
    up stays one piece, placed in the passage where it stands in it."""
    quote = quote.strip()
    if not quote:
        return []
    if e is None:
        return [QuotedSentence(quote)]
    known = {s.text.strip(): (s.char_start, s.char_end) for s in e.sentences if s.text.strip()}
    for unit in split_sentences(e):
        text = unit.text.strip()
        if text and text not in known:
            at = e.text.find(text)
            known[text] = (e.char_start + at, e.char_start + at + len(text)) if at >= 0 else (-1, -1)
    by_length = sorted(known, key=len, reverse=True)
    pieces: list[QuotedSentence] = []
    rest = quote
    while rest:
        text = next((t for t in by_length if rest.startswith(t)), None)
        if text is None:
            break
        pieces.append(QuotedSentence(text, *known[text]))
        rest = rest[len(text):].lstrip()
    if rest or not pieces:
        at = e.text.find(quote)
        span = (e.char_start + at, e.char_start + at + len(quote)) if at >= 0 else (-1, -1)
        return [QuotedSentence(quote, *span)]
    return pieces


def public(model: str) -> str:
    """A model's description as a shared answer may state it: file names without their folders,
    server addresses left out ("llama.cpp: /home/ana/models/q.gguf" → "llama.cpp: q.gguf")."""
    return P["path"].sub(r"\1", P["server"].sub("", model))


def _passage_quote(e: Evidence) -> str:
    """What a citation without a checked quote rests on: the focused sentences, else the passage."""
    if e.sentences:
        return " ".join(s.text.strip() for s in e.sentences if s.text.strip())
    return e.text.strip()


def _sentence_before(answer: str, end: int) -> str:
    """A free-text answer's claim: the sentence its citation closes."""
    before = answer[:end]
    before = before[: before.rfind("[")] if "[" in before else before
    return P["sentence_end"].split(before.strip())[-1].strip() if before.strip() else ""


def _papers(library: Library, result: ResearchResult) -> list[SharedPaper]:
    known = library.papers_by_id()
    out = []
    for r in result.references:
        p = known.get(r.paper_id)
        pdf = library.pdf_path(r.paper_id) if p is not None else None
        if pdf is not None and not pdf.exists():
            log.warning("the PDF of %s is not in the library (%s)", r.paper_id, pdf)
            pdf = None
        out.append(SharedPaper(
            paper_id=r.paper_id, reference=r.number, title=p.title if p else r.title,
            authors=list(p.authors if p else r.authors), published=p.published if p else r.published,
            doi=p.doi if p else "", arxiv_id=p.arxiv_id if p else "", venue=p.venue if p else "",
            sha256=p.content_hash if p else "", file_name=p.source_file if p else "",
            page_labels=list(p.page_labels) if p else [], pdf=pdf))
    cited = {c.paper_id for c in result.citations} - {p.paper_id for p in out}
    for pid in sorted(cited):  # a citation of a paper the References lack (flagged by the check)
        p = known.get(pid)
        if p is not None:
            pdf = library.pdf_path(pid)
            out.append(SharedPaper(pid, None, p.title, list(p.authors), p.published, p.doi, p.arxiv_id, p.venue,
                                   p.content_hash, p.source_file, list(p.page_labels), pdf if pdf.exists() else None))
    return out
