"""Column headers set on two lines or more (app/core/table_text.stacked_headers): a real PDF made
with PyMuPDF, a table set as aligned text, read by the importer's table reader."""

from __future__ import annotations

import pymupdf

from app.core.pdf.tables import chunks as tables

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
    from app.core.pdf.tables.page import is_number

    assert all(is_number(v) for v in ("81.1M", "4.7M", "120K", "12.4", "0.5k", "26.5%"))
    assert not any(is_number(v) for v in ("Total papers", "3A4", "M", "Top-20"))


def _rows_and_read(page, doc, path, rows, xs, top: float, step: float, fontsize: float, discussion: str):
    """Write `rows` (a name at x 72, values at `xs`) from `top`, a discussion paragraph under the
    table, save the PDF and read its one table back."""
    for k, row in enumerate(rows):
        y = top + step * k
        page.insert_text((72, y), row[0], fontsize=fontsize)
        for x, value in zip(xs, row[1:]):
            page.insert_text((x, y), value, fontsize=fontsize)
    page.insert_textbox(pymupdf.Rect(72, 200, 523, 300), discussion, fontsize=10)
    doc.save(path)
    doc.close()
    with pymupdf.open(path) as read:
        (table,) = tables.scan_pages(read).tables
    return table


def test_a_group_label_on_several_lines_names_its_columns_on_each_line(tmp_path):
    """A group label wrapped onto two lines, each line centred over the group's two columns
    ("Uncertainty in ATLAS" | "results [GeV]" over "H→γγ | H→ZZ"): each of its lines names both
    columns. Judged against the next line alone, the first line (as many labels as the second)
    was read a word a column, and the column names came out of order."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 1. Systematic uncertainties on the mass, in two experiments.", fontsize=10)
    groups = [(200.0, "Uncertainty in ATLAS", "results [GeV]"), (320.0, "Uncertainty in CMS", "results [GeV]")]
    for x, first, second in groups:  # x: the group's first column; its second is 50 points on
        middle = (x + x + 50 + pymupdf.get_text_length("Leptons", fontsize=8)) / 2
        for y, label in ((100, first), (110, second)):
            page.insert_text((middle - pymupdf.get_text_length(label, fontsize=8) / 2, y), label, fontsize=8)
        page.insert_text((x, 122), "Photons", fontsize=8)
        page.insert_text((x + 50, 122), "Leptons", fontsize=8)
    rows = [("Energy scale", "0.14", "0.03", "0.10", "0.12"), ("Resolution", "0.03", "0.01", "0.05", "0.04"),
            ("Vertex finding", "0.05", "0.02", "0.01", "0.02"), ("Background model", "0.04", "0.01", "0.02", "0.01"),
            ("Luminosity", "0.01", "0.01", "0.01", "0.01"), ("Theory", "0.02", "0.01", "0.02", "0.01")]
    table = _rows_and_read(page, doc, tmp_path / "mass.pdf", rows, (200, 250, 320, 370), 136, 11, 8, (
        "Discussion. The energy scale dominates the uncertainty in both experiments, for photons and for leptons alike."))
    assert table.headers[1:] == ["Uncertainty in ATLAS results [GeV] Photons", "Uncertainty in ATLAS results [GeV] Leptons",
                                 "Uncertainty in CMS results [GeV] Photons", "Uncertainty in CMS results [GeV] Leptons"]
    assert table.rows[0] == list(rows[0])


def test_column_labels_that_read_as_figures_are_a_header_line_not_a_row(tmp_path):
    """"No. of cigarettes daily" over "None | <10 | 10–20 | >20": the second line's labels read as
    figures, and it was taken for a row of values, so the columns were named by the words of the
    first line one by one ("No. of: 91 · cigarettes: 7"). A line with no row name at the table's
    left edge and no measurement in it is a line of the header."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 1. Smoking and diagnosis in a case-control study.", fontsize=10)
    xs = [200, 250, 300, 350]
    page.insert_text((240, 98), "No. of cigarettes daily", fontsize=9)
    for x, label in zip(xs, ["None", "<10", "10-20", ">20"]):
        page.insert_text((x, 110), label, fontsize=9)
    rows = [["Alzheimer", "91", "7", "15", "21"], ["Other dementias", "55", "7", "16", "9"],
            ["Other diagnoses", "80", "3", "25", "9"], ["Controls", "120", "14", "30", "12"]]
    table = _rows_and_read(page, doc, tmp_path / "smoking.pdf", rows, xs, 124, 12, 9, (
        "Discussion. Heavy smoking was no more common among the patients with Alzheimer's disease than among the "
        "controls."))
    assert table.headers[1:] == ["No. of cigarettes daily None", "No. of cigarettes daily <10",
                                 "No. of cigarettes daily 10-20", "No. of cigarettes daily >20"]
    assert table.rows == rows


WORD_ROWS = [["S2ORC (PDF-parse)", "8.1M", "full text", "yes", "multi"],
             ["PubMed Central (OA)", "2.6M", "full text", "yes", "bio, med"],
             ["AAN", "25k", "full text", "no", "comp ling"],
             ["RefSeer", "1.0M", "snippets", "no", "multi"]]
WORD_XS = [200.0, 270.0, 350.0, 430.0]


def test_a_header_centred_in_cells_of_two_and_three_lines_heads_a_table_of_words(tmp_path):
    """S2ORC's corpus table: its cells hold words ("full text", "yes"), so no row of figures ends the
    header, and each label is centred in its cell, one of three lines beside ones of two and one, so
    the header comes as five lines that overlap each other. Read as rows, they gave "Corpus · tables
    / figures /" and rows named "Papers w/: 8.1M"."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 1. A comparison of academic text corpora: papers, citations and links.", fontsize=10)
    labels = {72.0: ["Corpus"], WORD_XS[0]: ["Papers w/", "body text"], WORD_XS[1]: ["Citation", "contexts"],
              WORD_XS[2]: ["References to", "tables / figures /", "equations"], WORD_XS[3]: ["Academic", "disciplines"]}
    middle, step = 108.0, 10.6  # each label's lines centred on the header's middle, a line apart
    for x, lines in labels.items():
        for k, text in enumerate(lines):
            page.insert_text((x, middle + step * (k - (len(lines) - 1) / 2)), text, fontsize=7)
    table = _rows_and_read(page, doc, tmp_path / "corpora.pdf", WORD_ROWS, WORD_XS, top=132, step=11, fontsize=7,
                           discussion="Discussion. Few corpora link their papers to a citation graph.")
    assert table.headers == ["Corpus", "Papers w/ body text", "Citation contexts", "References to tables / figures / equations",
                             "Academic disciplines"]
    assert table.rows == WORD_ROWS
    assert tables.row_text(table, table.rows[1]) == (
        "Table 1 (page 1) · PubMed Central (OA) · Papers w/ body text: 2.6M · Citation contexts: full text · "
        "References to tables / figures / equations: yes · Academic disciplines: bio, med")


def test_a_table_ruled_round_its_middle_columns_is_read_whole_with_its_wrapped_labels(tmp_path):
    """The wheat paper's ANOVA table: ruling lines box its two middle columns only, and find_tables
    read that box as the table, leaving out the factors' names and the last column ("6.3 · Grains
    spike⁻¹: 2.1NS"). A header label wrapped onto a second line ("Grain yield" | "spike-1") names its
    own column, not the run of columns centred under it."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((200, 600), "Table 2. Fixed effects ANOVA results for grain yield, grains per spike and grain weight.",
                     fontsize=8)
    xs = [200.0, 281.0, 363.0, 455.0]
    for x, label in zip(xs, ("Factor", "Grain yield", "Grains spike-1", "Individual grain weight")):
        page.insert_text((x, 624), label, fontsize=8)
    page.insert_text((xs[1], 633), "spike-1", fontsize=8)
    for x in xs[1:]:
        page.insert_text((x, 646), "F Ratio", fontsize=8)
    rows = [["Genotype", "6.3", "2.1NS", "9.2"], ["Replication", "0.5NS", "0.4NS", "1.8NS"]]
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row):
            page.insert_text((x, 658 + 12 * k), cell, fontsize=8)
    box = pymupdf.Rect(278, 614, 453, 673)  # the rules round the two middle columns
    for y in (614, 637, 649, 673):
        page.draw_line((box.x0, y), (box.x1, y), width=0.5)
    for x in (box.x0, 361, box.x1):
        page.draw_line((x, box.y0), (x, box.y1), width=0.5)
    page.insert_textbox(pymupdf.Rect(200, 700, 560, 760), (
        "Discussion. The genotypes differed in grain yield per spike and in individual grain weight, "
        "but not in the number of grains per spike."), fontsize=9)
    doc.save(tmp_path / "anova.pdf")
    doc.close()
    with pymupdf.open(tmp_path / "anova.pdf") as read:
        (table,) = tables.scan_pages(read).tables
    assert table.headers == ["Factor", "Grain yield spike-1 F Ratio", "Grains spike-1 F Ratio",
                             "Individual grain weight F Ratio"]
    assert table.rows == rows


def _stacked_parts_table(path) -> None:
    """A cohort table as clinical papers set it: one caption, three parts, each opening with its own
    line of column names ("Sex | n | (%)", then "Site | Patients | Mean age | Deaths")."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 1. Characteristics of the cohort by sex and by recruiting site.", fontsize=10)
    lines = [["Sex", "n", "(%)"], ["Female", "412", "(54.2)"], ["Male", "348", "(45.8)"],
             ["Site", "Patients", "Mean age", "Deaths"], ["Lagos", "251", "47.3", "19"],
             ["Ibadan", "297", "51.8", "23"], ["Kano", "212", "44.1", "11"]]
    for k, line in enumerate(lines):
        y = 100 + 13 * k
        for x, cell in zip((72, 190, 270, 350), line):
            page.insert_text((x, y), cell, fontsize=9)
    page.insert_textbox(pymupdf.Rect(72, 220, 523, 320), (
        "Results. Deaths were fewest in Kano, where patients were youngest, and most frequent in Ibadan."), fontsize=10)
    doc.save(path)
    doc.close()


def test_a_line_of_column_names_between_rows_heads_the_rows_under_it(tmp_path):
    """Read under the first part's names, "Kano" had no column for its deaths (the witmer paper's
    Table 1 left its robotic cases so)."""
    _stacked_parts_table(tmp_path / "cohort.pdf")
    with pymupdf.open(tmp_path / "cohort.pdf") as doc:
        read = tables.scan_pages(doc).tables
    assert [t.headers for t in read] == [["Sex", "n", "(%)"], ["Site", "Patients", "Mean age", "Deaths"]]
    assert read[1].rows[-1] == ["Kano", "212", "44.1", "11"] and read[0].number == read[1].number == "1"
    assert tables.row_text(read[1], read[1].rows[-1]) == (
        "Table 1 (page 1) · Kano · Patients: 212 · Mean age: 44.1 · Deaths: 11")
