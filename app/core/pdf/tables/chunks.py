"""Tables as evidence: each printed table becomes a caption unit and one unit per row.

The page text keeps a table as lines or short paragraphs of cells without their column
headers ("L-tryptophan 11.46 <0.0001"), and focusing kept the caption rather than the rows,
so a fact that sits only in a table row never reached the answer. Here PyMuPDF's
`find_tables` finds the table's cells, and each row is written out with its column headers:

    Table 3 (page 14) · L-tryptophan · Fold change: 11.46 · P-value: <0.0001

`find_tables` costs 0.6–1.5 s a page whatever the page holds (bench/tables.py), so it runs
only on pages with a caption line ("Table 3.", "TABLE II", "KEY RESOURCES TABLE"). What it
finds is kept only where it reads as a table (table_page.py): at least two columns and two
data rows, most cells filled and short. A reagent or key-resource table (most rows carry a
catalogue number or identifier, few carry a measurement) is kept but ranked low in retrieval
(`LOW_RANK`), since its rows match many questions' names and answer none of them.

A page whose tables cannot be read is skipped with a note; the paper imports as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from ..mupdf_guard import MUPDF
from ...records import Chunk, PageText
from ...units import (  # noqa: F401 - re-exported: the importer reads the unit format here too
    CAPTION_UNIT,
    GROUP_SEP,
    LOW_RANK,
    LOW_ROW_UNIT,
    ROW_UNIT,
    SEP,
    TABLE_TYPES,
    is_caption_line,
    is_table_unit,
    row_name,
    where,
)
from ...text.acronyms import definitions
from .abbreviations import defined_in, spelled
from .captions import CAPTION as _CAPTION
from .page import PageTable, Rect, read_tables

MAX_ROW_WORDS = 120  # a row longer than this is cut (it is a paragraph, not a row)
MAX_TABLE_CHARS = 1500  # a table unit's part (~300-400 tokens, a chunk's size): a longer table is cut


@dataclass
class TableChunk(Chunk):
    """A table's caption or one of its rows, as a content chunk with where it is printed."""

    table_no: str = ""  # "3", "S2", "II"; "" where the table has no numbered caption
    rect: Rect | None = None  # the row's (or the whole table's) rectangle on the page, PDF points


def embedding_text(source_type: str, text: str) -> str:
    """What the embedder reads of a stored unit (ingest/vectors.py): its text, but a table's caption
    unit by its caption line alone. With its rows, its vector drifted from the question's (the wheat
    paper's Table 3 fell out of the 15 passages for "which metabolite rose the most…"); the rows
    still count for full text."""
    return text.split("\n", 1)[0] if source_type == CAPTION_UNIT else text


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


# -- reading a paper -------------------------------------------------------------------
class PaperTables:
    """The tables of one PDF, read page by page as the importer reads the page's text.

    Only the small units are kept (with their spans in the page's markdown), never the
    paper's text, so a 1,000-page PDF holds no more in memory than before."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc  # pymupdf.Document
        self.scan = TableScan()
        self._units: list[TableChunk] = []
        self._defined: dict[str, str] = {}  # abbreviations the running text has defined so far ("… (VS)")

    def read(self, page: PageText) -> None:
        """Find the tables of `page` (PDF page page.page), if it has a table caption."""
        self._defined = definitions(page.markdown) | self._defined  # a first use stands
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
        self._units.extend(table_units(tables, {page.page: page.markdown}, page.label, self._defined))

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


# -- units -------------------------------------------------------------------------
def row_text(table: PageTable, row: list[str], group: str = "") -> str:
    """`Table 3 (page 14) · L-tryptophan · Fold change: 11.46 · P-value: <0.0001`: the first cell
    as the row's name, the others with their column headers; the name after the heading of the
    row's group where the table sets one ("Female › Alzheimer", table_groups.py)."""
    parts = [where(table.number, table.page)]
    for k, cell in enumerate(row):
        if k == 0:
            cell = spelled(cell, table.abbreviations)
            if group:
                cell = f"{group}{GROUP_SEP}{cell}" if cell else group
        if not cell:
            continue
        head = spelled(table.headers[k], table.abbreviations) if k < len(table.headers) else ""
        parts.append(f"{head}: {cell}" if head and k > 0 else cell)
    words = SEP.join(parts).split(" ")
    return " ".join(words[:MAX_ROW_WORDS])


def caption_text(table: PageTable) -> str:
    parts = [where(table.number, table.page), table.caption or "table"]
    # It ends on the columns or the number of rows, never on the caption's full stop: focusing
    # reads a line without its stop as running on into the lines under it (focus.runs_on), so
    # the caption is kept with its first rows.
    parts.append("columns: " + ", ".join(spelled(h, table.abbreviations) for h in table.headers if h)
                 if any(table.headers) else f"{len(table.rows)} rows")
    return SEP.join(parts)


def table_texts(table: PageTable) -> list[str]:
    """The whole table as text: the caption line, then a line per row (without the "Table 3
    (page 14)" each row unit opens with), cut into parts of at most MAX_TABLE_CHARS, each
    opening with the caption line. A question that compares rows ("which metabolite rose the
    most?") matches the caption, not a row: this unit brings the rows with it."""
    head = caption_text(table)
    parts: list[str] = []
    lines: list[str] = []
    for k, row in enumerate(table.rows):
        line = row_text(table, row, table.group_of(k)).split(SEP, 1)[1]
        if lines and len(head) + sum(len(x) + 1 for x in lines) + len(line) > MAX_TABLE_CHARS:
            parts.append("\n".join([head, *lines]))
            lines = []
        lines.append(line)
    parts.append("\n".join([head, *lines]))
    return parts


def table_units(tables: list[PageTable], page_texts: dict[int, str], label: str = "",
                defined: dict[str, str] | None = None) -> list[TableChunk]:
    """Caption and row units of the tables, with their spans where the page text has them.

    Their section is the table ("Table 3"): the evidence header then reads "page 14; Table 3",
    and an answer cites the row as Table 3, page 14.

    A row's span is where its cells stand in the page's markdown (`page_texts`, by page), so it
    sits among the page's other passages; (0, 0) where the text does not hold them in order.
    `defined`: abbreviations the paper's running text has defined up to here (acronyms.definitions)."""
    out: list[TableChunk] = []
    for t in tables:
        md = page_texts.get(t.page, "")
        t = replace(t, abbreviations=defined_in(md, [r[0] for r in t.rows if r] + t.headers, defined))
        name = f"Table {t.number}" if t.number else "Table"
        start, end = _span(md, [t.caption[:60]]) if t.caption else (0, 0)
        for text in table_texts(t):
            out.append(TableChunk("", 0, text, t.page, label or str(t.page), name, start, end,
                                  CAPTION_UNIT, table_no=t.number, rect=t.rect))
        kind = LOW_ROW_UNIT if t.low_rank else ROW_UNIT
        for k, (row, rect) in enumerate(zip(t.rows, t.row_rects)):
            start, end = _span(md, [c for c in row if c])
            out.append(TableChunk("", 0, row_text(t, row, t.group_of(k)), t.page, label or str(t.page), name, start, end,
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
