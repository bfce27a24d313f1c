"""Metadata read from the page (app.core.metadata) and user corrections that survive re-import.

Every PDF is built here with PyMuPDF to mimic a publisher's first page: superscript
affiliation markers and footnote symbols in the author block, a two-column journal page with
a journal line and a DOI in the header, "Summary" instead of "Abstract", producer junk in the
PDF's info dictionary.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pymupdf
import pytest

from app.core import corrections, pdf_extract
from app.core.metadata import extract_meta
from app.core.metadata.authors import names_in
from app.core.metadata.text import fix_accents
from app.core.records import PaperMeta

W, H = 595, 842
BODY = ("The method is evaluated on three data sets and compared with the usual estimators. "
        "It is faster and more accurate in every setting that was tried, and the code is public. ") * 3


def spans(page: pymupdf.Page, x: float, y: float, parts: list[tuple[str, float, str, float]]) -> float:
    """Write (text, size, font, rise) pieces one after another on one baseline; returns the end x."""
    for text, size, font, rise in parts:
        page.insert_text((x, y - rise), text, fontsize=size, fontname=font)
        x += pymupdf.get_text_length(text, fontname=font, fontsize=size)
    return x


def paragraph(page: pymupdf.Page, rect: pymupdf.Rect, text: str, size: float = 9.5, font: str = "helv") -> None:
    assert page.insert_textbox(rect, text, fontsize=size, fontname=font) >= 0, "text did not fit"


def save(doc: pymupdf.Document, path: Path, info: dict[str, str] | None = None) -> Path:
    if info:
        doc.set_metadata(info)
    doc.save(path)
    doc.close()
    return path


def author_block_paper(path: Path, info: dict[str, str] | None = None) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((60, 90), "Estimating Widget Lifetimes", fontsize=20, fontname="hebo")
    page.insert_text((60, 116), "from Sparse Field Records", fontsize=20, fontname="hebo")
    spans(page, 60, 150, [
        ("Maria Schmidt", 11, "helv", 0), ("1,*", 6.5, "helv", 4), (", Jean-Luc Dupont", 11, "helv", 0),
        ("2†", 6.5, "helv", 4), (" and Ana López", 11, "helv", 0), ("1", 6.5, "helv", 4),
    ])
    spans(page, 60, 172, [("1", 6, "tiro", 3), ("Department of Statistics, University of Nowhere, Utopia", 8, "tiro", 0)])
    spans(page, 60, 184, [("2", 6, "tiro", 3), ("Institut National de Recherche, Paris, France", 8, "tiro", 0)])
    page.insert_text((60, 196), "* Corresponding author: maria@nowhere.edu  † Deceased", fontsize=7, fontname="tiro")
    page.insert_text((60, 230), "Abstract", fontsize=11, fontname="hebo")
    paragraph(page, pymupdf.Rect(60, 238, 535, 330), "Widgets fail. " + BODY)
    page.insert_text((60, 352), "1 Introduction", fontsize=11, fontname="hebo")
    paragraph(page, pymupdf.Rect(60, 360, 535, 700), BODY * 2, size=10)
    return save(doc, path, info)


def journal_paper(path: Path, info: dict[str, str] | None = None) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    # Journal line and DOI in the header; a running head set large in the corner.
    page.insert_text((40, 30), "Journal of Applied Widgetry 12 (2019) 101-115", fontsize=7.5, fontname="tiro")
    page.insert_text((380, 30), "doi:10.1016/j.jaw.2019.01.004", fontsize=7.5, fontname="tiro")
    page.insert_text((40, 58), "Received 3 May 2018; accepted 9 December 2018", fontsize=7, fontname="tiro")
    page.insert_text((40, 100), "A Two-Column Study of Gear Wear", fontsize=17, fontname="hebo")
    page.insert_text((40, 121), "under Seasonal Loads", fontsize=17, fontname="hebo")
    spans(page, 40, 148, [("Kofi Mensah", 10.5, "helv", 0), ("a", 6, "helv", 3.5), (", Li Wei", 10.5, "helv", 0),
                          ("b,c", 6, "helv", 3.5), (", Sofía Ramírez", 10.5, "helv", 0), ("a", 6, "helv", 3.5)])
    page.insert_text((40, 166), "a University of Accra, Ghana; b Tsinghua University, Beijing; c CERN", fontsize=7, fontname="tiro")
    page.insert_text((40, 196), "Summary", fontsize=10, fontname="hebo")
    paragraph(page, pymupdf.Rect(40, 203, 555, 280), "Gears wear out. " + BODY, size=9)
    page.insert_text((40, 296), "Keywords: gears; wear; seasons", fontsize=8, fontname="tiro")
    # Two columns of body text, with citations whose years must not be read as the date.
    page.insert_text((40, 325), "1. Introduction", fontsize=10, fontname="hebo")
    paragraph(page, pymupdf.Rect(40, 332, 290, 800), ("Earlier work (Smith, 1987; Jones, 2003) " + BODY) * 2)
    paragraph(page, pymupdf.Rect(305, 320, 555, 800), BODY * 3)
    doc.new_page(width=W, height=H).insert_text((40, 40), "G. Wear et al. / Journal of Applied Widgetry", fontsize=7)
    return save(doc, path, info)


def test_author_block_markers_do_not_leak_and_junk_metadata_is_ignored(tmp_path):
    path = author_block_paper(tmp_path / "draft.pdf",
                              {"title": "Microsoft Word - draft3.docx", "author": "Administrator"})
    meta = extract_meta(pymupdf.open(path), path.name)
    assert meta.title == "Estimating Widget Lifetimes from Sparse Field Records"
    assert meta.authors == ["Maria Schmidt", "Jean-Luc Dupont", "Ana López"]
    assert meta.abstract.startswith("Widgets fail. The method is evaluated")
    assert "Introduction" not in meta.abstract
    assert "title" not in meta.unsure and "authors" not in meta.unsure and "abstract" not in meta.unsure


def test_two_column_journal_page_with_summary_journal_line_and_doi(tmp_path):
    path = journal_paper(tmp_path / "jaw.pdf", {"title": "untitled", "author": "Administrator",
                                                 "creationDate": "D:20230101000000Z"})
    meta = extract_meta(pymupdf.open(path), path.name)
    assert meta.title == "A Two-Column Study of Gear Wear under Seasonal Loads"
    assert meta.authors == ["Kofi Mensah", "Li Wei", "Sofía Ramírez"]
    assert meta.abstract.startswith("Gears wear out.") and "Keywords" not in meta.abstract
    assert meta.doi == "10.1016/j.jaw.2019.01.004"
    assert meta.published[:4] == "2019"  # the journal line, not the file's build date or a citation
    assert "Journal of Applied Widgetry" in meta.venue


def test_metadata_is_used_only_where_the_page_agrees_or_has_nothing(tmp_path):
    # The info dictionary names a title the page does not print: the page's title wins.
    path = author_block_paper(tmp_path / "a.pdf", {"title": "Some Other Paper Entirely", "author": "Maria Schmidt"})
    meta = extract_meta(pymupdf.open(path), path.name)
    assert meta.title == "Estimating Widget Lifetimes from Sparse Field Records"
    # A page with no title block at all: the metadata fills in, marked unsure.
    doc = pymupdf.open()
    paragraph(doc.new_page(width=W, height=H), pymupdf.Rect(60, 60, 535, 600), BODY * 3, size=10)
    bare = save(doc, tmp_path / "bare.pdf", {"title": "A Title Only the Metadata Knows", "author": "Grace Hopper"})
    meta = extract_meta(pymupdf.open(bare), bare.name)
    assert meta.title == "A Title Only the Metadata Knows" and "title" in meta.unsure
    assert meta.authors == [] and "authors" in meta.unsure  # the page never names Grace Hopper


def test_pdf_extract_still_exports_extract_meta(tmp_path):
    path = journal_paper(tmp_path / "j.pdf")
    assert pdf_extract.extract_meta(pdf_extract.open_pdf(path), path.name).doi == "10.1016/j.jaw.2019.01.004"


def test_tex_accents_and_name_lines():
    assert fix_accents("Gr´egory Mouni´e") == "Grégory Mounié"
    assert fix_accents("Pierre-Franc¸ois") == "Pierre-François"
    assert fix_accents("Barlas O˘guz and J˛edrzej") == "Barlas Oğuz and Jędrzej"
    assert names_in("Hunter D.D. Witmer, MD, MBA,*† Çağla Keçeli, MS,†") == ["Hunter D.D. Witmer", "Çağla Keçeli"]
    assert names_in("Y. Pischalnikov†, S. Aderhold, FNAL, Batavia, IL 60510, USA") == ["Y. Pischalnikov", "S. Aderhold"]
    assert names_in("Department of Physics, University of Nowhere") is None
    assert names_in("Submitted 25 March 2016") is None


# --------------------------------------------------------------------------- corrections


def test_corrections_are_saved_atomically_and_applied(tmp_path):
    assert corrections.load(tmp_path) == {}
    corrections.save_correction(tmp_path, "abc", title="Right Title", authors=["A. Smith", "B. Jones"])
    corrections.save_correction(tmp_path, "abc", published="1999")
    data = json.loads((tmp_path / "corrections.json").read_text(encoding="utf-8"))
    assert data == {"abc": {"authors": ["A. Smith", "B. Jones"], "published": "1999", "title": "Right Title"}}
    meta = PaperMeta(title="Wrong", authors=["X"], published="2020", unsure=["title", "year", "abstract"])
    fixed = corrections.apply(meta, corrections.for_paper(tmp_path, "abc"))
    assert (fixed.title, fixed.authors, fixed.published) == ("Right Title", ["A. Smith", "B. Jones"], "1999")
    assert fixed.unsure == ["abstract"]
    with pytest.raises(ValueError, match="not a metadata field"):
        corrections.save_correction(tmp_path, "abc", colour="red")
    assert not list(tmp_path.glob(".*.tmp"))


def test_unreadable_corrections_file_is_kept_aside_not_lost(tmp_path, caplog):
    (tmp_path / "corrections.json").write_text("{broken", encoding="utf-8")
    assert corrections.load(tmp_path) == {}
    assert "cannot be read" in caplog.text
    corrections.save_correction(tmp_path, "h", title="T")
    assert corrections.load(tmp_path) == {"h": {"title": "T"}}
    kept = list(tmp_path.glob("corrections.json.unreadable-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == "{broken"


def test_a_correction_survives_reimport_and_index_rebuild(make_desk, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    path = author_block_paper(src / "widgets.pdf", {"author": "Administrator"})
    desk = make_desk(tmp_path / "lib")
    report = desk.add([path])
    assert report.count("added") == 1, [o.message for o in report.outcomes]
    (paper,) = desk.library.list_papers()
    assert paper.authors == ["Maria Schmidt", "Jean-Luc Dupont", "Ana López"]
    corrections.save_correction(desk.library.root, paper.content_hash,
                                title="Widget Lifetimes (corrected)", published="2021")
    desk.close()

    # Lose the index entirely (a rebuild from the files): the import reads the PDF afresh.
    shutil.rmtree(tmp_path / "lib" / "index")
    desk = make_desk(tmp_path / "lib")
    report = desk.add([tmp_path / "lib" / "pdfs"])
    assert report.count("added") == 1, [o.message for o in report.outcomes]
    (again,) = desk.library.list_papers()
    assert again.content_hash == paper.content_hash
    assert again.title == "Widget Lifetimes (corrected)" and again.published == "2021"
    assert again.authors == paper.authors  # uncorrected fields still come from the page
    assert "title" not in again.unsure and "year" not in again.unsure
