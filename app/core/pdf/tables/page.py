"""One page's tables: found by `find_tables` or read from aligned text (table_text.py), each
given its own caption (table_captions.py), cleaned into headers and rows, and kept where it reads
as a table (`looks_like_table`); tables.py makes them units.

Cell text is read from the page's words placed by their centres, not from `Table.extract()`,
which splits a decimal number whose point sits on another baseline ("1146\\n.").
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from .groups import fold_into_above, regroup
from ..superscripts import words_without_marks
from .captions import CAPTION, Caption, Pair, Rect, caption_blocks, caption_of, match, pairs_by_place
from .text import MEASUREMENT, aligned_tables

_PATTERNS: dict[str, str] = {
    "number": r"^[<>≤≥~±+\-−–]?\s*\d[\d,]*(?:\.\d+)?(?:\s*(?:±|\+/-)\s*\d[\d,]*(?:\.\d+)?)?\s*%?(?:[KMBG]|[a-z*†‡]{0,3})$",
    # A catalogue number or identifier: letters and digits mixed in one token of five or more
    # ("ab6556", "SCR_002798", "Cat#4370S", "RRID:AB_2313567"), not a decimal number.
    "identifier": r"(?<![\w.])(?=[\w#:/-]*\d)(?=[\w#:/-]*[A-Za-z])[A-Za-z0-9][\w#:/-]{4,}(?![\w.])",
    "name_cell": r"[A-Za-z%]",  # a column's name holds a letter, or is "%" / "(%)"
    "link": r"(?i)https?://|\bdoi\.org/|\bdoi:\s*10\.",  # a URL or a DOI: a note, never a value
    # A significance legend under a table ("*** significant at · P < 0.001", "NS · not significant"): a
    # threshold, and words saying what it marks. A row of values never holds only these.
    "threshold": r"(?i)^[*†‡§\s]*p\s*[<≤]\s*0?[.·]\d+$",
    "significance": r"(?i)^[*†‡§\s]*(?:(?:not\s+|non-?)?significant(?:ly)?\b.*|n\.?s\.?)$",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
MIN_COLS = 2
MIN_ROWS = 2
BESIDE = 5.0  # × a row's height: a word this near a ruled table's side, on its row, is part of the row
MIN_FILLED = 0.5  # share of cells with text
MAX_MEDIAN_CELL = 40  # characters: two-column body text read as a table has line-long cells
LOW_RANK_ROWS = 0.5  # share of rows with an identifier that makes a reagent table…
LOW_RANK_MEASURES = 0.2  # …when at most this share of its data cells is a measurement


@dataclass
class PageTable:
    """One table found on a page."""

    page: int  # 1-based
    number: str
    caption: str
    headers: list[str]
    rows: list[list[str]]
    row_rects: list[Rect]
    rect: Rect
    low_rank: bool = False
    caption_rect: Rect | None = None
    groups: list[str] = field(default_factory=list)  # each row's group heading ("Female"), where the table has them
    abbreviations: dict[str, str] = field(default_factory=dict)  # {"VS": "vincristine sulphate"}: its page's notes

    def group_of(self, k: int) -> str:
        return self.groups[k] if k < len(self.groups) else ""


def read_tables(page: Any, found: list[Any]) -> list[PageTable]:
    """The tables on `page` that read as tables, with their captions (table_captions.py) and
    headers: those `find_tables` found, then those set as aligned text beside a caption that none
    of them took (table_text.py), from the words outside them."""
    layout = page.get_text("dict")  # read once: the captions and the superscripts both come from it
    words = words_without_marks(page, layout)
    blocks = caption_blocks(layout)
    rects = [tuple(tb.bbox) for tb in found]
    own = match(pairs_by_place(rects, [tuple(b[:4]) for b in blocks]))
    out: list[PageTable] = []
    for k, tb in enumerate(found):
        cells = [[_cell_text(words, c) for c in row.cells] for row in tb.rows]
        if _stacked(cells) or _cut_short(tb, words):  # left to the reader of aligned text
            continue
        headers: list[str] = []
        if tb.header.external and tb.header.cells:
            headers = [_cell_text(words, c) for c in tb.header.cells]
        caption = caption_of(blocks[own[k].caption]) if k in own else None
        out += _tables(page.number + 1, cells, [tuple(row.bbox) for row in tb.rows], rects[k], headers, caption)
    free = [b for b in blocks if all(tuple(b[:4]) != t.caption_rect for t in out)]
    # Not the tables read already, nor a caption's lines after its first (a caption's last line
    # above a table set under the caption before it read as that table's header); the first line
    # stays, so that a table read from its words ends at the next caption.
    taken = [t.rect for t in out] + [(b[0], b[5] + 1, b[2], b[3]) for b in blocks]
    outside = [w for w in words if not any(_inside(w, r) for r in taken)]
    found_aligned = aligned_tables(outside, [tuple(b[:4]) for b in free], page.rect.width, page.rect.height,
                                   lambda text: bool(CAPTION.match(text)))
    # The same lines read from two captions (below one, above the next) are one table.
    grids: list[Rect] = []
    pairs: list[Pair] = []
    for c, below, g in found_aligned:
        t = next((i for i, r in enumerate(grids) if _overlap(r, g.bbox) > 0.5), None)
        if t is None:
            grids.append(g.bbox)
            t = len(grids) - 1
        cap = free[c]
        pairs.append(Pair(t, c, below, g.bbox[1] - cap[3] if below else cap[1] - g.bbox[3]))
    for p in match(pairs).values():
        g = next(g for c, below, g in found_aligned if c == p.caption and below == p.above)
        out += _tables(page.number + 1, g.cells, g.row_rects, g.bbox, g.headers, caption_of(free[p.caption]))
    return out


def _heads_values(cells: list[list[str]], headers: list[str]) -> bool:
    """Lone labels over the first row of figures, under a header already read: a group's
    heading or the first line of a row's name (table_groups.py), not the caption's last words."""
    first = next((r for r in cells if sum(1 for c in r if c) >= 2), None)
    return bool(headers) and first is not None and any(MEASUREMENT.search(c) or is_number(c) for c in first[1:])


def _stacked(cells: list[list[str]]) -> bool:
    """Most values hold three numbers or more, one under another: rows that find_tables read as
    one, where no ruling line parts them ("0.54 0.53 0.57" for three rows' precision)."""
    values = [c for row in cells for c in row[1:] if c]
    stacked = [c for c in values if len(c.split()) >= 3 and all(is_number(w) for w in c.split())]
    return bool(values) and len(stacked) >= len(values) / 2


def _cut_short(tb: Any, words: list[tuple]) -> bool:
    """Ruling lines round part of a table only: most of its rows go on beside it, a row's name to
    its left or a column to its right within a few words' height (the wheat paper's ANOVA table: its
    rules box the two middle columns, so "Genotype" and the grain weight column were left out and its
    rows read "6.3 · Grains spike⁻¹: 2.1NS"). Read from its aligned text instead, the rows are whole."""
    x0, _, x1, _ = tb.bbox
    rows = [tuple(r.bbox) for r in tb.rows]
    beside = 0
    for rx0, ry0, rx1, ry1 in rows:
        near = BESIDE * (ry1 - ry0)
        on_row = [w for w in words if ry0 <= (w[1] + w[3]) / 2 <= ry1]
        beside += any(0 <= x0 - w[2] < near or 0 <= w[0] - x1 < near for w in on_row)
    return len(rows) >= MIN_ROWS and beside * 2 > len(rows)


def _inside(word: tuple, rect: Rect) -> bool:
    """The word's centre is within the rectangle."""
    x, y = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
    return rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3]


def _overlap(a: Rect, b: Rect) -> float:
    """The share of the smaller rectangle that the two have in common."""
    w, h = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / max(1e-6, min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1])))


def _tables(page_no: int, cells: list[list[str]], rects: list[Rect], bbox: Rect, headers: list[str],
            own: Caption | None) -> list[PageTable]:
    """The table, or the tables stacked under one caption: a row of column names between rows of
    values heads the rows under it (a characteristics table prints "Personnel | n", then "Case
    status | n | (%)", then "Service | Cases | % | Robotic Cases …"; read under the first header,
    "Urology … 1690" had no column). Each part is read as a table of its own, with its own columns;
    a head on two lines (a line of names with no row name over it) is read whole."""
    # Compared without the columns no row fills (a gap read as a column); read as found where whole.
    used = _filled_columns(cells)
    dense = [[r[k] if k < len(r) else "" for k in used] for r in cells]
    starts: list[int] = []  # where each later part begins (its head's first line)
    for k in range(1, len(dense) - 1):
        upper = k >= 2 and _upper_line(dense[k - 1])
        if _heads_section(dense[k - 2] if upper else dense[k - 1], dense[k], dense[k + 1]):
            starts.append(k - 1 if upper else k)
    if not starts:
        table = _table(page_no, cells, rects, bbox, headers, own)
        return [table] if table is not None else []
    cells = dense
    headers = [headers[k] if k < len(headers) else "" for k in used] if headers else []
    out: list[PageTable] = []
    for a, b in zip([0, *starts], [*starts, len(cells)]):
        part, part_rects, part_headers = cells[a:b], rects[a:b], headers
        if a:
            lines = 2 if _upper_line(part[0]) else 1
            head = [" ".join(c for c in col if c) for col in zip(*part[:lines])]
            # a header repeated under a group's label keeps the fuller names the first one gave
            part_headers = [headers[k] if k and k < len(headers) and h and _words(h) <= _words(headers[k]) else h
                            for k, h in enumerate(head)]
            part, part_rects = part[lines:], part_rects[lines:]
        keep = _filled_columns(cells[a:b])
        part = [[r[k] for k in keep] for r in part]
        part_headers = [part_headers[k] if k < len(part_headers) else "" for k in keep] if part_headers else []
        table = _table(page_no, part, part_rects, bbox, part_headers, own)
        if table is not None:
            out.append(table)
    return out


def _filled_columns(rows: list[list[str]]) -> list[int]:
    """The columns some row fills (an empty one is a gap read as a column)."""
    return [k for k in range(max(map(len, rows), default=0)) if any(k < len(r) and r[k] for r in rows)]


def _upper_line(row: list[str]) -> bool:
    """A head's first line: names over some columns, no row name, no figure ("SS", "SC" over
    "Median | IQR")."""
    filled = [c for c in row if c]
    return bool(filled) and not row[0] and all(P["name_cell"].search(c) and not _mostly_digits(c) for c in filled)


def _heads_section(above: list[str], row: list[str], below: list[str]) -> bool:
    """`row` names the columns of the rows under it: it comes after a row of values, its first cell
    and every other it fills is a name (a word or "%", never a figure), and under each of those the
    next row has a figure, in as many columns as it fills."""
    filled = [k for k, c in enumerate(row) if c]
    if len(filled) < 2 or not row[0] or not _has_figure(above) or not _has_figure(below):
        return False
    if any(not P["name_cell"].search(row[k]) or _mostly_digits(row[k]) for k in filled):
        return False
    under = [k for k in filled[1:] if k < len(below) and any(ch.isdigit() for ch in below[k])]
    return len(under) == len(filled) - 1 and sum(1 for c in below if c) <= len(filled)


def _has_figure(row: list[str]) -> bool:
    return any(is_number(c) for c in row[1:] if c)


def _mostly_digits(cell: str) -> bool:
    chars = [ch for ch in cell if ch.isalnum()]
    return bool(chars) and sum(ch.isdigit() for ch in chars) * 2 >= len(chars)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _table(page_no: int, cells: list[list[str]], rects: list[Rect], bbox: Rect, headers: list[str],
           own: Caption | None) -> PageTable | None:
    """A table from its cells and its caption: headers (one or two lines), wrapped rows joined;
    None if it does not read as a table."""
    number, caption, caption_rect = own or ("", "", None)
    while cells and sum(1 for c in cells[0] if c) < 2 and not _heads_values(cells, headers):
        cells, rects = cells[1:], rects[1:]  # the caption's last words, a lone label above the header
    if headers and (not _header_like(headers) or " ".join(headers).strip() in caption):
        headers = []  # the caption's last line taken for a header
    if not headers and cells and _header_like(cells[0]):
        headers, cells, rects = cells[0], cells[1:], rects[1:]
    # A header on two or three lines: rows of names under it whose first cell is empty ("F Ratio",
    # "(g kernel-1)"), or a row of names that fills a column the header left empty ("Architecture").
    for _ in range(3):
        if not (headers and cells and not any(is_number(c) for c in cells[0])):
            break
        fills_gap = any(not h and k < len(cells[0]) and cells[0][k] for k, h in enumerate(headers) if k > 0)
        if (cells[0][0] or not _header_like(cells[0], len(cells[0]) // 2)) and not (
                fills_gap and _header_like(cells[0], 1)):
            break
        headers = [(a + " " + b).strip() for a, b in zip(headers, cells[0])]
        cells, rects = cells[1:], rects[1:]
    cells, rects = _merge_continuations(cells, rects)
    cells, rects, groups = regroup(cells, rects)  # labels printed once for a group of rows
    # A row with one cell left is a wrapped note, not a row of values; so is a last row holding a
    # link (PLOS prints each table's own DOI under it, "https://doi.org/10.1371/journal.pone.0197919.t002",
    # which the aligned-text reader set beside a legend as a row of two cells), or a significance
    # legend. A link inside the table stays: a key-resources table gives software by its URL.
    kept = [(r, q, g) for r, q, g in zip(cells, rects, groups) if sum(1 for c in r if c) >= 2]
    while kept and (any(P["link"].search(c) for c in kept[-1][0]) or _legend(kept[-1][0])):
        kept.pop()
    cells, rects, groups = [r for r, _, _ in kept], [q for _, q, _ in kept], [g for _, _, g in kept]
    # A column empty in every row is a gap read as a column; its header's words ("C" of "Strain C",
    # cut off where the rows below leave blank) belong to the column before.
    width = max((len(r) for r in cells), default=0)
    keep = _filled_columns(cells)
    if headers:
        merged = {k: headers[k] if k < len(headers) else "" for k in keep}
        for k in range(width):
            if k not in merged and k < len(headers) and headers[k]:
                left = max((j for j in keep if j < k), default=None)
                if left is not None and headers[k] not in merged[left]:  # a group's label given to both: said once
                    merged[left] = (merged[left] + " " + headers[k]).strip()
        headers = [merged[k] for k in keep]
    cells = [[r[k] if k < len(r) else "" for k in keep] for r in cells]
    if not looks_like_table(cells):
        return None
    return PageTable(page_no, number, caption, headers, cells, rects, bbox, low_rank=is_reagent_table(cells),
                     caption_rect=caption_rect, groups=groups if any(groups) else [])


def _legend(row: list[str]) -> bool:
    """The row states a significance threshold and what it marks, and nothing else."""
    filled = [c.strip() for c in row if c.strip()]
    return any(P["threshold"].match(c) for c in filled) and all(P["threshold"].match(c) or P["significance"].match(c) for c in filled)


def _cell_text(words: list[tuple], rect: Any) -> str:
    """The words whose centre lies in `rect`, line by line (None: a cell merged into another)."""
    if rect is None:
        return ""
    inside = [w for w in words if _inside(w, tuple(rect))]
    inside.sort(key=lambda w: (w[5], w[6], w[7]))  # block, line, word: reading order
    text = " ".join(w[4] for w in inside)
    return re.sub(r"(\w)- (\w)", r"\1-\2", text).strip()  # "Alpha-" | "aminoadipate" on two lines


def is_number(cell: str) -> bool:
    return bool(P["number"].match(cell.replace("−", "-")))


def _header_like(row: list[str], least: int = 2) -> bool:
    """A row of names, not numbers: most cells filled (`least` at minimum), none a bare number."""
    filled = [c for c in row if c]
    return len(filled) >= max(least, 1, len(row) // 2) and not any(is_number(c) for c in filled)


def _merge_continuations(cells: list[list[str]], rects: list[Rect]) -> tuple[list[list[str]], list[Rect]]:
    """A row with an empty first cell and few others filled is the wrapped rest of the row above."""
    def continues(_above: list[str], row: list[str]) -> bool:
        filled = sum(1 for c in row if c)
        return bool(row) and not row[0] and 0 < filled <= len(row) // 2 and not any(is_number(c) for c in row if c)

    return fold_into_above(cells, rects, continues)


def looks_like_table(rows: list[list[str]]) -> bool:
    """Enough rows and columns, most cells filled, cells short: a table, not body text in columns."""
    if len(rows) < MIN_ROWS or max((len(r) for r in rows), default=0) < MIN_COLS:
        return False
    cells = [c for r in rows for c in r]
    filled = [c for c in cells if c]
    if len(filled) < MIN_FILLED * len(cells):
        return False
    if sum(1 for r in rows if sum(1 for c in r if c) >= 2) < MIN_ROWS:
        return False
    return statistics.median(len(c) for c in filled) <= MAX_MEDIAN_CELL


def is_reagent_table(rows: list[list[str]]) -> bool:
    """Most rows carry an identifier (catalogue number, RRID) and few cells a measurement."""
    if not rows:
        return False
    with_id = sum(1 for r in rows if any(P["identifier"].search(c) for c in r))
    data = [c for r in rows for c in r[1:] if c]
    measures = sum(1 for c in data if MEASUREMENT.search(c))
    return with_id >= LOW_RANK_ROWS * len(rows) and measures <= LOW_RANK_MEASURES * max(1, len(data))
