"""Tables as evidence (app/core/pdf/tables/chunks.py): a real PDF with a ruled table, through PyMuPDF's
find_tables, the real importer, LanceDB and the funnel."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.core.pdf.tables import page as table_page, rows as table_rows, chunks as tables
from app.core.records import Evidence
from app.core.research.evidence.focus import focus_evidence, split_sentences
from app.core.research.answer.key_sentences import quotable
from app.core.research.text.question_reading import asks

CAPTION = "Table 2. Growth of three yeast strains at 30 °C in minimal medium."
HEADERS = ["Strain", "Growth rate (1/h)", "Yield (g/L)", "Cell size (µm)"]
ROWS = [
    ["Strain A", "0.42 ± 0.03", "1.8", "4.1"],
    ["Strain B", "0.57 ± 0.05", "2.4", "-0.3"],
    ["Strain C", "0.21 ± 0.02", "0.9", "5.6"],
]
TABLE_TOP = 250.0
ROW_HEIGHT = 20.0
COLUMNS = [72.0, 200.0, 330.0, 430.0, 523.0]  # x of the ruled column edges


def _row_rect(k: int) -> tuple[float, float, float, float]:
    """The rectangle of data row k as drawn (row 0 is the header)."""
    top = TABLE_TOP + ROW_HEIGHT * (k + 1)
    return (COLUMNS[0], top, COLUMNS[-1], top + ROW_HEIGHT)


def make_table_paper(path: Path) -> Path:
    """Page 1: title and prose. Page 2: prose, a caption, and a ruled table of numbers."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 90), "Yeast Growth under Mild Heat", fontsize=20, fontname="hebo")
    page.insert_text((72, 120), "Ana Ruiz", fontsize=11)
    page.insert_textbox(pymupdf.Rect(72, 150, 523, 400), (
        "Abstract. We grew three laboratory strains of baker's yeast in minimal medium and measured "
        "how fast each grew and how much biomass it yielded at a mildly raised temperature."),
        fontsize=10)
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 80, 523, 200), (
        "Results. The strains differed in growth and in yield; the measurements are given in "
        "Table 2 below. Strain C grew slowest of the three."), fontsize=10)
    page.insert_text((72, TABLE_TOP - 12), CAPTION, fontsize=10)
    bottom = TABLE_TOP + ROW_HEIGHT * (len(ROWS) + 1)
    for k in range(len(ROWS) + 2):
        y = TABLE_TOP + ROW_HEIGHT * k
        page.draw_line((COLUMNS[0], y), (COLUMNS[-1], y))
    for x in COLUMNS:
        page.draw_line((x, TABLE_TOP), (x, bottom))
    for k, row in enumerate([HEADERS, *ROWS]):
        for x, cell in zip(COLUMNS, row):
            page.insert_text((x + 4, TABLE_TOP + ROW_HEIGHT * k + 14), cell, fontsize=10)
    page.insert_textbox(pymupdf.Rect(72, bottom + 30, 523, bottom + 120), (
        "Discussion. Growth and yield went together: the strain that grew fastest also yielded most."),
        fontsize=10)
    doc.set_metadata({"title": "Yeast Growth under Mild Heat", "author": "Ana Ruiz"})
    doc.save(path)
    doc.close()
    return path


ROW_B = "Table 2 (page 2) · Strain B · Growth rate (1/h): 0.57 ± 0.05 · Yield (g/L): 2.4 · Cell size (µm): -0.3"


def test_find_tables_reads_the_rows_with_their_headers(tmp_path):
    pdf = make_table_paper(tmp_path / "yeast.pdf")
    with pymupdf.open(pdf) as doc:
        scan = tables.scan_pages(doc)
    assert scan.pages_searched == 1  # page 1 has no caption: find_tables never runs there
    (table,) = scan.tables
    assert (table.page, table.number, table.caption) == (2, "2", CAPTION)
    assert table.headers == HEADERS
    assert table.rows == ROWS
    assert not table.low_rank
    assert tables.row_text(table, table.rows[1]) == ROW_B  # decimals, ±, units and the minus kept
    for rect, k in zip(table.row_rects, range(len(ROWS))):
        assert rect == pytest.approx(_row_rect(k), abs=1.5)


def test_the_viewer_finds_the_row_from_its_units_text(tmp_path):
    from app.ui.reader.highlight import locate_passage

    pdf = make_table_paper(tmp_path / "yeast.pdf")
    with pymupdf.open(pdf) as doc:
        assert table_rows.locate_row(doc[1], "Strain B grew at 0.57 per hour.") == []  # not a row unit
    found = locate_passage(pdf, 2, ROW_B)
    assert found.method == "row"
    (rect,) = found.rects
    line = locate_passage(pdf, 2, ROW_B.split(" · ", 1)[1])  # a row line of the table's unit, quoted alone
    assert line.rects == found.rects
    x0, y0, x1, y1 = _row_rect(1)
    assert y0 - 1 <= rect[1] and rect[3] <= y1 + 1  # on row B's line, not row A's or C's
    assert rect[0] < COLUMNS[1] and rect[2] > COLUMNS[3]  # from the first cell to the last


def test_a_claim_citing_the_table_unit_quotes_and_highlights_its_rows_not_the_caption(tmp_path):
    """The caption shares the table's words with every claim about it; seen outscoring the row
    that held both of the claim's figures, so the viewer highlighted the caption."""
    from app.core.research.check.support_rules import quote_for
    from app.ui.reader.highlight import locate_passage

    pdf = make_table_paper(tmp_path / "yeast.pdf")
    with pymupdf.open(pdf) as doc:
        (table,) = tables.scan_pages(doc).tables
    (text,) = tables.table_texts(table)
    unit = Evidence(1, "p", 2, "2", "Table 2", text, 0.5)
    claim = "In minimal medium at 30 °C, the growth of the yeast strain B was 0.57 per hour, with a yield of 2.4 g/L."
    quote = quote_for(claim, unit, "How fast did strain B grow in minimal medium?")
    assert quote == ROW_B.split(" · ", 1)[1]
    shown = locate_passage(pdf, 2, quote)
    assert shown.method == "row" and shown.rects == locate_passage(pdf, 2, ROW_B).rects
    both = quote_for("Strain B grew at 0.57 per hour and strain C at 0.21.", unit)  # two rows: one a line
    assert both.split("\n") == text.split("\n")[2:4]
    (b, c) = locate_passage(pdf, 2, both).rects
    assert b[1] < c[1] and _row_rect(2)[1] - 1 <= c[1] and c[3] <= _row_rect(2)[3] + 1  # rows B and C
    # no row shares a word or a figure with the claim: the caption line stands in
    assert quote_for("Baker's yeast was grown.", unit).startswith("Table 2 (page 2) · ")


def test_body_text_in_columns_and_sparse_grids_are_not_tables():
    prose = [["The strains were grown in minimal medium at thirty degrees for two days",
              "while the controls were kept at twenty-five degrees in the same incubator"]] * 4
    assert not table_page.looks_like_table(prose)
    assert not table_page.looks_like_table([["a", ""], ["", ""], ["", "b"]])  # mostly empty
    assert not table_page.looks_like_table([["Strain A", "0.42"]])  # one row
    assert table_page.looks_like_table(ROWS)


def test_a_key_resources_table_is_ranked_low_and_a_data_table_is_not():
    reagents = [
        ["Rabbit anti-GFP", "Abcam", "Cat#ab6556; RRID:AB_305564"],
        ["Mouse anti-actin", "Sigma-Aldrich", "Cat#A5441"],
        ["DAPI", "Thermo Fisher", "Cat#D1306"],
        ["ImageJ", "NIH", "SCR_003070"],
    ]
    assert table_page.looks_like_table(reagents)
    assert table_page.is_reagent_table(reagents)
    assert not table_page.is_reagent_table(ROWS)
    genes = [["TP53", "2.31 ± 0.4", "<0.001"], ["BRCA1", "1.12 ± 0.2", "0.03"], ["MYC5", "0.87", "0.4"]]
    assert not table_page.is_reagent_table(genes)  # gene names look like codes, but the cells are measurements


def test_focusing_keeps_a_row_unit_whole_as_one_sentence():
    e = Evidence(1, "p", 2, "2", "Table 2", ROW_B, 0.5)
    (only,) = split_sentences(e)
    assert only.text == ROW_B
    # the row's name, in a row unit and in a line of the table's unit; none where the first cell was empty
    assert tables.row_name(ROW_B) == tables.row_name(ROW_B.split(" · ", 1)[1]) == "Strain B"
    assert tables.row_name("Table 5 (page 6) · Atom: Zn2 + · 33RE: OAH") == ""


def test_the_table_unit_brings_its_rows_each_a_sentence_for_focusing(tmp_path):
    """A question that compares rows ("which strain grew fastest?") matches the caption: the
    table's own unit holds the caption and every row, and focusing reads a row per line."""
    pdf = make_table_paper(tmp_path / "yeast.pdf")
    with pymupdf.open(pdf) as doc:
        (table,) = tables.scan_pages(doc).tables
    (text,) = tables.table_texts(table)
    caption, *rows = text.split("\n")
    assert caption == f"Table 2 (page 2) · {CAPTION} · columns: " + ", ".join(HEADERS)
    assert rows[1] == ROW_B.split(" · ", 1)[1]
    units = split_sentences(Evidence(1, "p", 2, "2", "Table 2", text, 0.5))
    assert [u.text for u in units] == [caption, *rows]
    assert all(text[u.start:u.end] == u.text for u in units)  # spans within the passage, as for prose
    many = table_page.PageTable(2, "2", CAPTION, HEADERS, ROWS * 30, [(0, 0, 1, 1)] * 90, (0, 0, 1, 1))
    parts = tables.table_texts(many)
    assert len(parts) > 1 and all(p.startswith("Table 2 (page 2) · ") and len(p) <= tables.MAX_TABLE_CHARS for p in parts)
    assert sum(p.count("\n") for p in parts) == 90  # every row once


def test_a_row_is_indexed_and_found_as_evidence(make_desk, tmp_path):
    """The real importer writes the rows as content chunks with page, table and rectangle; a
    question about a row's value gets that row as evidence, and focusing keeps it whole."""
    folder = tmp_path / "in"
    folder.mkdir()
    make_table_paper(folder / "yeast.pdf")
    desk = make_desk(tmp_path / "lib")
    try:
        report = desk.add([folder])
        assert report.ok
        table = desk.library.chunks_table("content_chunks")
        rows = table.to_arrow().to_pylist()
        units = [r for r in rows if r["source_type"] in tables.TABLE_TYPES]
        assert [r["source_type"] for r in units] == ["table", "table_row", "table_row", "table_row"]
        assert units[0]["text"].split("\n")[2] == ROW_B.split(" · ", 1)[1]  # the table's unit holds its rows
        row_b = next(r for r in units if r["source_type"] == "table_row" and "Strain B" in r["text"])
        assert row_b["text"] == ROW_B
        assert (row_b["page"], row_b["table_no"], row_b["section"]) == (2, "2", "Table 2")
        assert row_b["rect"] == pytest.approx(_row_rect(1), abs=1.5)
        assert all(r["rect"] is None and r["table_no"] is None for r in rows if r["source_type"] == "content")

        question = "What yield in g/L did strain B reach?"
        result = desk.research(question, evidence_only=True)
        texts = [e.text for e in result.evidence]
        assert ROW_B in texts
        funnel = desk.funnel(None)
        qvec = funnel.embedder.embed_one(question)
        focused = focus_evidence(question, qvec, result.evidence, funnel.embedder, token_budget=800)
    finally:
        desk.close()
    kept = [s.text for e in focused for s in e.sentences]
    assert ROW_B in kept  # the whole row, one sentence
    # …and a key passage: the row is quotable as printed, first of the rows for a figure asked
    candidates = [c.text for c in quotable([], focused, asks(question))]
    assert ROW_B in candidates
    assert [c for c in candidates if tables.is_table_unit(c)][0] == ROW_B


def test_a_library_indexed_before_tables_gets_the_columns_and_loses_nothing(make_desk, tmp_path, fact_pdfs):
    """An index written without the table columns: opening it adds them as nulls, rows kept."""
    import lancedb
    import pyarrow as pa

    desk = make_desk(tmp_path / "lib")
    try:
        assert desk.add([fact_pdfs]).ok
        before = desk.library.count_chunks("content_chunks")
    finally:
        desk.close()
    db = lancedb.connect(str(tmp_path / "lib" / "index"))
    old = db.open_table("content_chunks").to_arrow().drop_columns(["table_no", "rect"])
    db.drop_table("content_chunks")
    db.create_table("content_chunks", old)
    assert "rect" not in db.open_table("content_chunks").schema.names

    desk = make_desk(tmp_path / "lib")
    try:
        table = desk.library.chunks_table("content_chunks")
        assert {"table_no", "rect"} <= set(table.schema.names)
        assert desk.library.count_chunks("content_chunks") == before
        result = desk.research("When do kestrels depart from alpine valleys in autumn?", evidence_only=True)
        assert any("14 September" in e.text for e in result.evidence)
        extra = tmp_path / "more"
        extra.mkdir()
        make_table_paper(extra / "yeast.pdf")
        assert desk.add([extra]).ok  # new rows, with their tables, into the migrated table
        rows = desk.library.chunks_table("content_chunks").to_arrow()
        assert isinstance(rows.schema.field("rect").type, pa.ListType)
        assert "Table 2 (page 2) · Strain B" in " ".join(t for t in rows.column("text").to_pylist())
    finally:
        desk.close()


def test_a_pdf_whose_tables_cannot_be_read_imports_as_before_with_a_note(make_desk, tmp_path, monkeypatch):
    folder = tmp_path / "in"
    folder.mkdir()
    make_table_paper(folder / "yeast.pdf")

    def broken(self, *args, **kwargs):
        raise RuntimeError("find_tables failed")

    monkeypatch.setattr(pymupdf.Page, "find_tables", broken)
    desk = make_desk(tmp_path / "lib")
    try:
        report = desk.add([folder])
        assert report.ok
        (outcome,) = report.outcomes
        assert outcome.status == "added"
        assert "tables on page 2 could not be read" in outcome.message
        rows = desk.library.chunks_table("content_chunks").to_arrow().to_pylist()
        assert rows and all(r["source_type"] == "content" for r in rows)
        assert any("Strain B" in r["text"] for r in rows)  # the table's text, as running text
    finally:
        desk.close()


def make_booktabs_paper(path: Path) -> Path:
    """A table ruled only above, below its header and at its foot, its caption beneath it, the
    page's running head above it: find_tables' ruling lines make no cells of it."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 40), "Journal of Yeast Studies · Ruiz", fontsize=9)  # the running head
    cols = [72, 250, 340, 430]
    rows = [["Medium", "Strain A", "Strain B", "Strain C"], ["Glucose", "0.42", "0.57", "0.21"],
            ["Galactose", "0.31", "0.44", "0.18"], ["Glycerol", "0.12", "0.09", "0.05"]]
    top = 90.0
    for k, row in enumerate(rows):
        for x, cell in zip(cols, row):
            page.insert_text((x, top + 16 + 14 * k + (4 if k else 0)), cell, fontsize=10)
    for y in (top, top + 22, top + 22 + 14 * len(rows)):
        page.draw_line((72, y), (523, y))
    page.insert_text((72, top + 22 + 14 * len(rows) + 18), "Table 4: Growth rates (1/h) of the strains on three carbon sources.",
                     fontsize=10)
    page.insert_textbox(pymupdf.Rect(72, 260, 523, 400), (
        "All three strains grew fastest on glucose. The differences between carbon sources were larger "
        "than those between strains, and growth on glycerol was slow for every strain we tested here."),
        fontsize=10)
    doc.save(path)
    doc.close()
    return path


def test_a_table_set_as_aligned_text_is_read_from_its_words(tmp_path):
    pdf = make_booktabs_paper(tmp_path / "carbon.pdf")
    with pymupdf.open(pdf) as doc:
        scan = tables.scan_pages(doc)
    (table,) = scan.tables
    assert (table.number, table.headers) == ("4", ["Medium", "Strain A", "Strain B", "Strain C"])
    assert table.rows == [["Glucose", "0.42", "0.57", "0.21"], ["Galactose", "0.31", "0.44", "0.18"],
                          ["Glycerol", "0.12", "0.09", "0.05"]]  # not the running head, not the prose below
    assert tables.row_text(table, table.rows[1]) == "Table 4 (page 1) · Galactose · Strain A: 0.31 · Strain B: 0.44 · Strain C: 0.18"


def test_a_header_wider_than_its_column_stays_whole(tmp_path):
    """A header reaching into the whitespace its values leave ("Fold change (heat/control)" over
    "2.4") keeps its last words: the column edge goes where no line's words cross it."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 2: Metabolites whose levels changed the most under heat stress, against the control plants.",
                     fontsize=10)  # a caption across the page: the table is not one column's
    _aligned_rows(page, [["Metabolite", "Fold change (heat/control)", "P value"], ["Tryptophan", "11.46", "0.0001"],
                         ["Pipecolate", "3.27", "0.002"], ["Glycine", "0.41", "0.03"]], (72, 200, 340), 104)
    (table,) = _saved_tables(doc, tmp_path / "heat.pdf")
    assert table.headers == ["Metabolite", "Fold change (heat/control)", "P value"]
    assert tables.row_text(table, table.rows[0]).endswith("Tryptophan · Fold change (heat/control): 11.46 · P value: 0.0001")


def _passage(number: int, paper: str, section: str, text: str, score: float) -> Evidence:
    return Evidence(number, paper, 4, "4", section, text, score, char_start=0, char_end=len(text))


NAMED = "What doubling time did strain B have at 37 °C?"
UNNAMED = "How fast did the yeast strains double at 37 °C?"


@pytest.mark.parametrize("question, share, in_first", [(NAMED, None, "B"), (NAMED, 2.0, "B"), (UNNAMED, 2.0, None)])
def test_the_best_row_follows_the_best_passage_in_the_first_turn(fact_library, monkeypatch, question, share, in_first):
    """A row scores below the prose that names the same things, so the first turn, which read the
    best passage alone, never read the row that holds the figure asked for. The best row now
    follows the best passage, and the best passage's window gives up the row's tokens, so both
    fit the first turn. A row the question names ("strain B") is that row, though another scores
    higher and whatever it scores; a row scoring below ROW_SHARE of the best sentence is not."""
    from app.core.research.evidence import focus
    from app.core.research.evidence.first_turn_size import split_first

    if share is not None:
        monkeypatch.setattr(focus, "ROW_SHARE", share)
    prose = " ".join([
        "We measured how fast each yeast strain doubled at 37 °C in minimal medium.",
        "The second strain carries the heat-shock deletion and was expected to grow slowest.",
        *[f"Culture {k} was sampled every twenty minutes for optical density at 600 nm." for k in range(20)],
        "The doubling times of all strains are listed in Table 3."])
    other = " ".join(f"Plate {k} was incubated overnight before the colonies were counted." for k in range(8))
    rows = {name: f"Table 3 (page 4) · Strain {name} · Doubling time at 37 °C (min): {t} · Lag (h): {lag}"
            for name, t, lag in (("B", 94, 2.1), ("C", 71, 1.4))}
    evidence = [_passage(1, "yeast", "Results", prose, 0.8), _passage(2, "yeast", "Methods", other, 0.6),
                _passage(3, "yeast", "Table 3", rows["C"], 0.45), _passage(4, "yeast", "Table 3", rows["B"], 0.44)]
    embedder = fact_library.embedder()
    count = lambda s: max(1, len(s) // 4)  # the focus step's default count, used for the first turn too
    focused = focus.focus_evidence(question, embedder.embed_one(question), evidence, embedder,
                                   token_budget=800, first_tokens=300)
    assert focused[0].section == "Results"
    first, rest = split_first(focused, 300, lambda e: count(e.focus_text) + focus.HEADER_TOKENS)
    assert [e.focus_text for e in first[1:]] == ([rows[in_first]] if in_first else [])
    assert all(r in [e.focus_text for e in focused] for r in rows.values())  # every row stays evidence


def test_a_link_under_the_table_is_its_note_not_a_row_and_a_link_inside_stays(tmp_path):
    """PLOS prints each table's own DOI under it; set beside a legend, the aligned-text reader read
    the two as a row ("NS, not significant · F Ratio: https://doi.org/…"). A key-resources table
    gives software by its URL: that row stays."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 2: Fixed effects ANOVA of the yield traits of the wheat genotypes under heat stress.",
                     fontsize=10)
    _aligned_rows(page, [["Source", "F Ratio", "P value"], ["Genotype", "6.3", "0.001"], ["Treatment", "27.9", "0.0001"],
                         ["Replication", "0.5", "0.61"],
                         ["NS, not significant", "https://doi.org/10.1371/journal.pone.0197919.t002", ""]], (72, 220, 400), 104)
    page.insert_text((72, 300), "Table 3: Software used in this study and where it is found.", fontsize=10)
    _aligned_rows(page, [["Software", "Source", "Identifier"], ["ImageJ", "https://imagej.nih.gov/ij/", "RRID:SCR_003070"],
                         ["R 4.2", "R Core Team", "RRID:SCR_001905"], ["Prism 9", "GraphPad", "RRID:SCR_002798"]],
                  (72, 220, 400), 324)
    anova, tools = _saved_tables(doc, tmp_path / "plos.pdf")
    assert [r[0] for r in anova.rows] == ["Genotype", "Treatment", "Replication"]
    assert not any("doi.org" in c for r in anova.rows for c in r)
    assert ["ImageJ", "https://imagej.nih.gov/ij/", "RRID:SCR_003070"] in tools.rows


def test_a_significance_legend_under_the_table_is_its_note_not_a_row(tmp_path):
    """A legend set on the table's last line ("significant at · P < 0.001") was read as a row; a row
    whose cells say "significant" beside a figure of its own stays."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Table 2: Fixed effects ANOVA of the yield traits of the wheat genotypes under heat stress.",
                     fontsize=10)
    _aligned_rows(page, [["Source", "F Ratio", "Effect"], ["Genotype", "6.3", "significant"], ["Treatment", "27.9", "significant"],
                         ["Replication", "0.5", "not significant"], ["significant at", "P < 0.001", ""]], (72, 220, 400), 104)
    (anova,) = _saved_tables(doc, tmp_path / "legend.pdf")
    assert [r[0] for r in anova.rows] == ["Genotype", "Treatment", "Replication"]
    assert ["Replication", "0.5", "not significant"] in anova.rows


def _aligned_rows(page: pymupdf.Page, rows: list[list[str]], xs: tuple[float, ...], top: float) -> None:
    """A table set as aligned text: each row's cells on one baseline at the columns' `xs`."""
    for k, row in enumerate(rows):
        for x, cell in zip(xs, row):
            page.insert_text((x, top + 14 * k), cell, fontsize=10)


def _saved_tables(doc: pymupdf.Document, path: Path) -> list:
    """The tables read from `doc` once it is saved to `path` and opened again."""
    doc.save(path)
    doc.close()
    with pymupdf.open(path) as saved:
        return tables.scan_pages(saved).tables


QA_CAPTION = ("Table 4 (page 8) · Table 4: End-to-end QA (Exact Match) Accuracy. The first block of results are "
              "copied from their cited papers. REALMWiki and REALMNews are the same model but pretrained on Wikipedia "
              "and CC-News, respectively. Single and Multi denote that our retriever is trained using individual or "
              "combined training datasets. · columns: Training, Model, NQ, TriviaQA, WQ, TREC, SQuAD")
QA_ROWS = [f"Single · Model: {name} · NQ: {nq} · TriviaQA: {tqa} · WQ: {wq} · TREC: {trec} · SQuAD: {sq}"
           for name, nq, tqa, wq, trec, sq in (("BM25+BERT", "26.5", "47.1", "17.7", "21.3", "33.2"),
                                              ("ORQA", "33.3", "45.0", "36.4", "30.1", "20.2"),
                                              ("HardEM", "28.1", "50.9", "-", "-", "-"),
                                              ("PathRetriever", "32.6", "-", "-", "-", "56.5"),
                                              ("REALMWiki", "39.2", "-", "40.2", "46.8", "-"),
                                              ("REALMNews", "40.4", "-", "40.7", "42.9", "-"),
                                              ("BM25", "32.6", "52.4", "29.9", "24.9", "38.1"))]


def test_a_table_unit_keeps_the_row_asked_about_beside_a_long_caption(fact_library):
    """A table unit (caption line, then rows) was kept as a run around its best line, the caption,
    which took most of the window: asked for REALMNews on WebQuestions, the model read the rows
    printed under the caption. The best-scoring row is kept first, the caption beside it where it
    fits, then the table's first rows (row_columns.table_window)."""
    from app.core.research.evidence import focus
    from app.core.research.text.row_columns import table_window

    text = "\n".join([QA_CAPTION, *QA_ROWS])
    table = Evidence(2, "dpr", 8, "8", "Table 4", text, 0.7, char_start=0, char_end=len(text))
    prose = _passage(1, "dpr", "6.1 End-to-end QA", "We plug different retrievers into an end-to-end QA system "
                     "and compare exact-match accuracy on five datasets with earlier retrievers.", 0.8)
    question = "What exact-match accuracy on WebQuestions does the REALMNews model reach in the end-to-end QA comparison?"
    embedder = fact_library.embedder()
    focused = focus.focus_evidence(question, embedder.embed_one(question), [prose, table], embedder,
                                   token_budget=800, first_tokens=300)
    kept = next(e.focus_text for e in focused if e.section == "Table 4")
    assert "REALMNews · NQ: 40.4" in kept and "WQ: 40.7" in kept
    # The question names the row (by its Model cell, row_columns.row_label), so it is read beside the
    # prose in the first turn, alone; the caption beside the row is table_window's, below.
    assert kept.startswith("Single · Model: REALMNews")
    # Where the caption and the row do not both fit, the row stays; the kept lines are in page order.
    lines = focus.split_sentences(table)
    count = lambda s: max(1, len(s) // 4)
    room = count(QA_ROWS[5]) + count(QA_ROWS[0]) + 2
    for u in lines:
        u.score = 1.0 if u.order == 6 else 0.9 if u.order == 0 else 0.1
    assert table_window(lines, room, count) == ([1, 6], room)
    assert table_window(lines, room + count(QA_CAPTION) + 1, count) == ([0, 1, 6], room + count(QA_CAPTION) + 1)
    assert table_window(lines, 5, count) == ([], 0)
    # A row the question names comes before the best-scoring one (REALMWiki, scored 0.1 here).
    assert table_window(lines, room, count, named=[5]) == ([1, 5], room)
