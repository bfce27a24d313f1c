"""Find text in a PDF: every place it is printed, as rectangles per page (the viewer's find bar).

Words come from PyMuPDF's text layer with the word boundaries the page's text is read with
(word_spaces.page_words: "kno wn", a kerning space drawn inside a word, is the word "known", its
box around its glyphs), normalised as the cited-passage highlight reads them
(pdf_highlight.normalise_word: ligatures unfolded, case and punctuation dropped), so "confidence"
finds "conﬁdence" printed with the fi ligature — PyMuPDF's own `search_for` missed every one of
them in the lme4 paper (0 of 20), and QtPdf's QPdfSearchModel searches on the UI thread, a few
pages per timer tick (10 hits after 3 s on the same 51-page paper). Here the whole paper is
read once on a pool thread (~8 ms a page), then each new query is a scan of the kept words.

A query matches a run of words: its first word ends a page word, its last starts one and those
between are equal ("dence inter" finds "confidence intervals", as a find in a PDF reader does);
a one-word query is found anywhere inside a word. A hit over a line break gets one rectangle a line.

Qt-free; runs on a pool thread, so every MuPDF call takes the process's MUPDF lock, a page at a time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from app.core.desk import MUPDF, page_words

from .highlight import Rect, to_display, normalise_word

_FLAGS = pymupdf.TEXT_DEHYPHENATE | pymupdf.TEXT_MEDIABOX_CLIP  # a word broken by a hyphen at a line end is one word


@dataclass(frozen=True)
class FindHit:
    page: int  # 1-based
    rects: tuple[Rect, ...]  # one per line the hit runs over, in PDF points as displayed

    def bounds(self) -> Rect:
        return (min(r[0] for r in self.rects), min(r[1] for r in self.rects),
                max(r[2] for r in self.rects), max(r[3] for r in self.rects))


@dataclass
class _PageWords:
    words: list[str]  # normalised
    boxes: list[tuple[Rect, tuple[int, int]]]  # display rectangle, (block, line)


class PdfWords:
    """The words of one PDF, read once (per file and modification time) and kept."""

    def __init__(self) -> None:
        self._key: tuple[str, float] | None = None
        self._pages: list[_PageWords] = []
        self._lock = threading.Lock()

    def pages(self, path: Path, cancelled=lambda: False) -> list[_PageWords] | None:
        """Every page's words (None when cancelled before the end)."""
        key = (str(path), path.stat().st_mtime)
        with self._lock:
            if self._key == key:
                return self._pages
            pages: list[_PageWords] = []
            with MUPDF:
                doc = pymupdf.open(str(path))
            try:
                for number in range(doc.page_count):
                    if cancelled():
                        return None
                    with MUPDF:  # a page at a time: an import's reader thread waits at most one page
                        pages.append(_read_page(doc.load_page(number)))
            finally:
                with MUPDF:
                    doc.close()
            self._key, self._pages = key, pages
            return pages


def _read_page(page: pymupdf.Page) -> _PageWords:
    found = _PageWords([], [])
    # The words as the page's text reads them (word_spaces.py): a word with a kerning space drawn
    # inside it ("kno wn") is one word, its box around its glyphs, so the highlight lands on them.
    for x0, y0, x1, y1, word, block, line, _n in page_words(page, _FLAGS):
        norm = normalise_word(word)
        if norm:
            found.words.append(norm)
            found.boxes.append((to_display(page, pymupdf.Rect(x0, y0, x1, y1)), (block, line)))
    return found


def query_terms(query: str) -> list[str]:
    return [w for w in (normalise_word(t) for t in query.split()) if w]


def find_hits(pages: list[_PageWords], query: str) -> list[FindHit]:
    """Every place `query` is printed, in reading order."""
    terms = query_terms(query)
    if not terms:
        return []
    hits: list[FindHit] = []
    n = len(terms)
    for number, page in enumerate(pages, 1):
        words = page.words
        # In the text layer's order, the content stream's: reading order in most papers, a column
        # after another (sorting by position would zigzag across two columns, and tripled the reading).
        hits.extend(FindHit(number, _line_rects(page.boxes[i:i + n])) for i in range(len(words) - n + 1) if _matches(words, i, terms))
    return hits


def _matches(words: list[str], i: int, terms: list[str]) -> bool:
    if len(terms) == 1:
        return terms[0] in words[i]
    last = len(terms) - 1
    return (words[i].endswith(terms[0]) and words[i + last].startswith(terms[last])
            and all(words[i + k] == terms[k] for k in range(1, last)))


def _line_rects(boxes: list[tuple[Rect, tuple[int, int]]]) -> tuple[Rect, ...]:
    lines: dict[tuple[int, int], list[float]] = {}
    for (x0, y0, x1, y1), key in boxes:
        r = lines.setdefault(key, [x0, y0, x1, y1])
        r[0], r[1], r[2], r[3] = min(r[0], x0), min(r[1], y0), max(r[2], x1), max(r[3], y1)
    return tuple(tuple(r) for r in lines.values())  # type: ignore[misc]
