"""Which caption is whose: a page's tables and table captions, matched one to one.

A caption is a line opening "Table 3", "TABLE II", "Supplementary Table S2" or "KEY RESOURCES
TABLE", with the rest of its text block. A table takes a caption in its column, above it or
below it. A page sets all its captions on one side (journals mostly above the table, many
conference styles below), so each side is tried for the whole page: the side that gives more
tables a caption wins, then the one with the smaller gaps, above on a tie; tables left without a
caption then take a free one on the other side.

Why not each table's nearest caption, above first: where captions sit under their tables, a
table's own caption is below it and the next table's caption a little further above it, so it
took the next table's number, and the table under that caption was read a second time by the
aligned-text reader (bench/tables.py --scan: 6 pages of the two bench corpora read one table
twice under two numbers, and left the other table out).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

Rect = tuple[float, float, float, float]

CAPTION = re.compile(
    r"^\s*(?:(?:Supplementary|Supplemental|Extended\s+Data)\s+)?(?:Table|TABLE|Tab\.)\s*"
    r"(?P<no>S?\d+[A-Za-z]?|[IVXLC]+\b|[A-Z]\d*\b)|^\s*KEY\s+RESOURCES\s+TABLE", re.M)
MAX_GAP = 200.0  # points between a table and its caption, at most
OVERLAP = 4.0  # points a caption's box may overlap its table's (find_tables' box can take its first line)


class Caption(NamedTuple):
    number: str  # "3", "S2", "II"; "" for a key resources table
    text: str  # the caption's text block, whitespace collapsed, at most 400 characters
    rect: Rect


class Pair(NamedTuple):
    """A table and a caption that could be its own: the caption above the table or below, so far apart."""

    table: int
    caption: int
    above: bool
    gap: float


def caption_blocks(layout: dict) -> list[tuple[float, float, float, float, str, float]]:
    """The page's table captions as (x0, y0, x1, y1, text, the foot of its first line): from the
    caption's first line to the end of its text block (a caption can open in the middle of a block
    of prose). `layout`: the page's `get_text("dict")`."""
    out = []
    for block in layout["blocks"]:
        lines = [(ln["bbox"], "".join(sp["text"] for sp in ln["spans"])) for ln in block.get("lines", ())]
        for k, (bbox, text) in enumerate(lines):
            if CAPTION.match(text):
                rest = lines[k:]
                out.append((min(b[0] for b, _ in rest), bbox[1], max(b[2] for b, _ in rest), rest[-1][0][3],
                            " ".join(t for _, t in rest), bbox[3]))
                break
    return out


def caption_of(block: tuple) -> Caption:
    """A caption block (caption_blocks) as a Caption."""
    m = CAPTION.match(block[4])
    return Caption(m.group("no") or "" if m else "", " ".join(block[4].split())[:400], tuple(block[:4]))


def gap(table: Rect, caption: Rect, above: bool) -> float | None:
    """Points between the table and a caption above it (`above`) or below it; None where the
    caption is not on that side, is another column's, or is further than MAX_GAP."""
    x0, y0, x1, y1 = table
    cx0, cy0, cx1, cy1 = caption
    if cx1 < x0 or cx0 > x1:
        return None
    distance = y0 - cy1 if above else cy0 - y1
    return distance if -OVERLAP <= distance <= MAX_GAP else None


def pairs_by_place(tables: list[Rect], captions: list[Rect]) -> list[Pair]:
    """Every (table, caption, side) the geometry allows."""
    return [Pair(t, c, above, g) for t, rect in enumerate(tables) for c, cap in enumerate(captions)
            for above in (True, False) if (g := gap(rect, cap, above)) is not None]


def match(pairs: list[Pair]) -> dict[int, Pair]:
    """Each table's caption, one to one, the page's captions taken on one side (module doc)."""

    def closest(candidates: list[Pair], taken: dict[int, Pair]) -> dict[int, Pair]:
        out = dict(taken)
        used = {p.caption for p in out.values()}
        for p in sorted(candidates, key=lambda p: (p.gap, p.table, p.caption)):
            if p.table not in out and p.caption not in used:
                out[p.table] = p
                used.add(p.caption)
        return out

    best: tuple | None = None
    for above in (True, False):
        first = closest([p for p in pairs if p.above == above], {})
        whole = closest([p for p in pairs if p.above != above], first)
        key = (len(whole), len(first), -sum(p.gap for p in first.values()), above)
        if best is None or key > best[0]:
            best = (key, whole)
    return best[1] if best else {}
