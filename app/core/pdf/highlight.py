"""Where a cited passage sits on its PDF page: rectangles to highlight.

One home for the viewer's highlight, the shared page's crops and the annotated PDFs
(app/core/share/): the same sentence gets the same rectangles wherever it is shown.

The evidence text is markdown made from the page's text layer, so its words are the page's
words in the same order, give or take hyphenation, ligatures and markdown markers. We align
the two word sequences (difflib) and keep matching runs of a few words or more; each matched
word's box is merged into one rectangle per text line. A table row is found by its cells
(tables/rows.py); when alignment finds nothing (an odd text layer), `extract.locate_text`
(MuPDF's `search_for` on the passage's opening words, or the stored OCR words) is the fallback.

`passage_rects` gives rectangles in the page's own (unrotated) coordinates, as annotations take
them; `locate_on_page` / `locate_passage` give them as displayed (rotation applied), in PDF
points from the displayed page's top left, so a viewer or a crop only has to scale them.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from .extract import locate_text
from .mupdf_guard import MUPDF
from .tables.rows import locate_row

MIN_RUN = 3  # words: shorter matches are coincidences ("of the model")
_MD_MARKERS = re.compile(r"(^|\n)\s*(#{1,6}|[-*+]|\d+\.)\s+|[*_`|>$\\]|\[\^?\d+\]")
_PUNCT = re.compile(r"[^\w]+", re.UNICODE)

Rect = tuple[float, float, float, float]


@dataclass
class PageHighlight:
    page: int  # 1-based
    page_width: float  # points, as displayed
    page_height: float
    rects: list[Rect] = field(default_factory=list)
    method: str = ""  # "align" | "search" | "row" (a table row, by its cells) | "" (not found)

    @property
    def found(self) -> bool:
        return bool(self.rects)

    def bounds(self) -> Rect | None:
        if not self.rects:
            return None
        return (
            min(r[0] for r in self.rects),
            min(r[1] for r in self.rects),
            max(r[2] for r in self.rects),
            max(r[3] for r in self.rects),
        )


def normalise_word(word: str) -> str:
    word = unicodedata.normalize("NFKC", word).lower()  # "ﬁ" ligature → "fi"
    return _PUNCT.sub("", word)


def passage_words(text: str) -> list[str]:
    text = _MD_MARKERS.sub(" ", text)
    text = re.sub(r"-\n\s*", "", text)  # a hyphen at a line end joins the word
    return [w for w in (normalise_word(t) for t in text.split()) if w]


def locate_passage(pdf_path: str | Path, page: int, text: str) -> PageHighlight:
    """Rectangles covering `text` on 1-based `page` of the PDF, as displayed.

    May run on a pool thread, perhaps while an import reads PDFs on another: MUPDF keeps
    the two out of MuPDF at the same time (see mupdf_guard.py).
    """
    with MUPDF, pymupdf.open(str(pdf_path)) as doc:
        if not 1 <= page <= doc.page_count:
            raise ValueError(f"page {page} is outside 1–{doc.page_count}")
        return locate_on_page(doc.load_page(page - 1), text)


def locate_on_page(pg: pymupdf.Page, text: str) -> PageHighlight:
    """`locate_passage` on a page already open (the caller holds MUPDF where threads share MuPDF)."""
    result = PageHighlight(pg.number + 1, pg.rect.width, pg.rect.height)
    rects, result.method = passage_rects(pg, text)
    result.rects = [to_display(pg, r) for r in rects]
    return result


def passage_rects(pg: pymupdf.Page, text: str) -> tuple[list[pymupdf.Rect], str]:
    """(rectangles of `text` in the page's unrotated coordinates, the method that found them)."""
    # A table row unit ("Table 3 (page 14) · L-tryptophan · Fold change: 11.46 · …") reads its
    # cells with their column headers, which the page prints elsewhere: the row is found by its
    # cells. A quote from a table unit is its rows, one a line (each found so).
    row = [pymupdf.Rect(r) for r in locate_row(pg, text)]
    if row:
        return row, "row"
    rects = _align(pg, text)
    if rects:
        return rects, "align"
    hits = locate_text(pg, text)
    return (list(hits), "search") if hits else ([], "")


def _align(page: pymupdf.Page, text: str) -> list[pymupdf.Rect]:
    wanted = passage_words(text)
    if not wanted:
        return []
    words = page.get_text("words", sort=False)  # (x0, y0, x1, y1, word, block, line, wno)
    page_words: list[str] = []
    boxes: list[tuple] = []
    for w in words:
        # A word the page hyphenated at a line end ("evi-"), is matched by its stem.
        norm = normalise_word(w[4])
        if norm:
            page_words.append(norm)
            boxes.append(w)
    if not page_words:
        return []
    matcher = difflib.SequenceMatcher(None, page_words, wanted, autojunk=False)
    matched: list[tuple] = []
    for block in matcher.get_matching_blocks():
        if block.size >= MIN_RUN:
            matched.extend(boxes[block.a : block.a + block.size])
    if not matched:
        return []
    # Bridge small gaps between matched runs on the page (a hyphenated word,
    # a formula the markdown wrote differently) so the highlight reads as one passage.
    first = boxes.index(matched[0])
    last = boxes.index(matched[-1])
    span = boxes[first : last + 1]
    if len(span) <= len(matched) * 1.5 + 8:
        matched = span
    lines: dict[tuple[int, int], list[float]] = {}
    order: list[tuple[int, int]] = []
    for x0, y0, x1, y1, _w, block_no, line_no, _n in matched:
        key = (block_no, line_no)
        if key not in lines:
            lines[key] = [x0, y0, x1, y1]
            order.append(key)
        else:
            r = lines[key]
            r[0], r[1], r[2], r[3] = min(r[0], x0), min(r[1], y0), max(r[2], x1), max(r[3], y1)
    return [pymupdf.Rect(*lines[k]) for k in order]


def to_display(page: pymupdf.Page, rect: pymupdf.Rect) -> Rect:
    """Unrotated page coordinates → coordinates of the page as displayed."""
    if page.rotation:
        rect = rect * page.rotation_matrix
        rect.normalize()
    return (rect.x0, rect.y0, rect.x1, rect.y1)
