"""Superscripts in a table's words: a footnote mark is not part of the name; an exponent is.

A table's column heads and row names carry footnote marks set as superscripts ("FPS²" for the
frames-per-second column with note 2, "Error³", "Rsymm*"). The page's words run the mark into
the name ("FPS2"), so a claim about "90 fps" did not name the column, and a reader sees a figure
that is not there. Superscripts are also exponents and charges ("spike⁻¹", "R²", "χ²", "Zn²⁺") and
residue numbers ("Tyr⁴⁹⁸"), which are part of what they follow.

Told apart by what a superscript is and what it follows, read from the glyphs (PyMuPDF marks a
span raised above its line as superscript):
- a **footnote mark**: one letter or digit, or marks (*, †, ‡, §, ¶, #), after a word of three
  letters or more or standing alone — dropped;
- an **exponent or charge**: it has a sign, or follows a one-letter symbol or an element's symbol
  ("R²", "χ²", "Zn²⁺") — written with Unicode's superscript characters, as printed;
- anything else (a residue number of three digits, "NS" after a value) stays as the words read it.
Only words that end in the superscript are changed; a figure's own digits never are.
"""

from __future__ import annotations

import re
from typing import Any

_MARK = re.compile(r"^(?:[A-Za-z0-9]|[*∗†‡§¶#]+|[a-z](?:,[a-z])+)$")
_SIGNED = re.compile(r"[-−+]")
_SUPERSCRIPT = str.maketrans("0123456789+-−=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿ")
_RAISED = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ"
JOIN_GAP = 3.0  # points between a word and an exponent set as a word of its own: one word
_SYMBOL = re.compile(r"^(?:[^\W\d_]|[A-Z][a-z])$")  # "R", "χ", "Zn": a quantity's symbol or an element
_WORD = re.compile(r"[^\W\d_]{3,}")  # three letters or more: a name, not a symbol or an element ("Zn²⁺")


def _raised(page: Any) -> list[tuple[tuple[float, float, float, float], str]]:
    """(bbox, text) of each superscript span of the page."""
    out = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            for span in line["spans"]:
                if span["flags"] & 1 and span["text"].strip():
                    out.append((tuple(span["bbox"]), span["text"].strip()))
    return out


def _resolved(base: str, mark: str) -> str | None:
    """What `base` followed by the superscript `mark` reads as; None to leave the word as it is."""
    if _SIGNED.search(mark) or _SYMBOL.match(base):
        exponent = mark.translate(_SUPERSCRIPT)
        return base + exponent if all(ch not in "0123456789+-−=()" for ch in exponent) else None
    if _MARK.match(mark) and (not base or _WORD.search(base)):
        return base
    return None


def words_without_marks(page: Any) -> list[tuple]:
    """The page's words (`get_text("words")` tuples), each that ends in a superscript footnote
    mark without it (a mark standing alone left out), each that ends in an exponent written with
    superscript characters."""
    words = page.get_text("words")
    raised = _raised(page)
    if not raised:
        return words
    out = []
    for w in words:
        text = w[4]
        for (x0, y0, x1, y1), mark in raised:
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            if w[0] - 0.5 <= cx <= w[2] + 0.5 and w[1] - 0.5 <= cy <= w[3] + 0.5 and text.endswith(mark) \
                    and x1 >= w[2] - 0.5:
                read = _resolved(text[:-len(mark)], mark)
                if read is not None:
                    text = read
                break
        if text and text[0] in _RAISED and out and out[-1][5:7] == w[5:7] and w[0] - out[-1][2] < JOIN_GAP:
            last = out.pop()  # "Zn²" | "⁺": one charge, set as two words
            out.append((last[0], min(last[1], w[1]), w[2], max(last[3], w[3]), last[4] + text, *last[5:]))
        elif text:
            out.append((*w[:4], text, *w[5:]))
    return out
