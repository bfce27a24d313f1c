"""Tables as evidence: each printed table becomes a caption unit and one unit per row.

The page text keeps a table as lines or short paragraphs of cells without their column
headers ("L-tryptophan 11.46 <0.0001"), and focusing kept the caption rather than the rows,
so a fact that sits only in a table row never reached the answer. Here PyMuPDF's
`find_tables` finds the table's cells, and each row is written out with its column headers:

    Table 3 (page 14) · L-tryptophan · Fold change: 11.46 · P-value: <0.0001

Cell text is read from the page's words placed by their centres, not from `Table.extract()`,
which splits a decimal number whose point sits on another baseline ("1146\\n.").

`find_tables` costs 0.6–1.5 s a page whatever the page holds (bench/tables.py), so it runs
only on pages with a caption line ("Table 3.", "TABLE II", "KEY RESOURCES TABLE"). What it
finds is kept only where it reads as a table (`looks_like_table`): at least two columns and two
data rows, most cells filled and short. A reagent or key-resource table (most rows carry a
catalogue number or identifier, few carry a measurement) is kept but ranked low in retrieval
(`LOW_RANK`), since its rows match many questions' names and answer none of them.

A page whose tables cannot be read is skipped with a note; the paper imports as before.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

from .mupdf_guard import MUPDF
from .records import Chunk, PageText
from .table_text import CAPTION as _CAPTION
from .table_text import aligned_tables, caption_blocks, nearest_caption

# Source types of the units in `content_chunks` (running text is "content").
CAPTION_UNIT = "table"
ROW_UNIT = "table_row"
LOW_ROW_UNIT = "table_row_low"  # a reagent / key-resource table's row
TABLE_TYPES = (CAPTION_UNIT, ROW_UNIT, LOW_ROW_UNIT)
# A low-ranked row's fused score is multiplied by this in retrieval: below any running passage
# that matches as well, yet still found when nothing else matches (a question about a reagent).
LOW_RANK = 0.5

SEP = " · "
# A row unit opens with where it is; focusing and the viewer tell a row unit by it.
_UNIT_HEAD = re.compile(r"^Table(?: [\w.-]+)? \(page \d+\)" + re.escape(SEP))
_NUMBER = re.compile(r"^[<>≤≥~±+\-−–]?\s*\d[\d,]*(?:\.\d+)?(?:\s*(?:±|\+/-)\s*\d[\d,]*(?:\.\d+)?)?\s*%?[a-z*†‡]{0,3}$")
_MEASURE = re.compile(r"\d\.\d|±|%|\d\s*\(\s*\d")  # a decimal, a ±, a share, "12 (3)": a measurement
# A catalogue number or identifier: letters and digits mixed in one token of five or more
# ("ab6556", "SCR_002798", "Cat#4370S", "RRID:AB_2313567"), not a decimal number.
_IDENTIFIER = re.compile(r"(?<![\w.])(?=[\w#:/-]*\d)(?=[\w#:/-]*[A-Za-z])[A-Za-z0-9][\w#:/-]{4,}(?![\w.])")

MIN_COLS = 2
MIN_ROWS = 2
MIN_FILLED = 0.5  # share of cells with text
MAX_MEDIAN_CELL = 40  # characters: two-column body text read as a table has line-long cells
MAX_ROW_WORDS = 120  # a row longer than this is cut (it is a paragraph, not a row)
MAX_TABLE_CHARS = 1500  # a table unit's part (~300-400 tokens, a chunk's size): a longer table is cut
LOW_RANK_ROWS = 0.5  # share of rows with an identifier that makes a reagent table…
LOW_RANK_MEASURES = 0.2  # …when at most this share of its data cells is a measurement

Rect = tuple[float, float, float, float]


@dataclass
class TableChunk(Chunk):
    """A table's caption or one of its rows, as a content chunk with where it is printed."""

    table_no: str = ""  # "3", "S2", "II"; "" where the table has no numbered caption
    rect: Rect | None = None  # the row's (or the whole table's) rectangle on the page, PDF points
    # What the embedder reads where it is not the text: a table's unit by its caption line alone.
    # With its rows, its vector drifted from the question's (the wheat paper's Table 3 fell out of
    # the 15 passages for "which metabolite rose the most…"); the rows still count for full text.
    embed_text: str = ""


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


@dataclass
class TableScan:
    """The tables of a paper, and the pages where reading them failed (a note, never a failure)."""

    tables: list[PageTable] = field(default_factory=list)
    pages_searched: int = 0
    found: int = 0  # tables find_tables returned, before the sanity filter
    failed_pages: list[int] = field(default_factory=list)

    def note(self) -> str:
        if not self.failed_pages:
            return ""
        pages = ", ".join(map(str, self.failed_pages[:8])) + ("…" if len(self.failed_pages) > 8 else "")
        return f"tables on page {pages} could not be read; their text is indexed as running text"


def has_caption(text: str) -> bool:
    """The page's text has a table caption line: the pages worth `find_tables`."""
    return bool(_CAPTION.search(text))


def is_table_unit(text: str) -> bool:
    """A table's unit (tables.py): a row (focusing keeps it whole, as one sentence) or the table
    (caption and rows: each line one sentence)."""
    return bool(_UNIT_HEAD.match(text))


def row_name(line: str) -> str:
    """A row's name (its first cell) in a row unit or a table unit's line; "" where it is empty."""
    fields = line.split(SEP)
    if fields and _UNIT_HEAD.match(fields[0] + SEP):
        fields = fields[1:]
    return fields[0].strip() if fields and ": " not in fields[0] else ""


def where(number: str, page: int) -> str:
    return f"Table {number} (page {page})" if number else f"Table (page {page})"


# -- reading a paper -------------------------------------------------------------------
class PaperTables:
    """The tables of one PDF, read page by page as the importer reads the page's text.

    Only the small units are kept (with their spans in the page's markdown), never the
    paper's text, so a 1,000-page PDF holds no more in memory than before."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc  # pymupdf.Document
        self.scan = TableScan()
        self._units: list[TableChunk] = []

    def read(self, page: PageText) -> None:
        """Find the tables of `page` (PDF page page.page), if it has a table caption."""
        with MUPDF:
            try:
                pdf_page = self.doc.load_page(page.page - 1)
                if not has_caption(pdf_page.get_text("text")):
                    return
                self.scan.pages_searched += 1
                found = _find_tables(pdf_page)
                self.scan.found += len(found)
                tables = read_tables(pdf_page, found)
            except Exception:  # noqa: BLE001 - MuPDF's surprises on one page: a note, the paper imports as before
                self.scan.failed_pages.append(page.page)
                return
        self.scan.tables.extend(tables)
        self._units.extend(table_units(tables, {page.page: page.markdown}, page.label))

    def units(self) -> list[TableChunk]:
        """The caption and row units of the pages read so far."""
        return self._units

    def note(self) -> str:
        return self.scan.note()


def _find_tables(page: Any) -> list[Any]:
    """`find_tables` by its ruling lines, without the optional layout model: the model (in the
    pymupdf-layout package where it is installed) took 2-3 s a page against 0.3-0.5 s, and the
    tables it adds are read from their aligned text here anyway (bench/tables.py --scan)."""
    try:
        return page.find_tables(use_layout=False).tables
    except TypeError:  # a PyMuPDF before the layout model: no such option, the same method
        return page.find_tables().tables


def scan_pages(doc: Any, *, skip: Iterable[int] = ()) -> TableScan:
    """The tables of `doc` (a pymupdf.Document) on pages with a table caption (bench/tables.py).

    `skip`: 0-based pages not to read (a damaged file's lost pages)."""
    tables = PaperTables(doc)
    for pno in range(doc.page_count):
        if pno not in set(skip):
            tables.read(PageText(pno + 1, str(pno + 1), ""))
    return tables.scan


def read_tables(page: Any, found: list[Any]) -> list[PageTable]:
    """The tables on `page` that read as tables, with captions and headers: those `find_tables`
    found, then those set as aligned text beside a caption that none of them took (table_text.py)."""
    words = page.get_text("words")
    blocks = caption_blocks(page)
    out: list[PageTable] = []
    used: set[Rect] = set()
    for tb in found:
        cells = [[_cell_text(words, c) for c in row.cells] for row in tb.rows]
        headers: list[str] = []
        if tb.header.external and tb.header.cells:
            headers = [_cell_text(words, c) for c in tb.header.cells]
        table = _table(page.number + 1, cells, [tuple(row.bbox) for row in tb.rows], tuple(tb.bbox), headers, blocks)
        if table is not None:
            out.append(table)
            used.add(table.caption_rect)
    captions = [tuple(b[:4]) for b in blocks if tuple(b[:4]) not in used]
    for cap, g in aligned_tables(words, captions, page.rect.width, page.rect.height, lambda text: bool(_CAPTION.match(text))):
        table = _table(page.number + 1, g.cells, g.row_rects, g.bbox, [], [b for b in blocks if tuple(b[:4]) == cap])
        if table is not None:
            out.append(table)
    return out


def _table(page_no: int, cells: list[list[str]], rects: list[Rect], bbox: Rect, headers: list[str],
           blocks: list[tuple]) -> PageTable | None:
    """A table from its cells: caption, headers (one or two lines), wrapped rows joined; None if
    it does not read as a table."""
    number, caption, caption_rect = nearest_caption(blocks, bbox)
    while cells and sum(1 for c in cells[0] if c) < 2:  # the caption's last words, a lone label above the header
        cells, rects = cells[1:], rects[1:]
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
    # A row with one cell is a group's label or a wrapped note, not a row of values.
    kept = [(r, q) for r, q in zip(cells, rects) if sum(1 for c in r if c) >= 2]
    cells, rects = [r for r, _ in kept], [q for _, q in kept]
    # A column empty in every row is a gap read as a column; its header's words ("C" of "Strain C",
    # cut off where the rows below leave blank) belong to the column before.
    width = max((len(r) for r in cells), default=0)
    keep = [k for k in range(width) if any(k < len(r) and r[k] for r in cells)]
    if headers:
        merged = {k: headers[k] if k < len(headers) else "" for k in keep}
        for k in range(width):
            if k not in merged and k < len(headers) and headers[k]:
                left = max((j for j in keep if j < k), default=None)
                if left is not None:
                    merged[left] = (merged[left] + " " + headers[k]).strip()
        headers = [merged[k] for k in keep]
    cells = [[r[k] if k < len(r) else "" for k in keep] for r in cells]
    if not looks_like_table(cells):
        return None
    return PageTable(page_no, number, caption, headers, cells, rects, bbox, low_rank=is_reagent_table(cells),
                     caption_rect=caption_rect)


def _cell_text(words: list[tuple], rect: Any) -> str:
    """The words whose centre lies in `rect`, line by line (None: a cell merged into another)."""
    if rect is None:
        return ""
    x0, y0, x1, y1 = rect
    inside = [w for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1]
    inside.sort(key=lambda w: (w[5], w[6], w[7]))  # block, line, word: reading order
    text = " ".join(w[4] for w in inside)
    return re.sub(r"(\w)- (\w)", r"\1-\2", text).strip()  # "Alpha-" | "aminoadipate" on two lines


def is_number(cell: str) -> bool:
    return bool(_NUMBER.match(cell.replace("−", "-")))


def _header_like(row: list[str], least: int = 2) -> bool:
    """A row of names, not numbers: most cells filled (`least` at minimum), none a bare number."""
    filled = [c for c in row if c]
    return len(filled) >= max(least, 1, len(row) // 2) and not any(is_number(c) for c in filled)


def _merge_continuations(cells: list[list[str]], rects: list[Rect]) -> tuple[list[list[str]], list[Rect]]:
    """A row with an empty first cell and few others filled is the wrapped rest of the row above."""
    out: list[list[str]] = []
    out_rects: list[Rect] = []
    for row, rect in zip(cells, rects):
        filled = sum(1 for c in row if c)
        if out and row and not row[0] and 0 < filled <= len(row) // 2 and not any(is_number(c) for c in row if c):
            prev = out[-1]
            out[-1] = [(a + " " + b).strip() for a, b in zip(prev, row)]
            p = out_rects[-1]
            out_rects[-1] = (min(p[0], rect[0]), min(p[1], rect[1]), max(p[2], rect[2]), max(p[3], rect[3]))
        elif filled:
            out.append(row)
            out_rects.append(rect)
    return out, out_rects


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
    with_id = sum(1 for r in rows if any(_IDENTIFIER.search(c) for c in r))
    data = [c for r in rows for c in r[1:] if c]
    measures = sum(1 for c in data if _MEASURE.search(c))
    return with_id >= LOW_RANK_ROWS * len(rows) and measures <= LOW_RANK_MEASURES * max(1, len(data))


# -- units -------------------------------------------------------------------------
def row_text(table: PageTable, row: list[str]) -> str:
    """`Table 3 (page 14) · L-tryptophan · Fold change: 11.46 · P-value: <0.0001`: the first cell
    as the row's name, the others with their column headers."""
    parts = [where(table.number, table.page)]
    for k, cell in enumerate(row):
        if not cell:
            continue
        head = table.headers[k] if k < len(table.headers) else ""
        parts.append(f"{head}: {cell}" if head and k > 0 else cell)
    words = SEP.join(parts).split(" ")
    return " ".join(words[:MAX_ROW_WORDS])


def caption_text(table: PageTable) -> str:
    parts = [where(table.number, table.page), table.caption or "table"]
    # It ends on the columns or the number of rows, never on the caption's full stop: focusing
    # reads a line without its stop as running on into the lines under it (focus.runs_on), so
    # the caption is kept with its first rows.
    parts.append("columns: " + ", ".join(h for h in table.headers if h) if any(table.headers) else f"{len(table.rows)} rows")
    return SEP.join(parts)


def table_texts(table: PageTable) -> list[str]:
    """The whole table as text: the caption line, then a line per row (without the "Table 3
    (page 14)" each row unit opens with), cut into parts of at most MAX_TABLE_CHARS, each
    opening with the caption line. A question that compares rows ("which metabolite rose the
    most?") matches the caption, not a row: this unit brings the rows with it."""
    head = caption_text(table)
    parts: list[str] = []
    lines: list[str] = []
    for row in table.rows:
        line = row_text(table, row).split(SEP, 1)[1]
        if lines and len(head) + sum(len(x) + 1 for x in lines) + len(line) > MAX_TABLE_CHARS:
            parts.append("\n".join([head, *lines]))
            lines = []
        lines.append(line)
    parts.append("\n".join([head, *lines]))
    return parts


def table_units(tables: list[PageTable], page_texts: dict[int, str], label: str = "") -> list[TableChunk]:
    """Caption and row units of the tables, with their spans where the page text has them.

    Their section is the table ("Table 3"): the evidence header then reads "page 14; Table 3",
    and an answer cites the row as Table 3, page 14.

    A row's span is where its cells stand in the page's markdown (`page_texts`, by page), so it
    sits among the page's other passages; (0, 0) where the text does not hold them in order."""
    out: list[TableChunk] = []
    for t in tables:
        md = page_texts.get(t.page, "")
        name = f"Table {t.number}" if t.number else "Table"
        start, end = _span(md, [t.caption[:60]]) if t.caption else (0, 0)
        for text in table_texts(t):
            out.append(TableChunk("", 0, text, t.page, label or str(t.page), name, start, end,
                                  CAPTION_UNIT, table_no=t.number, rect=t.rect, embed_text=text.split("\n", 1)[0]))
        kind = LOW_ROW_UNIT if t.low_rank else ROW_UNIT
        for row, rect in zip(t.rows, t.row_rects):
            start, end = _span(md, [c for c in row if c])
            out.append(TableChunk("", 0, row_text(t, row), t.page, label or str(t.page), name, start, end,
                                  kind, table_no=t.number, rect=rect))
    return out


def _span(md: str, cells: list[str]) -> tuple[int, int]:
    """Where the cells stand in `md`, in order and close together; (0, 0) if they do not."""
    if not md or not cells:
        return 0, 0
    pos = md.find(cells[0])
    while pos >= 0:
        end, ok = pos + len(cells[0]), True
        for cell in cells[1:]:
            nxt = md.find(cell, end)
            if nxt < 0 or nxt - end > 40:
                ok = False
                break
            end = nxt + len(cell)
        if ok:
            return pos, end
        pos = md.find(cells[0], pos + 1)
    return 0, 0
