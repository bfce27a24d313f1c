"""Reading tables set as aligned text from a page's words: rows from baselines, columns from the
whitespace between them. Which caption is whose: table_captions.py.

PyMuPDF's `find_tables` builds cells from ruling lines. Most journals rule a table with three
horizontal lines only (top, below the header, bottom: "booktabs"), or none, and then it finds
nothing (measured without its optional layout model: 5 of the tables on 16 caption pages of
r-papers, none on the caption pages of 4 mixed-fields papers). Here a table is read from the
words near its caption instead:

- the lines next to the caption (below it, or above it where the caption sits under its
  table), up to a gap, a line of prose or another caption;
- columns where most of those lines have whitespace at the same x (a projection profile);
- each line a row, its words put in the column of their centre.

`table_page.read_tables` takes what this returns through the same sanity filter as `find_tables`'
tables (rows, columns, filled and short cells).
"""

from __future__ import annotations

import statistics
import re
from dataclasses import dataclass, field

Rect = tuple[float, float, float, float]

PIECE_GAP = 1.2  # × the line's height: a gap this wide between words separates two cells
COLUMN_VOTE = 0.7  # share of the multi-cell lines that must be blank at an x for a column edge
MIN_COLUMN_GAP = 0.45  # × the line height: shared whitespace wider than a space makes a column edge
MAX_LINES = 60
MARGIN = 0.075  # share of the page height at its top and foot where running heads sit
PROSE_WORDS = 7  # a line of one piece with this many words, wider than half the region: prose
MAX_HEADER_LINES = 4
MAX_PACKED_LINES = 6  # a header of overlapping lines, one label of three lines beside labels of two
ALIGNED = 0.5  # × the line's height: a label starting this near one on the line above continues it
CENTRED = 0.3  # a group's middle this near its label's centre (× the column's width): the label names the group
# A measurement, not a count or a label: a decimal, a share, a ±, an estimate with its error "12 (3)".
MEASUREMENT = re.compile(r"\d[.,]\d|%|±|\d\s*\(\s*\d")
# A piece that opens with a figure, or stands for a missing one: a value, not a name.
_VALUE = re.compile(r"^[-−–<>≤≥~±+(]?\s*\.?\d|^(?:[-−–—]|n/?a|NA|N/A|ND|nd)$")


@dataclass
class Grid:
    """A table read from aligned text: cells by row, each row's rectangle, the table's, and its
    column headers where they stand on two lines or more (`stacked_headers`); else the header is
    the first row of cells."""

    cells: list[list[str]]
    row_rects: list[Rect]
    bbox: Rect
    headers: list[str] = field(default_factory=list)


@dataclass
class _Line:
    words: list[tuple]  # get_text("words") tuples, left to right
    y0: float
    y1: float

    @property
    def height(self) -> float:
        return max(1.0, self.y1 - self.y0)

    def pieces(self) -> list[tuple[float, float]]:
        """The x extents of the runs of words separated by less than a cell gap."""
        out: list[list[float]] = []
        for w in self.words:
            if out and w[0] - out[-1][1] < PIECE_GAP * self.height:
                out[-1][1] = max(out[-1][1], w[2])
            else:
                out.append([w[0], w[2]])
        return [(a, b) for a, b in out]


def lines_of(words: list[tuple], x0: float, x1: float) -> list[_Line]:
    """The page's words whose centre is within [x0, x1], grouped into lines by their height."""
    inside = sorted((w for w in words if x0 <= (w[0] + w[2]) / 2 <= x1), key=lambda w: ((w[1] + w[3]) / 2, w[0]))
    lines: list[_Line] = []
    for w in inside:
        yc = (w[1] + w[3]) / 2
        if lines and lines[-1].y0 <= yc <= lines[-1].y1:
            line = lines[-1]
            line.words.append(w)
            line.y0, line.y1 = min(line.y0, w[1]), max(line.y1, w[3])
        else:
            lines.append(_Line([w], w[1], w[3]))
    for line in lines:
        line.words.sort(key=lambda w: w[0])
    return lines


def region(lines: list[_Line], caption: Rect, below: bool, is_caption) -> list[_Line]:
    """The lines of the table beside `caption` (below it, or above it), top to bottom."""
    if below:
        seq = [ln for ln in lines if ln.y0 >= caption[3] - 1]
    else:
        seq = [ln for ln in reversed(lines) if ln.y1 <= caption[1] + 1]
    if not seq:
        return []
    width = max(ln.words[-1][2] for ln in seq) - min(ln.words[0][0] for ln in seq)
    height = statistics.median(ln.height for ln in seq)
    kept: list[_Line] = []
    edge = caption[3] if below else caption[1]
    for ln in seq[:MAX_LINES]:
        gap = ln.y0 - edge if below else edge - ln.y1
        text = " ".join(w[4] for w in ln.words)
        prose = len(ln.pieces()) == 1 and len(ln.words) >= PROSE_WORDS and ln.words[-1][2] - ln.words[0][0] > width / 2
        if gap > 2.5 * height or prose or is_caption(text):
            break
        kept.append(ln)
        edge = ln.y1 if below else ln.y0
    return kept if below else kept[::-1]


def columns(lines: list[_Line]) -> list[float]:
    """x positions between columns: where most multi-cell lines have no word.

    Blank is judged on words, not on cells, so columns of numbers set close together split
    too; a gap between two words of a cell seldom lines up over most lines, and a gap must be
    wider than a space (`MIN_COLUMN_GAP` of the line height)."""
    multi = [ln for ln in lines if len(ln.pieces()) >= 2]
    if len(multi) < 2:
        return []
    lo = int(min(ln.words[0][0] for ln in multi))
    hi = int(max(ln.words[-1][2] for ln in multi)) + 1
    need = COLUMN_VOTE * len(multi)
    min_gap = MIN_COLUMN_GAP * statistics.median(ln.height for ln in multi)
    blank_at = [0] * (hi - lo + 1)
    for ln in multi:
        covered = [False] * (hi - lo + 1)
        for w in ln.words:
            for x in range(max(lo, int(w[0])), min(hi, int(w[2]) + 1)):
                covered[x - lo] = True
        for i, c in enumerate(covered):
            blank_at[i] += not c
    pieces = [piece for ln in lines for piece in ln.pieces()]
    edges: list[float] = []
    run_start: int | None = None
    for i, count in enumerate(blank_at + [0]):
        if count >= need and i < len(blank_at) - 1:
            if run_start is None:
                run_start = i
        elif run_start is not None:
            if i - run_start >= min_gap:
                edges.append(_edge_in(lo + run_start, lo + i, pieces))
            run_start = None
    return edges


def _edge_in(a: float, b: float, pieces: list[tuple[float, float]]) -> float:
    """Where in the shared whitespace [a, b] a column edge goes: the middle of its widest stretch
    that no line's piece crosses, else its middle. A header set wider than its column's values
    ("Fold selectivity Ki (C/N)" over "2896") reaches into the whitespace the values leave; an
    edge at the whitespace's middle cut it in two and gave "(C/N)" to the next column."""
    free, at = [], a
    for p0, p1 in sorted(p for p in pieces if p[1] > a and p[0] < b):
        if p0 > at:
            free.append((at, p0))
        at = max(at, p1)
    if at < b:
        free.append((at, b))
    if not free:
        return (a + b) / 2
    x0, x1 = max(free, key=lambda f: f[1] - f[0])
    return (x0 + x1) / 2


def grid(lines: list[_Line]) -> Grid | None:
    """The lines as rows of cells split at the column edges; None without two columns."""
    edges = columns(lines)
    if not edges:
        return None
    x0 = min(ln.words[0][0] for ln in lines)
    x1 = max(ln.words[-1][2] for ln in lines)
    headers, lines = stacked_headers(lines, [x0, *edges, x1])
    cells = [_cells(ln, edges) for ln in lines]
    rects = [(x0, ln.y0, x1, ln.y1) for ln in lines]
    return Grid(cells, rects, (x0, lines[0].y0, x1, lines[-1].y1), headers)


def _cells(line: _Line, edges: list[float]) -> list[str]:
    """The line's words split at the column edges, each word in the column of its centre."""
    row: list[list[str]] = [[] for _ in range(len(edges) + 1)]
    for w in line.words:
        row[sum(1 for e in edges if (w[0] + w[2]) / 2 > e)].append(w[4])
    return [" ".join(c) for c in row]


def stacked_headers(lines: list[_Line], bounds: list[float]) -> tuple[list[str], list[_Line]]:
    """A header set on two to MAX_HEADER_LINES lines, one label per column group: each column's
    labels top to bottom ("Circulator-service Median"), and the lines under the header; ([], lines)
    where the header is one line (the first row of cells is the header then) or there is none.

    A line with fewer labels than the line under it names groups of columns: a label centred
    over the columns it names ("SS" over "Median | IQR") lies in one of them only, so it takes
    the run of columns centred under it (`_group`). Any other line (the last, or a header wrapped onto two lines)
    gives each column the words whose centre is in it. Each cell by its centre had put "SS"
    over the IQR column alone, and with the header's lines read as rows the rows got no headers.
    The header ends at the first row of values (its pieces after the first mostly open with a
    figure), or at a line of one piece left of where the values begin (a group's label:
    "High-margin SLs"); in a table of words, where its lines stop overlapping (`_packed_header`)."""
    left = min((ln.words[0][0] for ln in lines if ln.words), default=0.0)
    starts = [None if _names_categories(ln, left) else _values_from(ln) for ln in lines]
    values_from = next((x for x in starts if x is not None), None)
    if values_from is None:  # a table of words ("full text", "yes", "PubMed"): no row of values ends the header
        top, most = _packed_header(lines), MAX_PACKED_LINES
    else:
        top, most = [], MAX_HEADER_LINES
        for ln, start in zip(lines[:MAX_HEADER_LINES + 1], starts):
            pieces = ln.pieces()
            if start is not None or (len(pieces) == 1 and pieces[0][1] < values_from):
                break
            top.append(ln)
    if not 2 <= len(top) <= most or len(top) == len(lines):
        return [], lines
    spans = list(zip(bounds, bounds[1:]))
    labels: list[list[str]] = [[] for _ in spans]
    for i, ln in enumerate(top):
        pieces = ln.pieces()
        if i + 1 == len(top) or len(pieces) >= len(top[-1].pieces()):  # a label a column, or wrapped
            for col, words in enumerate(_cells(ln, bounds[1:-1])):
                if words:
                    labels[col].append(words)
            continue
        homes = [_column_of((a + b) / 2, spans) for a, b in pieces]
        above = [c for c, _ in top[i - 1].pieces()] if i else []
        for k, (a, b) in enumerate(pieces):
            # A label wrapped onto this line starts where its first line does ("Grain yield" | "spike-1"):
            # it names that one column, not the run of columns centred under it.
            wrapped = any(abs(a - c) <= ALIGNED * ln.height for c in above)
            for col in [homes[k]] if wrapped else _group(spans, homes, k, (a + b) / 2):
                labels[col].append(_text_in(ln, (a, b)))
    return [" ".join(ls) for ls in labels], lines[len(top):]


def _packed_header(lines: list[_Line]) -> list[_Line]:
    """The header of a table whose cells hold words, not figures, so that no row of values ends it:
    a header whose labels are centred in cells of two and three lines (S2ORC's "Papers w/ | body
    text", "References to | tables / figures / | equations") comes as lines that overlap each other,
    while the rows under it stand apart. The leading lines that each overlap the next, up to the
    first that does not; [] where they are fewer than two, or every line overlaps the next."""
    k = 0
    while k + 1 < len(lines) and lines[k + 1].y0 < lines[k].y1:
        k += 1
    return lines[:k + 1] if 1 <= k < len(lines) - 2 else []


def _column_of(x: float, spans: list[tuple[float, float]]) -> int:
    return next((k for k, (a, b) in enumerate(spans) if x < b), len(spans) - 1)


def _group(spans: list[tuple[float, float]], homes: list[int], k: int, centre: float) -> range:
    """The run of columns a label names: around the column under its centre, none under another
    label of its line, the widest run whose middle is within CENTRED of the home column's width
    of the label's centre (a label over five columns is as centred over the middle one alone)."""
    home = homes[k]
    others = set(homes[:k] + homes[k + 1:])
    lo = max((h for h in others if h < home), default=-1) + 1
    hi = min((h for h in others if h > home), default=len(spans))
    near = CENTRED * (spans[home][1] - spans[home][0])
    runs = [(j - i, -abs((spans[i][0] + spans[j][1]) / 2 - centre), i, j)
            for i in range(lo, home + 1) for j in range(home, hi)
            if abs((spans[i][0] + spans[j][1]) / 2 - centre) <= near or i == j == home]
    _, _, i, j = max(runs)
    return range(i, j + 1)


def _names_categories(line: _Line, left: float) -> bool:
    """A line of column labels that read as figures ("None | <10 | 10–20 | >20" cigarettes a day,
    "18–39 | 40–64 | ≥65" years): no row name at the table's left edge, and no measurement (a
    decimal or a share) among them. A row of values opens with its name, or holds measurements."""
    if not line.words or line.words[0][0] <= left + 2 * line.height:
        return False
    return not any(MEASUREMENT.search(w[4]) for w in line.words)


def _values_from(line: _Line) -> float | None:
    """Where the values of a row of values begin (the x of its first piece after the row's name):
    None where the line's pieces after its first do not mostly open with a figure."""
    pieces = line.pieces()[1:]
    figures = [p for p in pieces if _VALUE.match(_text_in(line, p))]
    return figures[0][0] if pieces and len(figures) * 2 > len(pieces) else None


def _text_in(line: _Line, piece: tuple[float, float]) -> str:
    return " ".join(w[4] for w in line.words if piece[0] <= w[0] and w[2] <= piece[1])


def aligned_tables(words: list[tuple], captions: list[Rect], page_width: float, page_height: float,
                   is_caption) -> list[tuple[int, bool, Grid]]:
    """For each caption, the tables set as aligned text below it and above it: (the caption's
    index, whether the table is below it, the table). Which is its own: table_captions.match."""
    out = []
    mid = page_width / 2
    # The running head and the page number are never rows of a table set at the page's top or foot.
    top, foot = MARGIN * page_height, (1 - MARGIN) * page_height
    words = [w for w in words if w[1] >= top and w[3] <= foot]
    for k, cap in enumerate(captions):
        # The caption's text column: a two-column page's half, or the whole width.
        x0, x1 = (0.0, mid + 5) if cap[2] < mid + 10 else (mid - 5, page_width) if cap[0] > mid - 10 else (0.0, page_width)
        lines = lines_of(words, x0, x1)
        for below in (True, False):
            found = grid(region(lines, cap, below, is_caption)) if lines else None
            if found is not None and len(found.cells) >= 2:
                out.append((k, below, found))
    return out
