"""The first pages as positioned lines with font statistics: what the metadata readers see.

Each PyMuPDF line becomes a `Line` with its dominant font size and style. Superscripts
(affiliation letters, footnote marks: spans set clearly smaller than the line) are kept in
`text` but replaced by a comma in `main`, so that "Smith¹ᵃ, Jones²" splits into names and no
marker leaks into one.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field

import pymupdf

from ..letter_spacing import page_dict
from .text import clean, letters

log = logging.getLogger(__name__)

# The same text flags as pdf_extract's (ligatures expanded); not imported from there, which
# imports this package.
TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES

# Sheets that archives and sharing sites put in front of the article: JSTOR's terms of use,
# ResearchGate's "See discussions, stats, and author profiles" page.
_COVER = re.compile(r"your use of the jstor archive|jstor\.org/stable|this content downloaded from|"
                    r"see discussions, stats,? and author profiles|researchgate\.net/publication", re.I)


# A raised footnote or affiliation mark ("1", "a", "*", "1,2,*"); a charge or an exponent ("+", "−1") is text.
_FOOTNOTE_MARK = re.compile(r"[\d,*∗†‡§¶#a-z]+")


@dataclass
class Line:
    text: str  # the whole line, superscripts included
    main: str  # superscripts replaced by ","
    size: float  # dominant font size (by characters)
    bold: bool
    italic: bool
    bbox: tuple[float, float, float, float]
    block: int
    page: int  # 0-based page number
    horizontal: bool = True
    printed: str = ""  # footnote marks left out, other raised text as printed ("KIR+CD8+ T cells"): titles

    def __post_init__(self) -> None:
        self.printed = self.printed or self.main

    @property
    def x0(self) -> float:
        return self.bbox[0]

    @property
    def y0(self) -> float:
        return self.bbox[1]

    @property
    def y1(self) -> float:
        return self.bbox[3]

    def style(self) -> tuple[float, bool, bool]:
        return (round(self.size * 2) / 2, self.bold, self.italic)


@dataclass
class Front:
    """The pages metadata is read from: the article's first page and the next one."""

    lines: list[Line]  # the article's first page, in reading order
    next_lines: list[Line]  # the page after it (abstracts and DOIs that spill over)
    body: float  # body text size
    page_height: float
    page_width: float
    cover_text: str = ""  # text of a cover sheet in front of the article, if any
    all_text: str = ""  # plain text of the pages read, rotated margins included
    pages: list[int] = field(default_factory=list)


def page_lines(page: pymupdf.Page) -> list[Line]:
    data = page_dict(page, TEXT_FLAGS)  # letter-spaced titles and names with their words whole
    out: list[Line] = []
    for bno, block in enumerate(data["blocks"]):
        if block.get("type", 0) != 0:
            continue
        for line in block["lines"]:
            row = _line(line, bno, page.number)
            if row is not None:
                out.append(row)
    return out


def _line(line: dict, bno: int, pno: int) -> Line | None:
    spans = [(s, s["text"]) for s in line["spans"]]
    sizes: Counter[float] = Counter()
    bold = italic = chars = 0
    for s, t in spans:
        n = len(t.strip())
        if not n:
            continue
        chars += n
        sizes[round(s["size"], 1)] += n
        font = s.get("font", "")
        if s["flags"] & pymupdf.TEXT_FONT_BOLD or re.search(r"bold|black|heavy|cmbx|semibold|demi", font, re.I):
            bold += n
        if s["flags"] & pymupdf.TEXT_FONT_ITALIC or re.search(r"ital|oblique|cmti|-it\b", font, re.I):
            italic += n
    if not chars:
        return None
    size = sizes.most_common(1)[0][0]
    text = clean("".join(t for _, t in spans))
    if not text:
        return None
    # A space set in a small font of its own (OUP's "dummy-space" glyphs) is a space, not a mark.
    raised = [s["size"] < 0.8 * size and 0 < len(t.strip()) <= 4 for s, t in spans]
    main = clean("".join("," if up else t for (s, t), up in zip(spans, raised)))
    printed = clean("".join("" if up and _FOOTNOTE_MARK.fullmatch(t.strip()) else t for (s, t), up in zip(spans, raised)))
    horizontal = abs(line["dir"][0]) > 0.99
    return Line(text, main, size, bold * 2 > chars, italic * 2 > chars, tuple(line["bbox"]), bno, pno, horizontal, printed)


def body_size(lines: list[Line]) -> float:
    sizes: Counter[float] = Counter()
    for ln in lines:
        sizes[round(ln.size * 2) / 2] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def read_front(doc: pymupdf.Document) -> Front:
    """Lines of the article's first page (after a cover sheet, if one is there) and the next."""
    first = doc.load_page(0)
    lines = page_lines(first)
    text0 = first.get_text(flags=TEXT_FLAGS)
    start = 0
    cover = ""
    if doc.page_count > 1 and _COVER.search(text0):
        start, cover = 1, text0
        lines = page_lines(doc.load_page(1))
    next_lines = page_lines(doc.load_page(start + 1)) if doc.page_count > start + 1 else []
    page = doc.load_page(start)
    texts = [doc.load_page(i).get_text(flags=TEXT_FLAGS) for i in range(start, min(doc.page_count, start + 2))]
    body = body_size(lines + next_lines)
    horizontal = [ln for ln in lines if ln.horizontal and letters(ln.text) + sum(c.isdigit() for c in ln.text)]
    return Front(horizontal, [ln for ln in next_lines if ln.horizontal], body, page.rect.height, page.rect.width,
                 cover, clean(" ".join(texts)), list(range(start, start + len(texts))))
