"""The abstract: the block after an "Abstract"/"Summary"/"Résumé" label, a structured
abstract ("Objective: … Methods: …"), or else the first long paragraph after the author block.
"""

from __future__ import annotations

import re

from .layout import Line

_LABEL = re.compile(
    r"^(?:abstract|a\s?b\s?s\s?t\s?r\s?a\s?c\s?t|summary|résumé|resume|resumen|zusammenfassung|riassunto|synopsis)"
    r"(?![a-z])\s*[:.—–-]?\s*(.*)$", re.I)
_STRUCTURED = re.compile(r"^(?:objectives?|background|purpose|aims?|context|importance|motivation|rationale)\s*[:.]\s*\S", re.I)
_STOP = re.compile(
    r"^(?:keywords?|key\s?words|index terms|jel\b|msc\b|ams subject|subject areas?|mots[- ]cl[ée]s|palabras clave|"
    r"\d+\.?\s+introduction|i\.\s+introduction|introduction\b|1\s+[A-Z]|©|copyright|citation:|received\b|"
    r"\(?[A-Z][a-z]+\.? [A-Z][a-z]+\.? \d{4};)", re.I)
_BOILERPLATE = re.compile(
    r"creative commons|open access|licen[cs]e|copyright|©|correspond|e-?mail|edited by|reviewed by|received|"
    r"\buniversity\b.*\buniversity\b|permission to|all rights reserved|this article is|citation:|funding", re.I)


def _join(lines: list[Line]) -> str:
    out = ""
    for ln in lines:
        t = ln.text
        if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and t[:1].islower():
            out = out[:-1] + t
        else:
            out = f"{out} {t}" if out else t
    return " ".join(out.split())


def _collect(lines: list[Line], start: int, first_text: str, body: float) -> str:
    """Lines from `start` while they continue the abstract's block of text."""
    taken: list[Line] = []
    size = None
    prev: Line | None = None
    for ln in lines[start:]:
        t = ln.text
        if _STOP.match(t) or (taken and _LABEL.match(t) and len(t) < 20):
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
            if ln.bold and not prev.bold and len(t) < 80 and not _STRUCTURED.match(t):
                break  # a heading
        taken.append(ln)
        prev = ln
        if sum(len(x.text) for x in taken) > 5000:
            break
    text = _join(taken)
    return f"{first_text} {text}".strip() if first_text else text


def find(lines: list[Line], body: float, after_y: float) -> tuple[str, float, bool]:
    """(abstract, y where it starts, labelled). `after_y`: the bottom of the author block."""
    ordered = lines  # PyMuPDF's reading order keeps a two-column page's text in order
    for i, ln in enumerate(ordered):
        m = _LABEL.match(ln.text)
        if m and (len(ln.text) < 25 or m.group(1)[:1].isupper() or ln.bold):
            text = _collect(ordered, i + 1, m.group(1).strip(), body)
            if len(text) >= 20:
                return text, ln.y0, True
    for i, ln in enumerate(ordered):
        if _STRUCTURED.match(ln.text) and ln.y0 >= after_y - 1:
            text = _collect(ordered, i, "", body)
            if len(text) >= 200:
                return text, ln.y0, True
    # No label: the first long paragraph after the author block that is not boilerplate.
    blocks: dict[tuple[int, int], list[Line]] = {}
    for ln in ordered:
        if ln.y0 >= after_y - 1:
            blocks.setdefault((ln.page, ln.block), []).append(ln)
    for group in blocks.values():
        text = _join(group)
        if len(text) >= 250 and len(group) >= 3 and not _BOILERPLATE.search(text[:300]):
            return text, group[0].y0, False
    return "", 0.0, False
