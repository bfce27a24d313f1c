"""The viewer's side of a table row: where a row unit stands on its PDF page.

A row unit's text is its cells written out with their column headers (tables.py), which the
page's own text never holds in that form, so the highlighter cannot search for the text as it
does for a sentence. It finds the row by its cell values instead.
"""

from __future__ import annotations

from typing import Any

from .page import Rect, is_number
from ...units import ABBR_SEP
from .abbreviations import is_abbreviation
from ...units import GROUP_SEP, SEP, is_table_unit

ANCHORS = 3  # cells of a row tried in turn as the one its line is found by


def row_cells(text: str) -> list[str]:
    """The cell values of a row unit's text, or of a row line of a table unit (headers left
    out), as printed."""
    if "\n" in text.strip() or SEP not in text:
        return []
    parts = text.strip().split(SEP)[1 if is_table_unit(text) else 0:]
    if parts:  # a group's heading is printed on a line of its own: a cell of its own; a long form is not printed
        parts = [_printed(p) for p in parts[0].split(GROUP_SEP)] + parts[1:]
    return [p.rsplit(": ", 1)[1] if ": " in p and not is_number(p) else p for p in parts]  # a header may hold ": "


def _printed(name: str) -> str:
    """A row's name as printed: without the long form its abbreviation was given (table_abbreviations)."""
    short = name.split(ABBR_SEP, 1)[0]
    return short if short != name and is_abbreviation(short) else name


def locate_row(page: Any, text: str) -> list[Rect]:
    """The rectangles of the table rows `text` names, on `page` (a pymupdf.Page): a row unit's
    text, or rows of a table unit one a line (a citation's quote, support_rules.quote_for).
    [] if the text is not rows or a row is not found."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) > 1 and all(SEP in ln for ln in lines):
        found = [_locate_one(page, ln) for ln in lines]
        return [r for rects in found for r in rects] if all(found) else []
    return _locate_one(page, text)


def _locate_one(page: Any, text: str) -> list[Rect]:
    """Each cell value is searched on the page; the row is the line (a band of y) where most of
    them are found, left to right."""
    cells = [c for c in row_cells(text) if c.strip()]
    if len(cells) < 2:
        return []
    hits = [[tuple(r) for r in page.search_for(c)] for c in cells[:8]]
    best: list[Rect] = []
    # The row's first cell found anchors it; a group's heading or a label spanning several rows
    # (table_groups.py) opens the unit but is printed on a line of its own, so the next cell may anchor.
    for k, anchors in enumerate(hits[:ANCHORS]):
        for anchor in anchors:
            cy = (anchor[1] + anchor[3]) / 2
            row = [anchor]
            for found in hits[k + 1:]:
                same = [r for r in found if r[1] - 2 <= cy <= r[3] + 2 and r[0] >= anchor[0]]
                if same:
                    row.append(min(same, key=lambda r: r[0]))
            if len(row) > len(best):
                best = row
    if len(best) < min(2, len(cells)):
        return []
    return [(min(r[0] for r in best), min(r[1] for r in best), max(r[2] for r in best), max(r[3] for r in best))]
