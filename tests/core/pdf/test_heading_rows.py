"""Section headings set in the paragraph's own text block, and bold faces known only by their name
(app/core/pdf/layout.py: `_heading_apart`, `_face_apart`, `_cells`; app/core/pdf/rows.py: `font_style`)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from app.core.pdf import extract as px

BODY = ("The results reported below reflect the views of the stakeholders interviewed in the "
        "department over the six months of the study.")


def _markdown(path: Path, draw, rename: dict[str, str] | None = None) -> str:
    """The second page's Markdown of a two-page PDF whose second page `draw(page)` fills; `rename`
    gives a font (by its base name) another name, as a typesetter's subset names it."""
    doc = pymupdf.open()
    first = doc.new_page()  # the body size is read from the first pages: body text there too
    first.insert_text((72, 90), "A situational analysis of care quality at a referral hospital.", fontsize=16)
    for k in range(12):
        first.insert_text((72, 140 + 12 * k), BODY[:70], fontsize=9.8, fontname="helv")
    draw(doc.new_page())
    for old, new in (rename or {}).items():
        for xref in range(1, doc.xref_length()):
            if doc.xref_get_key(xref, "BaseFont") == ("name", f"/{old}"):
                doc.xref_set_key(xref, "BaseFont", f"/{new}")
    doc.save(path)
    return list(px.iter_pages(px.open_pdf(path)))[1].markdown


def _paragraph_under(page: pymupdf.Page, heading: str, top: float, *, font: str, size: float = 10.3) -> None:
    """A heading and the paragraph under it at the body's own leading: one block for PyMuPDF."""
    page.insert_text((57, top), heading, fontsize=size, fontname=font)
    for k in range(4):
        page.insert_text((57, top + 12 * (k + 1)), BODY[k * 30:(k + 1) * 30 + 40], fontsize=9.8, fontname="helv")


def test_a_heading_in_its_paragraphs_block_is_a_section_with_a_bold_face_known_by_its_name(tmp_path):
    """BMC's "Results" is bold only by its font's name ("AdvTTaf7f9f4f.B": no bold flag) and PyMuPDF
    gives it one block with the text under it: it was read as the paragraph's first word."""
    def draw(page):
        _paragraph_under(page, "Results", 100, font="tiro")
        _paragraph_under(page, "Discussion", 220, font="tiro")

    md = _markdown(tmp_path / "bmc.pdf", draw, rename={"Times-Roman": "HBEMOE+AdvTTaf7f9f4f.B"})
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert [h.lstrip("# ") for h in headings] == ["Results", "Discussion"]
    assert "Results The results" not in md and "The results reported below" in md


def test_a_first_line_in_the_paragraphs_own_regular_face_stays_text(tmp_path):
    """Neither bold nor set in a face of its own, a short first line is the paragraph's first words."""
    md = _markdown(tmp_path / "plain.pdf", lambda page: _paragraph_under(page, "Results", 100, font="helv", size=9.8))
    assert not [line for line in md.splitlines() if line.startswith("#")]
    assert "Results The results reported below" in md


def test_a_subheading_set_in_a_face_of_its_own_is_a_section(tmp_path):
    """BMC sets its subheadings in a 9.2 pt sans over a 9.8 pt serif, fonts whose names say nothing
    of weight ("AdvTT99c4c969"): "Setting The Medical Department of …" was read as one sentence and
    the paragraphs under it had no section. A line whose face the rows under it do not use, short of
    the column's width, opening as a heading does, stands apart."""
    def draw(page):
        _paragraph_under(page, "Structured patient interviews", 100, font="tiro", size=9.2)
        _paragraph_under(page, "Table 2", 220, font="tiro", size=9.2)  # a caption's label stays with its caption

    md = _markdown(tmp_path / "sub.pdf", draw, rename={"Times-Roman": "HBEMOE+AdvTT99c4c969"})
    assert [line.lstrip("# ") for line in md.splitlines() if line.startswith("#")] == ["Structured patient interviews"]
    assert "Table 2 The results reported below" in md


def test_a_long_subheading_in_a_face_of_its_own_is_a_section_and_a_wrapped_title_is_not(tmp_path):
    """A subheading in a face of its own may take most of the column ("Study approach, sampling and
    data analysis" takes 0.76 of BMC's), as no paragraph's first line stops short of the edge. A line
    in another face whose next line opens in that face is text that wraps (a book's italic title in
    a reference entry), not a heading."""
    heading = "Study approach, sampling, recruitment and data analysis methods"  # 0.80 of the rows under it

    def draw(page):
        _paragraph_under(page, heading, 100, font="tiro", size=9.2)
        page.insert_text((57, 220), "Computer Architecture: A Hardware and", fontsize=9.8, fontname="tiro")
        page.insert_text((57, 232), "Software", fontsize=9.8, fontname="tiro")
        page.insert_text((57 + pymupdf.get_text_length("Software ", "tiro", 9.8), 232),
                         BODY[:60], fontsize=9.8, fontname="helv")
        for k in range(3):
            page.insert_text((57, 244 + 12 * k), BODY[k * 30:(k + 1) * 30 + 40], fontsize=9.8, fontname="helv")

    md = _markdown(tmp_path / "long.pdf", draw, rename={"Times-Roman": "HBEMOE+AdvTT99c4c969"})
    assert [line.lstrip("# ") for line in md.splitlines() if line.startswith("#")] == [heading], md
    assert "Computer Architecture: A Hardware and Software The results" in md


def test_a_label_in_its_own_face_over_a_tables_rows_stays_in_the_table(tmp_path):
    """Over rows of figures (a table's "Male" over its rows) a line in another face is the table's own."""
    def draw(page):
        page.insert_text((57, 100), "Male", fontsize=9.8, fontname="tiro")
        for k, (name, n) in enumerate((("Alzheimer", "35 8 15 6"), ("Other dementias", "24 1 17 35"))):
            page.insert_text((57, 112 + 12 * k), f"{name} {n}", fontsize=9.8, fontname="helv")

    md = _markdown(tmp_path / "table.pdf", draw)
    assert not [line for line in md.splitlines() if line.startswith("#")], md
    assert "Male" in md


def test_a_bold_row_of_cells_is_a_tables_header_not_a_heading(tmp_path):
    def draw(page):
        for x, cell in ((57, "Personnel"), (300, "n")):
            page.insert_text((x, 100), cell, fontsize=10.3, fontname="hebo")
        for k, (name, n) in enumerate((("Surgeons", "41"), ("Scrub nurses", "112"), ("Circulators", "97"))):
            page.insert_text((57, 112 + 12 * k), name, fontsize=9.8, fontname="helv")
            page.insert_text((300, 112 + 12 * k), n, fontsize=9.8, fontname="helv")

    md = _markdown(tmp_path / "cells.pdf", draw)
    assert not [line for line in md.splitlines() if line.startswith("#")]


def test_a_numbered_subsection_under_a_section_heading_is_a_heading_of_its_own(tmp_path):
    """"1.1 Cluster computing" set right under "1. INTRODUCTION" was joined to it as one heading."""
    def draw(page):
        page.insert_text((57, 100), "1. INTRODUCTION", fontsize=12, fontname="hebo")
        page.insert_text((57, 116), "1.1", fontsize=10.3, fontname="hebo")
        page.insert_text((80, 116), "Cluster computing", fontsize=10.3, fontname="hebo")
        for k in range(4):
            page.insert_text((57, 128 + 12 * k), BODY[k * 30:(k + 1) * 30 + 40], fontsize=9.8, fontname="helv")

    md = _markdown(tmp_path / "numbered.pdf", draw)
    headings = [line.lstrip("# ") for line in md.splitlines() if line.startswith("#")]
    assert headings == ["1. INTRODUCTION", "1.1 Cluster computing"]
