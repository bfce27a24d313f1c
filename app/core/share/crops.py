"""A band of each cited PDF page as a PNG, with the boxes of the cited sentences on it.

The boxes are the viewer's own (pdf/highlight.py: the same sentence, the same rectangles); the band
is as wide as the text blocks the sentences stand in and a few lines higher and lower, so a reader
sees them in their paragraph. Where the sentences are not found on the page (an odd text layer), the
whole page is shown, smaller, and the card says so; a PDF that cannot be read gives a card without
a picture, never a failed export.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pymupdf

from ..pdf.highlight import locate_on_page, to_display
from ..pdf.mupdf_guard import MUPDF
from .records import Crop, EvidenceCard, QuotedSentence, Rect, SharedAnswer

log = logging.getLogger(__name__)

ZOOM = 2.0  # 144 dpi: sharp on a phone's screen and in print; a band of text is ~50 KB of PNG
WHOLE_PAGE_ZOOM = 1.2  # a page whose sentences were not found is shown whole, smaller
CONTEXT_PT = 42.0  # about three lines of body text above and below the sentences
MIN_HEIGHT_PT = 140.0
SIDE_PAD_PT = 10.0


def crop_cards(answer: SharedAnswer, cards: list[EvidenceCard], step: Callable[[str], None] | None = None) -> None:
    """Fill each card's crop from its paper's PDF in the library (each PDF opened once)."""
    by_paper: dict[str, list[EvidenceCard]] = {}
    for card in cards:
        by_paper.setdefault(card.paper_id, []).append(card)
    for paper_id, group in by_paper.items():
        paper = answer.paper(paper_id)
        if paper is None or paper.pdf is None:
            for card in group:
                card.missing = "The PDF of this paper is not in the library: no picture of the page."
            continue
        try:
            with MUPDF:
                doc = pymupdf.open(str(paper.pdf))
        except (RuntimeError, ValueError) as exc:  # MuPDF's FileDataError is a RuntimeError
            log.warning("the PDF of %s cannot be read: %s", paper_id, exc)
            for card in group:
                card.missing = f"The library's PDF of this paper cannot be read ({exc}): no picture of the page."
            continue
        try:
            for card in group:
                if step is not None:
                    step(f"{paper_id}, page {card.page}")
                if not 1 <= card.page <= doc.page_count:
                    card.missing = f"The PDF has {doc.page_count} pages; page {card.page} is not among them."
                    continue
                with MUPDF:
                    card.crop = page_crop(doc.load_page(card.page - 1), paper_id, card.sentences)
                lost = [t.text for t, rects in zip(card.sentences, card.crop.boxes) if not rects]
                if lost and not card.crop.found:
                    card.missing = "The quoted sentences could not be located on the page: the whole page is shown."
                elif lost:
                    card.missing = f"Not located on the page, so not highlighted: “{_clip(lost[0])}”" + (
                        f" and {len(lost) - 1} more" if len(lost) > 1 else "")
        finally:
            with MUPDF:
                doc.close()


def page_crop(pg: pymupdf.Page, paper_id: str, sentences: list[QuotedSentence], zoom: float = ZOOM) -> Crop:
    """The band of `pg` around `sentences`, with one box a line of each (display coordinates).

    The band is as wide as the text blocks the sentences stand in (one column of a two-column
    page, or the whole text width), a few lines higher and lower, its edges moved out of any line
    they would cut through."""
    boxes = [list(locate_on_page(pg, s.text).rects) for s in sentences]
    found = [r for rects in boxes for r in rects]
    page = pg.rect
    if found:
        x0, y0 = min(r[0] for r in found), min(r[1] for r in found)
        x1, y1 = max(r[2] for r in found), max(r[3] for r in found)
        blocks, lines = _text_layout(pg)
        holding = [b for b in blocks if any(_overlap(b, r) for r in found)]
        if holding:
            x0, x1 = min(x0, *(b[0] for b in holding)), max(x1, *(b[2] for b in holding))
        x0, x1 = max(page.x0, x0 - SIDE_PAD_PT), min(page.x1, x1 + SIDE_PAD_PT)
        y0, y1 = y0 - CONTEXT_PT, y1 + CONTEXT_PT
        if y1 - y0 < MIN_HEIGHT_PT:
            grow = (MIN_HEIGHT_PT - (y1 - y0)) / 2
            y0, y1 = y0 - grow, y1 + grow
        across = [ln for ln in lines if ln[2] > x0 and ln[0] < x1]
        y0 = min([y0, *(ln[1] - 1 for ln in across if ln[1] < y0 < ln[3])])
        y1 = max([y1, *(ln[3] + 1 for ln in across if ln[1] < y1 < ln[3])])
        y0, y1 = max(page.y0, y0), min(page.y1, y1)
        clip: Rect = (x0, y0, x1, y1)
    else:
        clip, zoom = (page.x0, page.y0, page.x1, page.y1), WHOLE_PAGE_ZOOM
    pix = pg.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=pymupdf.Rect(clip), alpha=False)
    return Crop(paper_id, pg.number + 1, pix.tobytes("png"), clip, boxes, pix.width, pix.height)


def _text_layout(pg: pymupdf.Page) -> tuple[list[Rect], list[Rect]]:
    """The page's text blocks and lines, as displayed."""
    layout = pg.get_text("dict", flags=0)
    blocks, lines = [], []
    for b in layout["blocks"]:
        if b.get("type", 0) != 0 or not b.get("lines"):
            continue
        blocks.append(to_display(pg, pymupdf.Rect(b["bbox"])))
        lines += [to_display(pg, pymupdf.Rect(ln["bbox"])) for ln in b["lines"]]
    return blocks, lines


def _overlap(a: Rect, b: Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
