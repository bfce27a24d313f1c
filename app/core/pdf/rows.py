"""A page's text as rows and blocks with font statistics: what layout classification reads.

PyMuPDF gives lines of spans; a row is one visual line (lines on the same baseline merged: table
cells, a table of contents), with its characters counted by size, weight, monospaced and math
faces, and by typeface (the face most of its characters are set in), so that pdf_layout can tell
a heading from the paragraph it opens.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pymupdf

from .accents import join_accents
from .letter_spacing import page_dict
from .superscripts import plus_minus_joined, powers_of_ten_marked

# Plain-text flags without TEXT_PRESERVE_LIGATURES: "ﬁ" becomes "fi", so embeddings and
# full-text search see ordinary words. Highlighting must search with the same choice.
TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES

_PATTERNS: dict[str, str] = {
    "mono_font": r"(?i)mono|courier|typewriter|cmtt|cmsltt|cmitt|lmtt|sftt|txtt|nimbusmon|inconsolata|consol|menlo",
    "math_font": r"(?i)^(cmmi|cmsy|cmex|cmbsy|msbm|msam|eufm|rsfs|stmary|wasy)|math|symbol",
    # Control characters, and private-use code points (big delimiters of TeX math fonts come
    # out as U+F8xx): noise for embeddings and search, never needed to find text on a page.
    "control": r"[\x00-\x08\x0b-\x1f\x7f\ue000-\uf8ff\ufffe\uffff]",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


@dataclass
class Row:
    """One visual line: PyMuPDF lines on the same baseline merged (table cells, TOC)."""

    text: str
    size: float  # dominant font size (by characters)
    bbox: tuple[float, float, float, float]
    chars: int
    bold: int
    mono: int
    math: int
    pieces: list[str]  # the merged PyMuPDF lines, superscripts removed
    face: str = ""  # the font most of its characters are set in, without the subset prefix ("ABCDEF+")
    opens: str = ""  # the font its first characters are set in


@dataclass
class Block:
    rows: list[Row]
    bbox: tuple[float, float, float, float]
    kind: str = "prose"  # prose | heading | code | lines
    level: int = 0
    apart: bool = False  # a first row set apart from the paragraph under it by its face (pdf_layout._heading_apart)

    @property
    def text(self) -> str:
        return " ".join(r.text for r in self.rows)

    @property
    def size(self) -> float:
        sizes: Counter[float] = Counter()
        for r in self.rows:
            sizes[r.size] += r.chars
        return sizes.most_common(1)[0][0] if sizes else 0.0

    def share(self, attr: str) -> float:
        total = sum(r.chars for r in self.rows)
        return sum(getattr(r, attr) for r in self.rows) / total if total else 0.0


def _clean(text: str) -> str:
    if text.isprintable():  # fast path: no control, private-use or odd space characters
        return text
    return P["control"].sub("", text).replace("\u00a0", " ")


def page_blocks(page: pymupdf.Page) -> list[Block]:
    """Text blocks of a page as rows with font statistics, in PyMuPDF's order."""
    data = page_dict(page, TEXT_FLAGS)  # letter-spaced words joined (letter_spacing.py)
    blocks = []
    for b in data["blocks"]:
        if b.get("type", 0) != 0:
            continue
        rows: list[Row] = []
        for line in b["lines"]:
            row = line_row(line)
            if row is None:
                continue
            prev = rows[-1] if rows else None
            # Same baseline and to the right: a gap-separated piece of the same visual line.
            if prev and abs(prev.bbox[3] - row.bbox[3]) < 0.4 * max(row.size, 1) and row.bbox[0] >= prev.bbox[2] - 1:
                rows[-1] = merge_rows(prev, row)
            else:
                rows.append(row)
        if rows:
            blocks.append(Block(rows, tuple(b["bbox"])))
    return blocks


@lru_cache(maxsize=4096)
def font_style(font: str) -> tuple[bool, bool, bool]:
    """(bold, monospaced, math) judged from the font name; cached, names repeat a lot."""
    return (
        # Advent 3B2 (BMC, Springer, Wolters Kluwer) names a bold face by a suffix and leaves the
        # font's bold flag unset: "HBEMOE+AdvTTaf7f9f4f.B", "AdvOT3b30f6db.B" (".BI" bold italic).
        bool(re.search(r"bold|black|heavy|demi|semibold|cmbx|cmb\d", font, re.I) or re.search(r"\.BI?$", font)),
        bool(P["mono_font"].search(font)),
        bool(P["math_font"].search(font)),
    )


def line_row(line: dict[str, Any]) -> Row | None:
    spans = powers_of_ten_marked(plus_minus_joined([(s, _clean(s["text"])) for s in line["spans"]]))
    sizes: Counter[float] = Counter()
    faces: Counter[str] = Counter()
    opens = ""
    bold = mono = math = chars = 0
    for s, t in spans:
        n = len(t) - t.count(" ")
        if not n:
            continue
        chars += n
        sizes[round(s["size"], 1)] += n
        faces[s.get("font", "").split("+", 1)[-1]] += n
        opens = opens or s.get("font", "").split("+", 1)[-1]
        f_bold, f_mono, f_math = font_style(s.get("font", ""))
        flags = s["flags"]
        if f_bold or flags & pymupdf.TEXT_FONT_BOLD:
            bold += n
        if f_mono or flags & pymupdf.TEXT_FONT_MONOSPACED:
            mono += n
        if f_math:
            math += n
    text = join_accents(" ".join("".join(t for _, t in spans).split()))  # whitespace runs collapsed
    if not text or not chars:
        return None
    size = sizes.most_common(1)[0][0]
    # Without superscripts (footnote marks, affiliation letters): used for author names.
    main = "".join(" " if s["size"] < 0.8 * size and len(t.strip()) <= 3 else t for s, t in spans)
    main = join_accents(" ".join(main.split()))
    return Row(text, size, tuple(line["bbox"]), chars, bold, mono, math, [main], faces.most_common(1)[0][0], opens)


def merge_rows(a: Row, b: Row) -> Row:
    bbox = (min(a.bbox[0], b.bbox[0]), min(a.bbox[1], b.bbox[1]), max(a.bbox[2], b.bbox[2]), max(a.bbox[3], b.bbox[3]))
    more = a if a.chars >= b.chars else b
    return Row(f"{a.text} {b.text}", more.size, bbox, a.chars + b.chars, a.bold + b.bold, a.mono + b.mono,
               a.math + b.math, a.pieces + b.pieces, more.face, a.opens)
