"""Column headers set on two lines or more (app/core/table_text.stacked_headers): a real PDF made
with PyMuPDF, a table set as aligned text, read by the importer's table reader."""

from __future__ import annotations

import pymupdf

from app.core import tables

ROWS = [["Cardiac surgery", "0.179", "0.127-0.238", "0.714", "0.394-0.915"],
        ["Thoracic surgery", "0.404", "0.291-0.453", "0.355", "0.058-0.476"],
        ["Urology", "0.145", "0.101-0.205", "0.540", "0.322-0.731"]]
MEDIAN_X = [170.0, 340.0]  # where each group's "Median" column starts; its "IQR" column 60 points on


def _two_level_table(path) -> None:
    """Group labels centred over their two columns ("Scrub nurses" over "Median | IQR"), each one
    in the whitespace between the two, then the column labels, then the rows."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 2. Teaming scores by service line, for scrub and circulating nurses.", fontsize=10)
    for x, group in zip(MEDIAN_X, ("Scrub nurses", "Circulating nurses")):
        width = pymupdf.get_text_length(group, fontsize=9)
        page.insert_text((x + 45 - width / 2, 100), group, fontsize=9)  # centred on the two columns
    page.insert_text((72, 114), "Service", fontsize=9)
    for x in MEDIAN_X:
        page.insert_text((x, 114), "Median", fontsize=9)
        page.insert_text((x + 60, 114), "IQR", fontsize=9)
    for k, row in enumerate(ROWS):
        y = 130 + 13 * k
        page.insert_text((72, y), row[0], fontsize=9)
        for x, (median, iqr) in zip(MEDIAN_X, (row[1:3], row[3:5])):
            page.insert_text((x, y), median, fontsize=9)
            page.insert_text((x + 60, y), iqr, fontsize=9)
    page.insert_textbox(pymupdf.Rect(72, 200, 523, 300), (
        "Discussion. Scores were lowest in thoracic surgery for scrub nurses and in cardiac surgery for circulating "
        "nurses, and the spread within each service line was wide."), fontsize=10)
    doc.save(path)
    doc.close()


def test_a_header_on_two_lines_names_each_column_by_its_group_and_its_label(tmp_path):
    _two_level_table(tmp_path / "teams.pdf")
    with pymupdf.open(tmp_path / "teams.pdf") as doc:
        (table,) = tables.scan_pages(doc).tables
    assert table.headers == ["Service", "Scrub nurses Median", "Scrub nurses IQR", "Circulating nurses Median",
                             "Circulating nurses IQR"]
    assert table.rows == ROWS  # the header's lines are not rows
    assert tables.row_text(table, table.rows[1]) == (
        "Table 2 (page 1) · Thoracic surgery · Scrub nurses Median: 0.404 · Scrub nurses IQR: 0.291-0.453 · "
        "Circulating nurses Median: 0.355 · Circulating nurses IQR: 0.058-0.476")


def test_a_count_with_its_magnitude_is_a_value_not_a_header():
    """S2ORC's provenance table opens "Total papers | 81.1M": read as a header of names, its rows
    became "Papers w/ Pubmed IDs · 81.1M: 21.5M (26.5%)"."""
    from app.core.table_page import is_number

    assert all(is_number(v) for v in ("81.1M", "4.7M", "120K", "12.4", "0.5k", "26.5%"))
    assert not any(is_number(v) for v in ("Total papers", "3A4", "M", "Top-20"))
