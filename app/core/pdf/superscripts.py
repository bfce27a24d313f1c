"""Superscripts as printed: powers of ten, footnote marks, exponents and a stacked "±".

MuPDF marks a span raised above its line as superscript. What it is depends on what it is and
what it follows:

- **A power of ten** in the running text (pdf_layout.py). Joined as printed, "10" and a raised
  "6.6" read "106.6" (a hundred and six) and "3 × 10" with a raised "−8" reads "3 × 10−8" (ten
  minus eight), in the text the model reads, the support check compares and the user sees quoted.
  Marked, they read "10^6.6" and "3 × 10^−8". Other raised text in the running text (footnote
  marks, affiliations, the powers of units as in "cm−2") is left as printed.
- **A stacked "±"**: some typesetting sets "±" as a raised "+" over a "−" at the same place, read
  as "+−" ("2794 +−156 nM"). Both the running text and tables read it as "±".
- In a **table's cells** (`words_without_marks`, for table_page.py), column heads and row names
  carry footnote marks ("FPS²" for the frames-per-second column with note 2, "Error³",
  "Rsymm*"). The page's words run the mark into the name ("FPS2"), so a claim about "90 fps"
  did not name the column, and a reader sees a figure that is not there. Told apart:
  - a **footnote mark**: one letter or digit, or marks (*, †, ‡, §, ¶, #), after a word of three
    letters or more or standing alone — dropped;
  - an **exponent or charge**: it has a sign, or follows a one-letter symbol or an element's
    symbol ("R²", "χ²", "Zn²⁺", "spike⁻¹") — written with Unicode's superscript characters;
  - anything else (a residue number "Tyr⁴⁹⁸", "NS" after a value) stays as the words read it.
  Only words that end in the superscript are changed; a figure's own digits never are.
"""

from __future__ import annotations

import re
from typing import Any

import pymupdf

from . import word_spaces
from .accents import join_accents

Spans = list[tuple[dict[str, Any], str]]  # a line's spans, each with its text as read
Rect = tuple[float, float, float, float]

STACKED = 1.0  # points between the left edges of a raised "+" and the "−" under it: one "±"


def _raised(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & pymupdf.TEXT_FONT_SUPERSCRIPT)


# The running text: powers of ten, a stacked "±".


def as_printed(text: str) -> str:
    """The text with the powers of ten unmarked, as the page spells them ("10^6.6" -> "106.6"):
    what a search of the page finds."""
    return P["power_mark"].sub("", text)


def powers_of_ten_marked(spans: Spans) -> Spans:
    """The spans with a raised exponent after "10" marked "^" ("10^6.6")."""
    out: Spans = []
    k = 0
    while k < len(spans):
        if _raised(spans[k][0]) and out and not _raised(out[-1][0]) and P["ten"].search(out[-1][1]):
            end = k
            while end < len(spans) and _raised(spans[end][0]):
                end += 1
            power = "".join(t for _, t in spans[k:end])
            if P["exponent"].match(power):
                out[-1] = (out[-1][0], out[-1][1].rstrip())
                out.append((spans[k][0], "^" + "".join(power.split()) + (" " if power != power.rstrip() else "")))
                k = end
                continue
        out.append(spans[k])
        k += 1
    return out


def plus_minus_joined(spans: Spans) -> Spans:
    """The spans with a raised "+" set over the "−" that follows it read as one "±"."""
    out: Spans = []
    for span, text in spans:
        if out and text[:1] in "−-" and out[-1][1].strip() == "+" and _raised(out[-1][0]) \
                and abs(span["bbox"][0] - out[-1][0]["bbox"][0]) < STACKED:
            out[-1] = (out[-1][0], out[-1][1].replace("+", "±"))
            text = text[1:]
            if not text:
                continue
        out.append((span, text))
    return out


# A table's words: footnote marks, exponents, a stacked "±".

_SUPERSCRIPT = str.maketrans("0123456789+-−=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿ")
_RAISED_CHARS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ"
_PATTERNS: dict[str, str] = {
    "ten": r"(?<![\d.,])10\s*$",
    "exponent": r"^\s*[-−–+]?\s*\d+(?:\.\d+)?\s*$",
    "power_mark": r"(?<=10)\^(?=[-−–+]?\d)",
    "mark": r"^(?:[A-Za-z0-9]|[*∗†‡§¶#]+|[a-z](?:,[a-z])+)$",
    "signed": r"[-−+]",
    "symbol": r"^(?:[^\W\d_]|[A-Z][a-z])$",  # "R", "χ", "Zn": a quantity's symbol or an element
    "word": r"[^\W\d_]{3,}",  # three letters or more: a name, not a symbol or an element ("Zn²⁺")
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
# Ligatures as their letters ("puriﬁcation" → "purification"), as the running text reads them
# (pdf_layout.TEXT_FLAGS): a row must match the question's words and the claim's.
WORD_FLAGS = pymupdf.TEXTFLAGS_WORDS & ~pymupdf.TEXT_PRESERVE_LIGATURES
JOIN_GAP = 3.0  # points between a word and an exponent set as a word of its own: one word


def _raised_spans(layout: dict) -> list[tuple[Rect, str]]:
    """(bbox, text) of each superscript span of the page (`layout`: its `get_text("dict")`)."""
    return [(tuple(span["bbox"]), span["text"].strip())
            for block in layout["blocks"] for line in block.get("lines", [])
            for span in line["spans"] if _raised(span) and span["text"].strip()]


def _resolved(base: str, mark: str) -> str | None:
    """What `base` followed by the superscript `mark` reads as; None to leave the word as it is."""
    if P["signed"].search(mark) or P["symbol"].match(base):
        exponent = mark.translate(_SUPERSCRIPT)
        return base + exponent if all(ch in _RAISED_CHARS for ch in exponent) else None
    if P["mark"].match(mark) and (not base or P["word"].search(base)):
        return base
    return None


def _read(word: tuple, raised: list[tuple[Rect, str]]) -> str:
    """The word's text with a raised mark at its end resolved, and a raised "+" over "−" at its start as "±"."""
    text = word[4]
    for (x0, y0, x1, y1), mark in raised:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if not (word[0] - 0.5 <= cx <= word[2] + 0.5 and word[1] - 0.5 <= cy <= word[3] + 0.5):
            continue
        if mark == "+" and text[:2] in ("+−", "+-") and abs(x0 - word[0]) < STACKED:
            text = "±" + text[2:]
        elif text.endswith(mark) and x1 >= word[2] - 0.5:
            read = _resolved(text[:-len(mark)], mark)
            text = text if read is None else read
    return text


def words_without_marks(page: Any, layout: dict) -> list[tuple]:
    """The page's words (`get_text("words")` tuples, ligatures as letters): a superscript footnote
    mark left out of the word it ends (a mark standing alone left out), an exponent written with
    superscript characters, a stacked "±" read as one, a TeX accent joined to its letter.
    `layout`: the page's `get_text("dict")`, which the caption reader reads too."""
    # Words a space inside them split joined again, as the page's text reads them (word_spaces.py).
    words = [(*w[:4], join_accents(w[4]), *w[5:]) for w in word_spaces.page_words(page, WORD_FLAGS)]
    raised = _raised_spans(layout)
    if not raised:
        return words
    out: list[tuple] = []
    for w in words:
        text = _read(w, raised)
        if text and text[0] in _RAISED_CHARS and out and out[-1][5:7] == w[5:7] and w[0] - out[-1][2] < JOIN_GAP:
            last = out.pop()  # "Zn²" | "⁺": one charge, set as two words
            out.append((last[0], min(last[1], w[1]), w[2], max(last[3], w[3]), last[4] + text, *last[5:]))
        elif text:
            out.append((*w[:4], text, *w[5:]))
    return out
