"""Letter-spaced type (titles, headings, author names) reads with its real word spaces."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.core.pdf import letter_spacing, extract as pdf_extract
from app.core.pdf.letter_spacing import Glyph, spaces_to_drop
from app.core.pdf.rows import TEXT_FLAGS
from tests.support.letter_spaced_pdfs import Spec, make_tracked_paper
from tests.support.pdf_factory import make_paper

SPECS = {
    # near MuPDF's own word rule: only the pairs kerned apart split ("Gr aphical", "Mar tins")
    "kerned apart": Spec(["Wavelet avoidance shapes cortical", "dynamics in awake mice"],
                         ["Ana Smith", "Bruno Carvalho", "Chen Li"], track=0.12),
    # wider: every letter stands alone and the word spaces look like the others
    "every letter": Spec(["Graphical models of ribosome", "stalling in neurons"],
                         ["Dora Weiss", "Felix Moreau"], track=0.22),
    # wider still: MuPDF also cuts the lines at the word spaces, as at a column's edge
    "cut at words": Spec(["Ribosome stalling triggers", "quality control"],
                         ["Gina Rossi", "Hugo Lindqvist", "Ivan Petrov"], track=0.32),
}


def _read(path: Path) -> tuple[pdf_extract.PaperMeta, str]:
    doc = pdf_extract.open_pdf(path)
    try:
        meta = pdf_extract.extract_meta(doc, path.name)
        return meta, "\n\n".join(p.markdown for p in pdf_extract.iter_pages(doc))
    finally:
        doc.close()


@pytest.mark.parametrize("case", SPECS)
def test_a_letter_spaced_title_headings_and_author_line_read_as_printed(tmp_path, case):
    spec = SPECS[case]
    path = make_tracked_paper(tmp_path / "tracked.pdf", spec)
    # The bug as MuPDF's words show it: words split inside, or every letter apart.
    with pymupdf.open(path) as doc:
        mupdf_text = " ".join(doc[0].get_text(flags=TEXT_FLAGS).split())
    assert spec.title_lines[0] not in mupdf_text

    meta, markdown = _read(path)
    assert meta.title == spec.title  # whole across its two lines, no commas, not the author line
    assert meta.authors == spec.authors
    assert f"# {spec.title}" in markdown
    for heading in ("## Graphical abstract", "## Highlights", "## Introduction", "## Discussion"):
        assert heading in markdown
    assert ", ".join(spec.authors) in markdown
    assert "The wavelet avoidance responses of cortical neurons were recorded in awake mice" in markdown


def _tc_page(path: Path, tc: float, text: str) -> Path:
    """A line drawn by one Tj with character spacing (Tc): the space glyphs are in the PDF."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 100), "x", fontname="helv", fontsize=1)  # puts /helv in the resources
    stream = f"BT /helv 18 Tf {tc} Tc 1 0 0 1 72 700 Tm ({text}) Tj ET\n".encode()
    doc.update_stream(page.get_contents()[0], stream)
    doc.save(path)
    doc.close()
    return path


def _line_texts(data: dict) -> list[str]:
    return ["".join(s["text"] for s in ln["spans"]) for b in data["blocks"] if b.get("type", 0) == 0 for ln in b["lines"]]


def test_character_spacing_with_drawn_space_glyphs_keeps_those_spaces(tmp_path):
    path = _tc_page(tmp_path / "tc.pdf", 3.5, "Graphical abstract Wavelet Avoidance")
    with pymupdf.open(path) as doc:
        assert doc[0].get_text(flags=TEXT_FLAGS).startswith("G r a p h")  # MuPDF splits every letter
        assert _line_texts(letter_spacing.page_dict(doc[0], TEXT_FLAGS)) == ["Graphical abstract Wavelet Avoidance"]


def test_normally_spaced_pages_come_out_exactly_as_mupdf_reads_them(tmp_path):
    path = make_paper(tmp_path / "plain.pdf", title="Monte Carlo Methods for Sparse Regression",
                      pages=["# Introduction\n\nWe fit a b c d models; x y z are the data. " * 6,
                             "# Methods\n\n```\nC C A C C A\nX = X + 1.0;\n```\n\nMore text here."])
    with pymupdf.open(path) as doc:
        for page in doc:
            assert letter_spacing.page_dict(page, TEXT_FLAGS) == page.get_text("dict", flags=TEXT_FLAGS)


def _glyphs(spec: list[tuple[str, float]], size: float = 10.0, advance: float = 5.0) -> list[Glyph]:
    """Glyphs from (char, gap before it in em); a space is MuPDF's, filling the gap."""
    out: list[Glyph] = []
    x = 0.0
    for c, gap in spec:
        x += gap * size
        if c == " ":
            out.append(Glyph(" ", x - gap * size, x, size))
            continue
        out.append(Glyph(c, x, x + advance, size))
        x += advance
    return out


def test_the_rule_joins_tracked_letters_and_leaves_grids_and_formulas():
    t = 0.12
    # "Gr aphical ab": tracking 0.12 em, "r"-"a" kerned 0.05 apart (a space there), a word space 0.5 em
    tracked = _glyphs([("G", 0), ("r", t), (" ", t + 0.05), ("a", 0), ("p", t), ("h", t), ("i", t), ("c", t),
                       ("a", t), ("l", t), (" ", 0.52), ("a", 0), ("b", t)])
    assert spaces_to_drop(tracked) == {2}
    # A listing's one-letter cells, a monospaced space apart (0.525 em): not tracking.
    grid = _glyphs([(c, 0.525 if i else 0) for i, c in enumerate("CCACCACCA")])
    assert letter_spacing.tracking(grid) == pytest.approx(0.525)
    assert spaces_to_drop(_glyphs([("C", 0), (" ", 0.525), ("C", 0), (" ", 0.525), ("A", 0), (" ", 0.525),
                                   ("C", 0), (" ", 0.525), ("C", 0)])) == set()
    # Italic variables of a formula, spaced unevenly: not tracking either.
    formula = _glyphs([("T", 0), (" ", 0.16), ("S", 0), ("E", 0.05), ("U", 0.1), ("U", -0.08),
                       (" ", 0.16), ("S", 0), ("T", 0.02)])
    assert spaces_to_drop(formula) == set()
    # Normal type: nothing measured as tracking, nothing dropped.
    normal = _glyphs([("w", 0), ("o", 0), ("r", 0.01), ("d", 0), (" ", 0.25), ("w", 0), ("o", 0), ("r", 0)])
    assert spaces_to_drop(normal) == set()


def test_glyphs_that_cannot_be_read_leave_mupdfs_text(tmp_path, monkeypatch):
    path = make_tracked_paper(tmp_path / "tracked.pdf", SPECS["kerned apart"])

    def unreadable(*_args, **_kwargs):
        raise RuntimeError("no glyphs here")

    monkeypatch.setattr(letter_spacing, "_line_glyphs", unreadable)
    with pymupdf.open(path) as doc:
        assert letter_spacing.page_dict(doc[0], TEXT_FLAGS) == doc[0].get_text("dict", flags=TEXT_FLAGS)
    meta, markdown = _read(path)  # imports as before: MuPDF's words
    assert meta.title and "Gr a phical abstr ac t" in markdown


def test_an_author_line_set_as_large_as_the_title_is_never_the_title(tmp_path):
    """A preprint's names above its title, in the title's type: the names are the authors."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 60), "bioRxiv preprint doi: https://doi.org/10.1101/2021.01.02.425001; "
                     "this version posted January 3, 2021.", fontsize=6, fontname="helv")
    page.insert_text((72, 100), "Maria Gonzalez, Peter Novak, Sun Li", fontsize=16, fontname="hebo")
    page.insert_text((72, 130), "Stress granules buffer translation", fontsize=16, fontname="hebo")
    page.insert_text((72, 150), "in dividing yeast cells", fontsize=16, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(72, 180, 540, 400), "Abstract\n" + "Stress granules form when cells stop "
                        "translating, and they dissolve when translation starts again. " * 5, fontsize=10, fontname="tiro")
    doc.save(tmp_path / "preprint.pdf")
    doc.close()
    meta, _ = _read(tmp_path / "preprint.pdf")
    assert meta.title == "Stress granules buffer translation in dividing yeast cells"
    assert meta.authors == ["Maria Gonzalez", "Peter Novak", "Sun Li"]
