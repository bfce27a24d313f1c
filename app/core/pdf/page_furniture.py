"""Page furniture: page numbers and running heads, which are noise for retrieval and answers.

Two kinds are dropped from a page's text (pdf_layout): a plain single line in the top or bottom
margin that is a page number or carries one ("12", "Journal of Things 12"), and a running head —
a single line in a margin that repeats on many pages of the paper ("Metabolomics in wheat
following post-anthesis heat stress", "Focke et al. Consolidation of motor memory"). Running heads
repeat the paper's title words, so focusing scored them as sentences on the question: one PLOS
paper's head was in the focused evidence of three questions out of 25, four times in one.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pymupdf

MARGIN = 0.12  # the top and bottom bands of a page, as a share of its height
# A running head may sit lower: JCAP sets its head 12.7 % down the page, under a wide top margin.
# Repeating word for word on many pages is what makes a line a head, so a line without a number
# may be one in a wider band. (With numbers set aside, "Example 1", "Example 2", … at the tops of a
# vignette's pages repeat too: headings, and they stay.)
HEAD_MARGIN = 0.16
# BMC sets its head in two lines, one block: "Agyeman-Duah et al. BMC Health Services Research 2014,
# 14:1   Page 2 of 10" over the article's address; it repeats as a whole, so the block is the head.
HEAD_ROWS = 3
RUNNING_SAMPLE_PAGES = 12  # pages read to find running heads (evenly spread)
RUNNING_MIN_PAGES = 3  # a running head is on at least this many sampled pages…
RUNNING_MIN_SHARE = 0.3  # …and at least this share of them
_PATTERNS: dict[str, str] = {
    "page_number": r"(?i)[-–—\s]*(\d+|[ivxlc]+)[-–—\s]*",
    "numbered_line": r"\d+\s+\S.{0,100}|.{0,100}\S\s+\d+",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
# A copyright or licence line ("© 2010 Datta et al; licensee BioMed Central Ltd.", "Copyright 2019
# Elsevier. All rights reserved."): the publisher's boilerplate, never a heading (pdf_layout) and
# never evidence (research/evidence/not_evidence.py).
COPYRIGHT_NOTICE = re.compile(
    r"©|C\u20dd|\ball rights reserved\b|\bcopyright\s*(?:©|\(c\)|\d{4})|\(c\)\s*(?:19|20)\d\d|\blicensee\b", re.I)

T = TypeVar("T")
CACHED_DOCUMENTS = 64  # a cache forgets everything past this many documents (an import opens one at a time)


def per_document(compute: Callable[..., T]) -> Callable[..., T]:
    """Cache `compute(doc, ...)` per document: every page's extraction asks for the same figure.

    Documents cannot be weakly referenced, so the key is identity, name and length (a reused id
    with the same file name and length is the same file again, so the value still holds).
    """
    cache: dict[tuple[int, str, int], T] = {}

    @functools.wraps(compute)
    def cached(doc: pymupdf.Document, *args: Any) -> T:
        key = (id(doc), doc.name or "", doc.page_count)
        if key not in cache:
            if len(cache) >= CACHED_DOCUMENTS:
                cache.clear()
            cache[key] = compute(doc, *args)
        return cache[key]

    return cached


def in_margin(block: Any, page_rect: pymupdf.Rect, share: float = MARGIN, rows: int = 1) -> bool:
    """At most `rows` lines in the top or bottom band (`share` of the height) of the page; code
    lines are never furniture."""
    if len(block.rows) > rows or block.share("mono") >= 0.5:
        return False
    band = page_rect.height * share
    return block.bbox[3] <= page_rect.y0 + band or block.bbox[1] >= page_rect.y1 - band


def _may_be_head(block: Any, page_rect: pymupdf.Rect) -> bool:
    return (in_margin(block, page_rect, rows=HEAD_ROWS)
            or (in_margin(block, page_rect, HEAD_MARGIN) and not re.search(r"\d", block.text)))


def running_key(text: str) -> str:
    """A line as it repeats from page to page: numbers (page, volume) and case aside."""
    return re.sub(r"\d+", "#", " ".join(text.split()).lower())


def is_furniture(block: Any, page_rect: pymupdf.Rect, body: float, running: frozenset[str] = frozenset()) -> bool:
    """A page number, a margin line that carries one, or one of the paper's running heads.

    Only plain-styled lines count as numbered furniture: a section heading at the top of a page
    is larger or bold. A running head may be set in any style, since it repeats word for word.
    """
    if running and _may_be_head(block, page_rect) and running_key(block.text) in running:
        return True
    if not in_margin(block, page_rect):
        return False
    text = block.text
    if block.size > body * 1.05 or block.share("bold") >= 0.5:
        return False
    return bool(P["page_number"].fullmatch(text) or P["numbered_line"].fullmatch(text) and len(text) < 110)


@per_document
def running_heads(doc: pymupdf.Document, blocks_of: Callable[[pymupdf.Page], Iterable[Any]]) -> frozenset[str]:
    """The running heads of a document (as `running_key` writes them), from a sample of its pages."""
    n = doc.page_count
    k = min(n, RUNNING_SAMPLE_PAGES)
    picks = sorted({round(i * (n - 1) / max(1, k - 1)) for i in range(k)})
    pages_with: Counter[str] = Counter()
    for pno in picks:
        page = doc.load_page(pno)
        pages_with.update({running_key(b.text) for b in blocks_of(page) if _may_be_head(b, page.rect)})
    need = max(RUNNING_MIN_PAGES, RUNNING_MIN_SHARE * len(picks))
    # A line of numbers alone is a page number, which the plain-line rule already drops.
    return frozenset(t for t, c in pages_with.items() if c >= need and re.search(r"[^\W\d_]{2}", t))
