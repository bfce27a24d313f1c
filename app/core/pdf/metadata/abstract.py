"""The abstract: the block after an "Abstract"/"Summary"/"Résumé" label, a structured
abstract ("Objective: … Methods: …"), a paragraph that a keyword line follows (templates that
set the abstract without a label, "Rcpp | FAQ | R | C++"), or else the first long paragraph
after the author block -- never one after the body's first heading ("1 Introduction").
"""

from __future__ import annotations

import re
from collections import Counter

from ...text.line_breaks import document_words, join_lines
from .layout import Line

_PATTERNS: dict[str, str] = {
    "label": r"(?i)^(?:abstract|a\s?b\s?s\s?t\s?r\s?a\s?c\s?t|summary|résumé|resume|resumen|zusammenfassung|riassunto|synopsis)"
             r"(?![a-z])\s*[:.—–-]?\s*(.*)$",
    "structured": r"(?i)^(?:objectives?|background|purpose|aims?|context|importance|motivation|rationale)\s*[:.]\s*\S",
    "stop": r"(?i)^(?:keywords?|key\s?words|index terms|jel\b|msc\b|ams subject|subject areas?|mots[- ]cl[ée]s|palabras clave|"
            r"\d+\.?\s+introduction|i\.\s+introduction|introduction\b|1\s+[A-Z]|©|copyright|citation:|received\b|"
            r"\(?[A-Z][a-z]+\.? [A-Z][a-z]+\.? \d{4};)",
    # A keyword line: labelled, or terms split by bars ("Rcpp | sugar | R | C++"; a line of names
    # split by middle dots is an author line, so dots alone do not make one).
    "keyword_line": r"(?i)^(?:keywords?|key\s?words|index terms)\b|^[^|]{1,40}(?:\s\|\s[^|]{1,40}){2,}$",
    # The body's first heading: what follows it is the paper, not its abstract.
    "body_heading": r"(?i)^(?:(?:\d+\.?|[IVX]+\.)\s*)?introduction\s*$|"
                    r"^(?:\d+\.?|[IVX]+\.)\s*(?:background|motivation|overview)\s*$",
    "boilerplate": r"(?i)creative commons|open access|licen[cs]e|copyright|©|correspond|e-?mail|edited by|reviewed by|received|"
                   r"\buniversity\b.*\buniversity\b|permission to|all rights reserved|this article is|citation:|funding",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def _join(lines: list[Line], words: Counter | None = None) -> str:
    """The lines as one paragraph; a word broken at a line's end spelled as the page spells it
    elsewhere (`words`), as the page text is (line_breaks.py)."""
    out = ""
    for ln in lines:
        t = ln.text.strip()
        out = join_lines(out, t, words) if out else t
    return " ".join(out.split())


def _collect(lines: list[Line], start: int, first_text: str, body: float, words: Counter) -> str:
    """Lines from `start` while they continue the abstract's block of text."""
    taken: list[Line] = []
    size = None
    prev: Line | None = None
    for ln in lines[start:]:
        t = ln.text
        # A copyright notice opens its own line; "… Copyright / © 2009 Wiley" continues a
        # sentence (a preprint note at the head of the abstract) and does not end the block.
        mid_sentence = bool(taken) and re.match(r"©|copyright", t, re.I) and not re.search(r"[.!?:]$", taken[-1].text)
        if (P["stop"].match(t) and not mid_sentence) or (taken and P["label"].match(t) and len(t) < 20):
            break
        if size is None:
            size = ln.size
        elif abs(ln.size - size) > 0.8:
            break
        if prev is not None:
            new_column = ln.y0 < prev.y0 - 20 and ln.x0 > prev.x0 + 80
            if ln.page != prev.page:
                break
            if not new_column and ln.y0 - prev.y1 > 2.2 * ln.size:
                break
            if ln.bold and not prev.bold and len(t) < 80 and not P["structured"].match(t):
                break  # a heading
        taken.append(ln)
        prev = ln
        if sum(len(x.text) for x in taken) > 5000:
            break
    text = _join(taken, words)
    return f"{first_text} {text}".strip() if first_text else text


def find(lines: list[Line], body: float, after_y: float) -> tuple[str, float, bool]:
    """(abstract, y where it starts, labelled). `after_y`: the bottom of the author block."""
    ordered = lines  # PyMuPDF's reading order keeps a two-column page's text in order
    words = document_words(ln.text for ln in lines)
    for i, ln in enumerate(ordered):
        m = P["label"].match(ln.text)
        if m and (len(ln.text) < 25 or m.group(1)[:1].isupper() or ln.bold):
            text = _collect(ordered, i + 1, m.group(1).strip(), body, words)
            if len(text) >= 20:
                return text, ln.y0, True
    # A run-in "Background." after the body's first heading is a paragraph of the paper.
    body_at = next((i for i, ln in enumerate(ordered) if P["body_heading"].match(ln.text)), len(ordered))
    for i, ln in enumerate(ordered[:body_at]):
        if P["structured"].match(ln.text) and ln.y0 >= after_y - 1:
            text = _collect(ordered, i, "", body, words)
            if len(text) >= 200:
                return text, ln.y0, True
    # No label: a paragraph that a keyword line follows, else the first long paragraph after
    # the author block that is not boilerplate -- up to the body's first heading.
    paragraphs = []
    for group in paragraphs_of([ln for ln in ordered if ln.y0 >= after_y - 1]):
        first_row = _join([ln for ln in group if abs(ln.y1 - group[0].y1) < 2])  # "1" + "Introduction"
        if P["body_heading"].match(first_row):
            break
        paragraphs.append(group)
    for group, nxt in zip(paragraphs, paragraphs[1:]):
        text = _join(group, words)
        if P["keyword_line"].match(nxt[0].text) and len(text) >= 80 and not P["keyword_line"].match(group[0].text):
            return text, group[0].y0, True
    for group in paragraphs:
        text = _join(group, words)
        if len(text) >= 250 and len(group) >= 3 and not P["boilerplate"].search(text[:300]):
            return text, group[0].y0, False
    return "", 0.0, False


def body_started(lines: list[Line]) -> bool:
    """Whether the page shows the body's first heading (then no abstract follows on later pages)."""
    return any(P["body_heading"].match(ln.text) for ln in lines)


def paragraphs_of(lines: list[Line]) -> list[list[Line]]:
    """Lines grouped into paragraphs: PyMuPDF's blocks, joined where a paragraph was split into
    one block per line (double-spaced manuscripts, some templates) or split after a few lines
    (OCR text layers): same page and style, the same left edge and an even line pitch."""
    out: list[list[Line]] = []
    for ln in lines:
        if out:
            g, last = out[-1], out[-1][-1]
            same_page = ln.page == last.page
            if same_page and (ln.block == last.block or (abs(ln.y1 - last.y1) < 0.4 * ln.size and ln.x0 > last.x0)):
                g.append(ln)
                continue
            steps = [b.y0 - a.y0 for a, b in zip(g, g[1:]) if b.y0 - a.y0 > 2]
            dy = ln.y0 - last.y0
            # The left edge is the second line's where the first is indented.
            left = g[1].x0 if len(g) > 1 else g[0].x0
            if (same_page and abs(ln.size - last.size) <= 0.6 and ln.bold == last.bold and abs(ln.x0 - left) <= 2
                    and 0.9 * ln.size < dy <= 2.6 * ln.size and (not steps or abs(dy - steps[-1]) <= 1.5)):
                g.append(ln)
                continue
        out.append([ln])
    return out
