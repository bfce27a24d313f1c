"""Which caption is whose (app/core/pdf/tables/captions.py): real PDFs made with PyMuPDF, read by the
importer's table reader, where a page's captions sit under their tables."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from app.core.pdf.tables import chunks as tables
from app.core.pdf.tables.captions import Pair, gap, match, pairs_by_place

GROWTH = [["Medium", "Strain A", "Strain B"], ["Glucose", "0.42", "0.57"], ["Galactose", "0.31", "0.44"],
          ["Glycerol", "0.12", "0.09"]]
YIELD = [["Medium", "Yield (g/L)", "Cell size (µm)"], ["Glucose", "1.84", "4.16"], ["Galactose", "2.47", "3.93"],
         ["Glycerol", "0.96", "5.62"]]


def _rows_at(page: pymupdf.Page, top: float, rows: list[list[str]], *, ruled: bool, columns: bool = False) -> float:
    """The rows from `top`, every row ruled (find_tables reads them) or only the header (booktabs,
    with the column edges ruled too where `columns`); returns the table's foot."""
    cols = [72.0, 250.0, 400.0, 523.0]
    foot = top + 18 * len(rows)
    for k, row in enumerate(rows):
        for x, cell in zip(cols, row):
            page.insert_text((x + 4, top + 18 * k + 13), cell, fontsize=10)
    if ruled:
        for k in range(len(rows) + 1):
            page.draw_line((cols[0], top + 18 * k), (cols[-1], top + 18 * k))
        for x in cols:
            page.draw_line((x, top), (x, foot))
    else:
        for y in (top, top + 18, foot):
            page.draw_line((cols[0], y), (cols[-1], y))
        for x in cols if columns else ():
            page.draw_line((x, top), (x, foot))
    return foot


def _captions_under_tables(path: Path, *, ruled: bool) -> Path:
    """Two tables, each with its caption under it, the second table just under the first's
    caption: the first table's own caption is below it, the second's caption further away."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 60, 523, 110), (
        "Results. We grew three strains on three carbon sources and measured growth, yield and cell size."),
        fontsize=10)
    foot = _rows_at(page, 130, GROWTH, ruled=ruled)
    page.insert_text((72, foot + 16), "Table 1: Growth rates (1/h) of the strains on three carbon sources.", fontsize=10)
    foot = _rows_at(page, foot + 34, YIELD, ruled=ruled)
    page.insert_text((72, foot + 16), "Table 2: Biomass yield and cell size of strain A on each source.", fontsize=10)
    page.insert_textbox(pymupdf.Rect(72, foot + 40, 523, foot + 120), (
        "Discussion. Growth on glycerol was slow for every strain, and the cells grown on it were the largest."),
        fontsize=10)
    doc.save(path)
    doc.close()
    return path


def _read(path: Path) -> dict[str, list[list[str]]]:
    with pymupdf.open(path) as doc:
        found = tables.scan_pages(doc).tables
    assert len({t.number for t in found}) == len(found), "a table number given twice"
    return {t.number: t.rows for t in found}


def test_tables_with_their_captions_underneath_keep_their_own_numbers(tmp_path):
    """Set as aligned text (ruled only above and below the header): before, Table 1's caption was
    the nearest caption above the second table, so that table was read twice, as Table 1 and as
    Table 2, and the first table was lost."""
    by_number = _read(_captions_under_tables(tmp_path / "booktabs.pdf", ruled=False))
    assert by_number["1"] == GROWTH[1:]
    assert by_number["2"] == YIELD[1:]


def test_ruled_tables_with_their_captions_underneath_keep_their_own_numbers(tmp_path):
    """Ruled tables (find_tables reads their cells): each takes the caption under it."""
    by_number = _read(_captions_under_tables(tmp_path / "ruled.pdf", ruled=True))
    assert by_number["1"] == GROWTH[1:]
    assert by_number["2"] == YIELD[1:]


def test_a_page_with_captions_above_its_tables_takes_them_above():
    """Caption 1 above table A, caption 2 between A and B: B's own caption is the one above it,
    though A's foot is as near to caption 2 as B's head."""
    table_a, table_b = (72, 120, 523, 200), (72, 240, 523, 320)
    caption_1, caption_2 = (72, 100, 400, 112), (72, 216, 400, 228)
    own = match(pairs_by_place([table_a, table_b], [caption_1, caption_2]))
    assert {t: p.caption for t, p in own.items()} == {0: 0, 1: 1}
    assert all(p.above for p in own.values())


def test_a_lone_caption_is_given_to_one_table_only():
    pairs = [Pair(0, 0, True, 12.0), Pair(1, 0, False, 10.0)]
    assert {t: p.caption for t, p in match(pairs).items()} == {1: 0}
    assert gap((72, 300, 523, 400), (300, 280, 500, 290), above=True) == 10  # in the table's column
    assert gap((72, 300, 300, 400), (320, 280, 500, 290), above=True) is None  # the other column's caption


def test_rows_ruled_as_one_are_read_from_their_words(tmp_path):
    """Column edges ruled, and rows only between groups: find_tables reads each group as one row
    whose cells stack the values ("0.42 0.31 0.12"); the table is read from its aligned words."""
    rows = [["Medium", "Strain A", "Strain B"], ["Glucose", "0.42", "0.57"], ["Galactose", "0.31", "0.44"],
            ["Glycerol", "0.12", "0.09"], ["Sucrose", "0.39", "0.51"], ["Maltose", "0.36", "0.48"],
            ["Ethanol", "0.08", "0.06"]]
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    foot = _rows_at(page, 130, rows, ruled=False, columns=True)
    page.draw_line((72, 130 + 18 * 4), (523, 130 + 18 * 4))  # between the sugars and the rest
    page.insert_text((72, foot + 16), "Table 1: Growth rates (1/h) of the strains on six carbon sources.", fontsize=10)
    doc.save(tmp_path / "stacked.pdf")
    doc.close()
    with pymupdf.open(tmp_path / "stacked.pdf") as doc:
        (ruled,) = tables._find_tables(doc[0])
        assert ruled.row_count == 3  # the header, and each group of three rows as one
    assert _read(tmp_path / "stacked.pdf")["1"] == rows[1:]
