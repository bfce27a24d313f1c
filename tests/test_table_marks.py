"""Superscripts in a table's cells (table_marks.py): footnote marks dropped from names, exponents kept."""

from __future__ import annotations

import pymupdf

from app.core import tables
from app.core.records import PageText
from app.core.table_marks import _resolved


def _raised(page, x: float, y: float, base: str, mark: str, size: float = 9) -> None:
    """`base` with `mark` set small and raised after it, as journals set a superscript."""
    page.insert_text((x, y), base, fontsize=size)
    page.insert_text((x + pymupdf.get_text_length(base, fontsize=size), y - 3), mark, fontsize=size * 0.7)


def test_a_footnote_mark_leaves_the_column_head_and_an_exponent_stays(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 2. Speed and error of the stereo methods on one GPU.", fontsize=10)
    page.insert_text((72, 100), "Method", fontsize=9)
    _raised(page, 200, 100, "FPS", "2")
    _raised(page, 280, 100, "Error", "3")
    _raised(page, 360, 100, "Rate (s", "-1")
    _raised(page, 440, 100, "R", "2")
    for k, row in enumerate([["Our method", "90", "6.20", "0.42", "0.91"], ["CostFilter", "24", "5.55", "0.17", "0.88"]]):
        for x, cell in zip([72, 200, 280, 360, 440], row):
            page.insert_text((x, 116 + 13 * k), cell, fontsize=9)
    page.insert_text((72, 150), "2 Frames per second. 3 Share of bad pixels.", fontsize=8)
    doc.save(tmp_path / "marks.pdf")
    doc.close()
    with pymupdf.open(tmp_path / "marks.pdf") as doc:
        read = tables.PaperTables(doc)
        read.read(PageText(1, "1", doc[0].get_text()))
        rows = [u.text for u in read.units() if u.source_type == tables.ROW_UNIT]
    assert rows[0] == "Table 2 (page 1) · Our method · FPS: 90 · Error: 6.20 · Rate (s⁻¹: 0.42 · R²: 0.91"


def test_what_a_superscript_reads_as_after_its_word():
    assert _resolved("FPS", "2") == "FPS"  # a note's number after a name
    assert _resolved("Rsymm", "∗") == "Rsymm"
    assert _resolved("", "a") == ""  # a mark standing alone
    assert _resolved("χ", "2") == "χ²"  # an exponent after a symbol
    assert _resolved("Zn", "2") == "Zn²"  # a charge after an element
    assert _resolved("kernel", "-1") == "kernel⁻¹"
    assert _resolved("Tyr", "498") is None  # a residue number: left as the words read it
    assert _resolved("2.1", "NS") is None  # a value's own mark stays
