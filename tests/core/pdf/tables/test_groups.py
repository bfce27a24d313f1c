"""Row labels printed once for a group of rows (app/core/pdf/tables/groups.py): a real PDF made with
PyMuPDF, tables set as aligned text, read by the importer's table reader; a grouped row is found on
its page by the viewer's row locator."""

from __future__ import annotations

import pymupdf
import pytest

from app.core.pdf.tables import rows as table_rows, chunks as tables
from app.core.pdf.tables.groups import regroup
from tests.support.pdf_factory import table_row_units

XS = [72, 220, 340, 440]  # the columns' left edges


def _put(page, top: float, rows: list[list[str]], xs: list[float] = XS, step: float = 13) -> None:
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row):
            if cell:
                page.insert_text((x, top + step * k), cell, fontsize=9)


def _paper(path) -> None:
    """Three tables: group headings on lines of their own; a label set between the two rows it
    names (the first cells of those rows blank); standard errors under their estimates and a
    row name wrapped onto a second line."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 3. Doubling time and yield of two strains at two temperatures.", fontsize=10)
    _put(page, 100, [["Strain", "Doubling time (min)", "Yield (g/L)"]])
    _put(page, 116, [["30 °C"], ["Wild type", "92", "1.8"], ["rpoS mutant", "118", "1.2"],
                     ["37 °C"], ["Wild type", "85", "1.6"], ["rpoS mutant", "140", "0.9"]])
    page.insert_textbox(pymupdf.Rect(72, 200, 523, 260), (
        "Discussion. The mutant grew slower at the higher temperature, while the wild type grew a little faster there."),
        fontsize=10)
    page.insert_text((72, 300), "Table 4. Top-20 and top-100 retrieval accuracy by training regime.", fontsize=10)
    _put(page, 320, [["Training", "Retriever", "Top-20", "Top-100"], ["None", "BM25", "59.1", "73.7"]])
    _put(page, 346, [["DPR", "78.4", "85.4"], ["Hybrid", "76.6", "83.8"], ["DPR", "79.4", "86.0"],
                     ["Hybrid", "78.0", "83.9"]], XS[1:])
    page.insert_text((72, 352.5), "Single", fontsize=9)  # centred on its two rows, as journals set it
    page.insert_text((72, 378.5), "Multi", fontsize=9)
    page.insert_textbox(pymupdf.Rect(72, 420, 523, 480), (
        "Discussion. Dense retrieval beat the sparse baseline whichever way it was trained."), fontsize=10)
    page.insert_text((72, 520), "Table 5. Coefficients of the dose model, standard errors in parentheses.", fontsize=10)
    _put(page, 540, [["Term", "Model 1", "Model 2"], ["(Intercept)", "1.03", "0.93"], ["", "(0.02)", "(0.05)"],
                     ["Dose", "0.17", "0.22"], ["", "(0.01)", "(0.02)"],
                     ["Systematic error (sum in", "0.27", "0.31"], ["quadrature)"]])
    page.insert_textbox(pymupdf.Rect(72, 650, 523, 720), (
        "Discussion. Both models put the effect of dose near a fifth of the baseline."), fontsize=10)
    doc.save(path)
    doc.close()


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    path = tmp_path_factory.mktemp("groups") / "groups.pdf"
    _paper(path)
    with pymupdf.open(path) as doc:
        found = {t.number: t for t in tables.scan_pages(doc).tables}
    return path, found


def _units(table) -> list[str]:
    return [tables.row_text(table, row, table.group_of(k)) for k, row in enumerate(table.rows)]


def test_a_group_heading_on_its_own_line_is_said_in_each_of_its_rows(paper):
    _, found = paper
    assert _units(found["3"]) == [
        "Table 3 (page 1) · 30 °C › Wild type · Doubling time (min): 92 · Yield (g/L): 1.8",
        "Table 3 (page 1) · 30 °C › rpoS mutant · Doubling time (min): 118 · Yield (g/L): 1.2",
        "Table 3 (page 1) · 37 °C › Wild type · Doubling time (min): 85 · Yield (g/L): 1.6",
        "Table 3 (page 1) · 37 °C › rpoS mutant · Doubling time (min): 140 · Yield (g/L): 0.9"]
    # the table's own unit, what a question comparing rows reads, carries the groups too
    (whole,) = tables.table_texts(found["3"])
    assert "37 °C › rpoS mutant · Doubling time (min): 140" in whole
    assert tables.row_name(_units(found["3"])[3]) == "rpoS mutant"  # the name a question may give


def test_a_label_set_between_its_rows_fills_their_blank_first_cells(paper):
    _, found = paper
    assert [r[:2] for r in found["4"].rows] == [["None", "BM25"], ["Single", "DPR"], ["Single", "Hybrid"],
                                                ["Multi", "DPR"], ["Multi", "Hybrid"]]
    assert _units(found["4"])[3] == "Table 4 (page 1) · Multi · Retriever: DPR · Top-20: 79.4 · Top-100: 86.0"
    # each row keeps its own rectangle (the label lines taken out of the rows take theirs along)
    multi_dpr = found["4"].row_rects[3]
    assert multi_dpr[1] < 346 + 13 * 2 < multi_dpr[3] + 2


def test_standard_errors_join_their_estimates_and_a_wrapped_name_is_whole(paper):
    _, found = paper
    assert found["5"].rows == [["(Intercept)", "1.03 (0.02)", "0.93 (0.05)"], ["Dose", "0.17 (0.01)", "0.22 (0.02)"],
                               ["Systematic error (sum in quadrature)", "0.27", "0.31"]]


def test_the_viewer_finds_a_grouped_row_on_its_line(paper):
    path, found = paper
    unit = _units(found["3"])[3]  # "37 °C" stands on the line above the row it heads
    with pymupdf.open(path) as doc:
        (rect,) = table_rows.locate_row(doc[0], unit)
    row_top = 116 + 13 * 5  # the baseline of the second "rpoS mutant" row
    assert rect[1] < row_top < rect[3] + 2
    assert rect[0] < 80 and rect[2] > 340  # from the row's name to its last value


def test_a_blank_first_cell_without_a_label_beside_it_stays_blank():
    """A zinc ion in a column of residues: no label spans those rows, so none is given."""
    cells = [["Tyr498", "OH", "2.5"], ["Lys489", "NZ", "2.8"], ["", "Zn", "2.0"], ["", "Zn", "2.5"]]
    rects = [(72, 100 + 12 * k, 400, 109 + 12 * k) for k in range(4)]
    out, _, groups = regroup(cells, rects)
    assert out == cells and groups == ["", "", "", ""]


def test_a_note_under_the_table_heads_nothing():
    cells = [["Gene", "Selected", "Sites"], ["ATG16L1", "Yes", "4"], ["Notes.", "", ""], ["AZGP1", "Yes", "9"]]
    rects = [(72, 100 + 12 * k, 400, 109 + 12 * k) for k in range(4)]
    out, _, groups = regroup(cells, rects)
    assert groups == ["", "", "", ""] and ["Notes.", "", ""] in out  # left for the reader to drop


def test_a_column_header_holding_a_colon_leaves_the_value_to_search_for():
    """ATLAS/CMS's headers read "Uncertainty in CMS results [GeV]: observed (expected) H→ZZ": the
    value is after the field's last ": ", or the viewer searches the page for header words."""
    unit = ("Table 1 (page 8) · Scale uncertainties › Electron energy scale · "
            "Uncertainty in CMS results [GeV]: observed (expected) H→ZZ: 0.12 (0.09)")
    assert table_rows.row_cells(unit) == ["Scale uncertainties", "Electron energy scale", "0.12 (0.09)"]


def test_an_abbreviated_row_name_reads_with_the_long_form_its_note_gives(tmp_path):
    """"VS · LC50: 0.28" told a reader nothing of the positive control; the table's note says
    "VS: vincristine sulphate (Std.), HF: n-hexane soluble fraction". The row unit reads with the
    long form, the viewer still finds the row by its printed name."""
    from app.core.research.text.row_columns import names_row

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 1. LC50 of the leaf extracts and the positive control in brine shrimp.", fontsize=10)
    _put(page, 100, [["Samples", "LC50 (µg/ml)"], ["VS", "0.28 ± 1.25"], ["HF", "2.17 ± 1.30"], ["CF", "2.77 ± 0.95"]],
         [72, 220])
    page.insert_textbox(pymupdf.Rect(72, 160, 523, 220), (
        "Values are mean ± SD (n = 3). VS: vincristine sulphate (Std.), HF: n-hexane soluble fraction, "
        "CF: chloroform soluble fraction."), fontsize=9)
    page.insert_textbox(pymupdf.Rect(72, 240, 523, 300), (
        "Discussion. All three fractions were toxic to the shrimp, the n-hexane fraction most of all."), fontsize=10)
    doc.save(tmp_path / "shrimp.pdf")
    doc.close()
    with pymupdf.open(tmp_path / "shrimp.pdf") as doc:
        rows = table_row_units(doc)
        assert rows[:2] == ["Table 1 (page 1) · VS = vincristine sulphate · LC50 (µg/ml): 0.28 ± 1.25",
                            "Table 1 (page 1) · HF = n-hexane soluble fraction · LC50 (µg/ml): 2.17 ± 1.30"]
        (rect,) = table_rows.locate_row(doc[0], rows[0])
        assert rect[1] < 100 + 13 < rect[3] + 2  # the VS row's line
    assert names_row("What LC50 did vincristine sulphate give?", tables.row_name(rows[0]))
    assert names_row("What LC50 did VS give?", tables.row_name(rows[0]))


def test_an_abbreviation_the_running_text_defined_in_brackets_reads_out_in_a_later_table(tmp_path):
    """A table with no note of its own: "PC" and "HF" were defined where the methods first used them,
    a page before, as "long form (ABBR)". The words are taken back only as far as their initials
    spell the abbreviation; a bracket they do not spell ("(n = 3)", "(HX)") defines nothing."""

    doc = pymupdf.open()
    methods = doc.new_page(width=595, height=842)
    methods.insert_textbox(pymupdf.Rect(72, 80, 523, 200), (
        "Methods. Shrimp were exposed to the hexane fraction (HF) and to the chloroform extract (HX), "
        "with the anticancer drug as positive control (PC), in triplicate."), fontsize=10)
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 1. LC50 of the fractions in the brine shrimp assay.", fontsize=10)
    _put(page, 100, [["Sample", "LC50 (µg/ml)"], ["PC", "0.28 ± 1.25"], ["HF", "2.17 ± 1.30"], ["HX", "2.77 ± 0.95"]],
         [72, 220])
    doc.save(tmp_path / "brackets.pdf")
    doc.close()
    with pymupdf.open(tmp_path / "brackets.pdf") as doc:
        rows = table_row_units(doc, pages=2)
    assert rows == ["Table 1 (page 2) · PC = positive control · LC50 (µg/ml): 0.28 ± 1.25",
                    "Table 1 (page 2) · HF = hexane fraction · LC50 (µg/ml): 2.17 ± 1.30",
                    "Table 1 (page 2) · HX · LC50 (µg/ml): 2.77 ± 0.95"]


def test_a_row_set_after_a_dash_is_a_part_of_the_row_above():
    """"bi-LSTM" then "– sol-gel": the bi-LSTM's score on sol-gel sentences; under a heading of its own
    ("Per action terms") a dashed row is named by the heading alone."""
    from app.core.pdf.tables.groups import regroup

    cells = [["Baseline 1", "0.54", "0.57"], ["– sol-gel", "0.57", "0.65"], ["bi-LSTM", "0.90", "0.89"],
             ["– sol-gel", "0.88", "0.87"], ["– precipitation", "0.90", "0.91"], ["Per action terms", "", ""],
             ["– mixing", "0.86", "0.80"], ["- 3 replicates", "0.1", "0.2"]]
    rects = [(72, 100 + 13 * k, 400, 110 + 13 * k) for k in range(len(cells))]
    rows, _, groups = regroup(cells, rects)
    named = [f"{g} › {r[0]}" if g else r[0] for r, g in zip(rows, groups)]
    assert named == ["Baseline 1", "Baseline 1 › sol-gel", "bi-LSTM", "bi-LSTM › sol-gel", "bi-LSTM › precipitation",
                     "Per action terms › mixing", "Per action terms › - 3 replicates"]
