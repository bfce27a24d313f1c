"""Superscripts in a table's cells (superscripts.py): footnote marks dropped from names, exponents kept."""

from __future__ import annotations

import pymupdf

from app.core.pdf.superscripts import _resolved
from tests.support.pdf_factory import table_row_units


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
        rows = table_row_units(doc)
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


def _stacked_plus_minus(page, x: float, y: float, before: str, after: str, size: float = 10) -> None:
    """`before` ± `after`, the "±" set as a small raised "+" over a minus, as some journals set it."""
    page.insert_text((x, y), before, fontsize=size)
    at = x + pymupdf.get_text_length(before, fontsize=size)
    page.insert_text((at, y - 3), "+", fontsize=size * 0.7)
    page.insert_text((at, y), "-" + after, fontsize=size)  # the base-14 fonts have no "−"; either is read


def test_a_plus_set_over_a_minus_reads_as_one_plus_minus_in_the_text_and_in_a_table(tmp_path):
    from app.core.pdf import extract as pdf_extract

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    _stacked_plus_minus(page, 72, 80, "The double mutant bound with Ki = 2794 ", "156 nM, a drastic loss of selectivity.")
    page.insert_text((72, 120), "Table 4. Inhibition constants of 33RE.", fontsize=10)
    page.insert_text((72, 140), "Enzyme", fontsize=9)
    page.insert_text((220, 140), "Ki (nM)", fontsize=9)
    for k, (name, value, error) in enumerate([("N-domain", "11.21 ", "0.74"), ("YR/FE", "2794 ", "156")]):
        page.insert_text((72, 156 + 13 * k), name, fontsize=9)
        _stacked_plus_minus(page, 220, 156 + 13 * k, value, error, size=9)
    doc.save(tmp_path / "pm.pdf")
    doc.close()
    with pymupdf.open(tmp_path / "pm.pdf") as doc:
        text = next(pdf_extract.iter_pages(doc)).markdown
        rows = table_row_units(doc)
    assert "Ki = 2794 ±156 nM" in text and "+-" not in text
    assert rows == ["Table 4 (page 1) · N-domain · Ki (nM): 11.21 ±0.74", "Table 4 (page 1) · YR/FE · Ki (nM): 2794 ±156"]
