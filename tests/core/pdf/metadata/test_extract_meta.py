"""Metadata read from the page (app.core.pdf.metadata) and user corrections that survive re-import.

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

from app.core.library import corrections
from app.core.pdf import extract as pdf_extract
from app.core.pdf.metadata import abstract, extract_meta
from app.core.pdf.metadata.authors import names_in
from app.core.pdf.metadata.layout import Line
from app.core.pdf.metadata.text import fix_accents
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


@pytest.mark.slow
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


# --- Rules that publishers' layouts justify, one page (or two) per rule -----------------------

def lines_page(doc: pymupdf.Document, rows: list[tuple[float, float, str, float, str]]) -> pymupdf.Page:
    """A page with each (x, y, text, size, font) written as its own line, in that order."""
    page = doc.new_page(width=W, height=H)
    for x, y, text, size, font in rows:
        page.insert_text((x, y), text, fontsize=size, fontname=font)
    return page


def read(path: Path):
    return extract_meta(pymupdf.open(path), path.name)


def test_issue_line_year_beats_copyright_year(tmp_path):
    # Medical journals print the issue ("Volume 277, Number 5, May 2023") and a copyright line
    # dated the year the article was accepted.
    doc = pymupdf.open()
    page = lines_page(doc, [
        (40, 30, "Annals of Widget Surgery  Volume 277, Number 5, May 2023", 7.5, "tiro"),
        (40, 100, "Team Familiarity in the Widget Theatre", 17, "hebo"),
        (40, 130, "Hunter Witmer, MD, and Dana Adelman, PhD", 10.5, "helv"),
        (40, 170, "Objective:", 9, "hebo"),
        (40, 820, "Copyright © 2022 Widget Press. All rights reserved.", 7, "tiro"),
    ])
    paragraph(page, pymupdf.Rect(40, 176, 555, 300), "To measure familiarity. " + BODY, size=9)
    meta = read(save(doc, tmp_path / "issue.pdf", {"creationDate": "D:20230325000000Z"}))
    assert meta.published[:4] == "2023" and "year" not in meta.unsure


def test_citation_years_are_not_read_as_the_publication_year(tmp_path):
    # "Mullahy (1986)", "(1998, 2005)": years beside names are citations, not a journal line.
    doc = pymupdf.open()
    page = lines_page(doc, [
        (60, 90, "Regression Models for Widget Counts", 17, "hebo"),
        (60, 120, "Ada Zeiler", 11, "helv"),
        (60, 150, "Abstract", 10, "hebo"),
    ])
    paragraph(page, pymupdf.Rect(60, 158, 535, 260), "Since Mullahy (1986) and Lambert (1992) hurdle models "
              "are common, see Cameron and Trivedi (1998, 2005). " + BODY, size=10)
    paragraph(page, pymupdf.Rect(60, 270, 535, 700), ("Earlier work (Smith 1999; Jones 2003, 2004) " + BODY) * 2, size=10)
    meta = read(save(doc, tmp_path / "cites.pdf", {"creationDate": "D:20200227000000Z"}))
    assert meta.published[:4] not in {"1986", "1992", "1998", "1999", "2003", "2004", "2005"}
    assert "year" in meta.unsure  # nothing printed dates the paper: only the file's date is left


def test_stated_version_year_with_a_letter_suffix(tmp_path):
    # Vignettes and preprints say which publication they are a version of: "(2008a) published in".
    doc = pymupdf.open()
    page = lines_page(doc, [
        (60, 90, "Implementing a Class of Widget Tests", 17, "hebo"),
        (60, 120, "Tom Hothorn", 11, "helv"),
        (60, 150, "Abstract", 10, "hebo"),
    ])
    paragraph(page, pymupdf.Rect(60, 158, 535, 260), "This description is a modified version of Hothorn and "
              "Zeileis (2008a) published in the Journal of Widget Software. " + BODY, size=10)
    paragraph(page, pymupdf.Rect(60, 270, 535, 700), ("See Oster (2002, 2003) for an overview. " + BODY) * 2, size=10)
    assert read(save(doc, tmp_path / "version.pdf")).published[:4] == "2008"


def test_date_line_under_the_authors_and_typeset_note_on_the_next_page(tmp_path):
    # A report or vignette dates itself on a line of its own under the author block.
    doc = pymupdf.open()
    page = lines_page(doc, [
        (150, 120, "Computational Methods for Widget Models", 17, "tiro"),
        (250, 160, "Doug Bates", 12, "tiro"),
        (220, 176, "Department of Statistics", 12, "tiro"),
        (240, 210, "October 31, 2022", 12, "tiro"),
        (270, 250, "Abstract", 10, "tibo"),
    ])
    paragraph(page, pymupdf.Rect(100, 258, 495, 360), "Widget models are fitted with sparse methods (Davis 2006). " + BODY, size=10)
    meta = read(save(doc, tmp_path / "dated.pdf", {"creationDate": "D:20240101000000Z"}))
    assert meta.published == "2022-10-31" and "year" not in meta.unsure
    # No date on the first page; the version note on page 2 says when this version was typeset.
    doc = pymupdf.open()
    page = lines_page(doc, [(60, 90, "Seamless Widget Integration", 17, "hebo"), (60, 120, "Dirk Eddel", 11, "helv"),
                            (60, 150, "Abstract", 10, "hebo")])
    paragraph(page, pymupdf.Rect(60, 158, 535, 300), BODY, size=10)
    paragraph(doc.new_page(width=W, height=H), pymupdf.Rect(60, 60, 535, 300),
              "This version corresponds to widget version 1.0.8 and was typeset on January 11, 2022. " + BODY, size=10)
    assert read(save(doc, tmp_path / "typeset.pdf", {"creationDate": "D:20230112000000Z"})).published == "2022-01-11"


def test_archive_cover_posted_date_and_cite_as_line(tmp_path):
    # A repository's cover prints the paper's year under the author and the date it was posted.
    doc = pymupdf.open()
    lines_page(doc, [
        (60, 60, "MPRA", 20, "hebo"), (60, 80, "Munich Personal RePEc Archive", 10, "helv"),
        (60, 160, "Territorial Rural Development in Latin", 17, "hebo"),
        (60, 182, "America and the Caribbean", 17, "hebo"),
        (60, 215, "Jorge Mora-Alfaro", 11, "helv"), (60, 235, "Programa Regional de Desarrollo Rural", 10, "helv"),
        (60, 260, "2006", 11, "helv"),
        (60, 300, "Online at http://mpra.example.org/8468/", 9, "helv"),
        (60, 314, "MPRA Paper No. 8468, posted 26. April 2008 14:42 UTC", 9, "helv"),
    ])
    paragraph(doc.new_page(width=W, height=H), pymupdf.Rect(60, 60, 535, 600), BODY * 3, size=10)
    assert read(save(doc, tmp_path / "mpra.pdf")).published[:4] == "2006"
    # A working-paper series prints the paper's own reference, year included.
    doc = pymupdf.open()
    page = lines_page(doc, [(60, 90, "Overview of the Widget Acceptance Model", 17, "hebo"), (60, 120, "Mohammad Chuttur", 11, "helv"),
                            (60, 150, "Abstract", 10, "hebo")])
    paragraph(page, pymupdf.Rect(60, 158, 535, 300), "Widget acceptance has been studied since 1989. " + BODY, size=10)
    page.insert_text((60, 320), "Citation: Chuttur MY, Agyeman-Duah JNA, Theurer A, Munthali C, Alide N (2009) Overview of the "
                     "Widget Acceptance Model.", fontsize=7, fontname="helv")
    assert read(save(doc, tmp_path / "cite.pdf", {"creationDate": "D:20100316000000Z"})).published[:4] == "2009"


def test_researchgate_cover_sheet_is_skipped(tmp_path):
    doc = pymupdf.open()
    lines_page(doc, [
        (40, 60, "See discussions, stats, and author profiles for this publication at: https://www.researchgate.net/publication/1234",
         8, "helv"),
        (40, 100, "Cover Sheet Title Set Very Large", 20, "hebo"), (40, 130, "Article in Widget Letters", 9, "helv"),
        (40, 700, "All content following this page was uploaded by Kofi Mensah on 12 March 2015.", 8, "helv"),
    ])
    doc.close()
    path = journal_paper(tmp_path / "article.pdf")
    cover = pymupdf.open()
    cover.insert_pdf(pymupdf.open(tmp_path / "article.pdf"))  # cover first, then the article
    cover_page = cover.new_page(pno=0, width=W, height=H)
    cover_page.insert_text((40, 60), "See discussions, stats, and author profiles for this publication at: "
                           "https://www.researchgate.net/publication/1234", fontsize=8, fontname="helv")
    cover_page.insert_text((40, 100), "Cover Sheet Title Set Very Large", fontsize=22, fontname="hebo")
    cover_page.insert_text((40, 700), "All content following this page was uploaded by Kofi Mensah on 12 March 2015.",
                           fontsize=8, fontname="helv")
    meta = read(save(cover, tmp_path / "rg.pdf"))
    assert path.exists()
    assert meta.title == "A Two-Column Study of Gear Wear under Seasonal Loads"
    assert meta.authors == ["Kofi Mensah", "Li Wei", "Sofía Ramírez"]
    assert meta.published[:4] == "2019" and meta.abstract.startswith("Gears wear out.")


def test_name_grid_columns_set_close_together(tmp_path):
    # JSS-style grid: each author with an affiliation below, columns a word space and a half apart.
    doc = pymupdf.open()
    page = lines_page(doc, [(60, 90, "Fitting Mixed Widget Models", 17, "hebo")])
    x = 50.0
    for name, aff in [("Douglas Bates", "Wisconsin"), ("Martin Maechler", "ETH Zurich"),
                      ("Benjamin M. Bolker", "McMaster"), ("Steven C. Walker", "McMaster")]:
        page.insert_text((x, 150), name, fontsize=12, fontname="hebo")
        page.insert_text((x, 164), aff, fontsize=10.9, fontname="helv")
        x += pymupdf.get_text_length(name, fontname="hebo", fontsize=12) + 5.5
    page.insert_text((60, 200), "Abstract", fontsize=10, fontname="hebo")
    paragraph(page, pymupdf.Rect(60, 208, 535, 330), BODY, size=10)
    meta = read(save(doc, tmp_path / "grid.pdf", {"author": "Douglas Bates, Martin Maechler, Ben Bolker, Steve Walker"}))
    assert meta.authors == ["Douglas Bates", "Martin Maechler", "Benjamin M. Bolker", "Steven C. Walker"]


def test_prose_after_the_author_line_is_not_a_name(tmp_path):
    doc = pymupdf.open()
    page = lines_page(doc, [
        (60, 100, "Widget Work in Mountains", 22, "helv"),
        (60, 140, "Rosa Romeo*, Sara Manuelli, and Samantha Abear", 9, "helv"),
        (60, 152, "* Corresponding author: rosa@example.org", 8, "helv"),
    ])
    paragraph(page, pymupdf.Rect(60, 180, 300, 500), "The COVID-19 crisis has added urgency to an already difficult "
              "situation in mountains. " + BODY, size=9)
    assert read(save(doc, tmp_path / "prose.pdf")).authors == ["Rosa Romeo", "Sara Manuelli", "Samantha Abear"]


def test_unlabelled_abstract_before_a_keyword_line(tmp_path):
    # Some templates set the abstract without a label, one line per block, a bar-separated keyword line after it.
    doc = pymupdf.open()
    lines_page(doc, [
        (52, 70, "Widget Quick Reference Guide", 22, "hebo"),
        (52, 92, "Dirk Eddel and Romy Franc", 8, "hebo"),
        (52, 112, "This version was compiled on January 11, 2022", 6.2, "helv"),
        (52, 130, "This document provides short code snippets that are helpful for using the", 7, "hebo"),
        (52, 141, "widget package (Eddel et al., 2022; Eddel and Franc, 2011; Eddel, 2013) in", 7, "hebo"),
        (52, 152, "everyday work.", 7, "hebo"),
        (52, 170, "Widget | quickref | R | C++", 6.7, "helv"),
        (52, 195, "Important Notes", 8.8, "hebo"),
        (52, 215, "// If you experience compiler errors, please check your compiler.", 9, "cour"),
    ])
    meta = read(save(doc, tmp_path / "pinp.pdf"))
    assert meta.abstract.startswith("This document provides short code snippets") and meta.abstract.endswith("everyday work.")
    assert "abstract" not in meta.unsure and meta.published == "2022-01-11"


def test_no_abstract_when_the_body_starts_first(tmp_path):
    # A vignette without an abstract: the introduction is not one, nor is the next page.
    doc = pymupdf.open()
    page = lines_page(doc, [
        (160, 140, "A Computational Framework for", 17, "helv"), (220, 162, "Widget Inference", 17, "helv"),
        (160, 195, "Tom Hothorn and Kurt Hornik", 12, "helv"),
        (90, 240, "Institut für Widgetkunde, Universität Erlangen", 10, "helv"),
        (90, 290, "1", 14, "hebo"), (110, 290, "Introduction", 14, "hebo"),
    ])
    paragraph(page, pymupdf.Rect(90, 300, 505, 700), BODY * 3, size=10)
    paragraph(doc.new_page(width=W, height=H), pymupdf.Rect(90, 60, 505, 700), BODY * 4, size=10)
    meta = read(save(doc, tmp_path / "noabs.pdf"))
    assert meta.abstract == "" and meta.authors == ["Tom Hothorn", "Kurt Hornik"]


def test_double_spaced_manuscript_with_the_abstract_on_page_two(tmp_path):
    doc = pymupdf.open()
    lines_page(doc, [(72, 120, "A Unified Language of Widget Actions", 17, "helv"),
                     (75, 190, "Zheren Wang, Kevin Cruse, and Gerbrand Ceder", 12, "helv"),
                     (100, 240, "Department of Widget Science, University of California, Berkeley", 9, "helv")])
    sentences = ["Applying machine learning to predict widget syntheses requires large datasets.",
                 "Extraction of synthesis information from publications is still challenging,",
                 "especially for synthesis actions, because of the lack of a labeled dataset.",
                 "In this work we propose a unified language of synthesis actions for widgets,",
                 "and we built a neural network that maps synthesis paragraphs into the language."]
    lines_page(doc, [(97, 100 + 24 * i, s, 10, "helv") for i, s in enumerate(sentences)])
    meta = read(save(doc, tmp_path / "manuscript.pdf"))
    assert meta.abstract.startswith("Applying machine learning") and meta.abstract.endswith("into the language.")


def test_copyright_note_inside_the_abstract_sentence(tmp_path):
    # A preprint note at the head of the abstract wraps "Copyright / © 2009 …" across a line end.
    doc = pymupdf.open()
    lines_page(doc, [
        (60, 90, "Order-restricted Scores Test for Widgets", 17, "hebo"), (60, 120, "Ludwig Hothorn", 11, "helv"),
        (280, 150, "Abstract", 10, "hebo"),
        (80, 166, "This is a preprint of an article to be published in Widget Journal. Copyright", 10, "helv"),
        (80, 178, "© 2009 Widget Press; available online at http://widget-journal.example.org.", 10, "helv"),
        (80, 194, "The trend test for proportions is often used for genotype-based analysis of candidate", 10, "helv"),
        (80, 206, "widgets. Depending on the underlying model, the use of specific scores maximises power.", 10, "helv"),
        (60, 230, "Keywords: widgets, trend test", 10, "helv"),
    ])
    meta = read(save(doc, tmp_path / "preprint.pdf", {"creationDate": "D:20211007000000Z"}))
    assert meta.abstract.startswith("This is a preprint") and "maximises power." in meta.abstract
    assert meta.published[:4] == "2009"


def test_a_title_in_symbols_is_not_taken(tmp_path):
    # Fonts whose glyphs decode to dingbats: no title rather than a string of symbols.
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_font(fontname="dejavu", fontfile=None, fontbuffer=pymupdf.Font("cjk").buffer)
    page.insert_text((60, 100), "P★♥①ⓘ■②★◆ ■★①st sq☆①r★s", fontsize=20, fontname="dejavu")
    page.insert_text((60, 140), "Doug Bates", fontsize=12, fontname="helv")
    paragraph(page, pymupdf.Rect(60, 170, 535, 400), BODY, size=10)
    meta = read(save(doc, tmp_path / "symbols.pdf"))
    assert meta.title == "" and "title" in meta.unsure


def test_label_styles_and_author_separators():
    # "Abstract—" (IEEE), "SUMMARY", structured abstracts; "&", "·", e-mails and ORCID iDs in names.
    from app.core.pdf.metadata.abstract import find
    from app.core.pdf.metadata.layout import Line

    def ln(text: str, y: float, bold: bool = False) -> Line:
        return Line(text, text, 10.0, bold, False, (60, y, 500, y + 10), int(y), 0)

    body = "The method is evaluated on three data sets and compared with the usual estimators."
    for label in ("Abstract—We study widgets.", "SUMMARY", "Background: Widgets fail often."):
        lines = [ln(label, 100, bold=label == "SUMMARY")] + [ln(body, 112 + 12 * i) for i in range(4)]
        text, _, labelled = find(lines, 10.0, 0.0)
        assert labelled and body in text, label
    assert names_in("Ana Costa & Li Wei") == ["Ana Costa", "Li Wei"]
    assert names_in("Ana Costa, ana@uni.example, Li Wei") == ["Ana Costa", "Li Wei"]
    assert names_in("Ana Costa (https://orcid.org/0000-0002-1825-0097) and Li Wei") == ["Ana Costa", "Li Wei"]
    assert names_in("Ana Costa, Li Wei et al.") == ["Ana Costa", "Li Wei"]
    # Springer separates names with middle dots; ORCID icons leave "iD" or the iD after a name.
    assert names_in("A. Costa · L. Wei · M. Diaz") == ["A. Costa", "L. Wei", "M. Diaz"]
    assert names_in("Ana Costa iD, Li Wei iD") == ["Ana Costa", "Li Wei"]
    assert names_in("Ana Costa ORCID: 0000-0002-1825-0097, Li Wei") == ["Ana Costa", "Li Wei"]


def test_preprint_server_version_date_and_middle_dot_author_line(tmp_path):
    # bioRxiv stamps "this version posted …" (the preprint's own date), unlike an archive's "posted";
    # Springer sets the authors split by middle dots under a long title.
    doc = pymupdf.open()
    page = lines_page(doc, [
        (40, 25, "bioRxiv preprint doi: https://doi.org/10.1101/2020.03.01.123456; this version posted March 3, 2020.", 7, "helv"),
        (40, 90, "Seasonal Widget Wear Measured Across Twelve Field Stations with a", 16, "hebo"),
        (40, 110, "Common Protocol and Open Data", 16, "hebo"),
        (40, 140, "Ana Costa · Li Wei · Marta Diaz", 11, "helv"),
        (40, 156, "Submitted 2 January 2020; accepted 5 February 2020", 8, "helv"),
        (40, 185, "Abstract", 10, "hebo"),
    ])
    paragraph(page, pymupdf.Rect(40, 192, 555, 300), "Widgets wear with the seasons (Smith 2015). " + BODY, size=9)
    meta = read(save(doc, tmp_path / "biorxiv.pdf", {"creationDate": "D:20200401000000Z"}))
    assert meta.published == "2020-03-03" and meta.doi == "10.1101/2020.03.01.123456"
    assert meta.authors == ["Ana Costa", "Li Wei", "Marta Diaz"]
    assert meta.title == "Seasonal Widget Wear Measured Across Twelve Field Stations with a Common Protocol and Open Data"


def test_short_note_bold_title_beside_the_other_column_and_a_reference_line(tmp_path):
    """A two-column note (as OCR'd scans read): the title set bold at body size, the right
    column's lines at the same heights, and a journal reference under the names."""
    doc = pymupdf.open()
    page = lines_page(doc, [
        (40, 60, "Exact Solitary Waves for the General", 9, "hebo"),
        (310, 61, "where the model parameters are real numbers and the", 9, "helv"),
        (40, 71, "Fifth-order Shallow Water Models", 9, "hebo"),
        (310, 72, "field depends on the two independent variables only.", 9, "helv"),
        (40, 92, "Woo Hong and Young Jung", 9, "helv"),
        (40, 104, "P.O. Box 513, 5600 MB Eindhoven, The Netherlands", 8, "helv"),
        (40, 116, "Z. Naturforsch. 54a, 272-273 (1999); received December 15, 1998", 8, "helv"),
    ])
    paragraph(page, pymupdf.Rect(40, 130, 280, 400), BODY, size=9)
    meta = read(save(doc, tmp_path / "note.pdf"))
    assert meta.title == "Exact Solitary Waves for the General Fifth-order Shallow Water Models"
    assert meta.authors == ["Woo Hong", "Young Jung"]


def test_a_numbered_session_heading_above_the_title_is_not_the_title(tmp_path):
    doc = pymupdf.open()
    page = lines_page(doc, [
        (40, 50, "3. Thin Film Cells and Technologies", 10, "hebo"),
        (60, 90, "Hydrogen Incorporation in Amorphous Silicon", 10, "hebo"),
        (60, 120, "Rolf Severens, Frank van de Pas", 10, "helv"),
    ])
    paragraph(page, pymupdf.Rect(40, 150, 500, 400), BODY, size=10)
    meta = read(save(doc, tmp_path / "session.pdf"))
    assert meta.title == "Hydrogen Incorporation in Amorphous Silicon"
    assert meta.authors == ["Rolf Severens", "Frank van de Pas"]


def test_an_abstracts_word_broken_at_a_lines_end_is_spelled_as_its_page_spells_it():
    """As in the page text (line_breaks.py): "GRO-" + "BID" was "GRO- BID" in the stored abstract,
    "velocity-" + "dependent" was "velocitydependent"."""
    texts = ["Abstract", "The papers were parsed with GRO-", "BID before the velocity-",
             "dependent field was fitted and the compu-", "tation ended.", "Keywords: parsing",
             "1 Introduction", "GROBID reads each paper; a velocity-dependent field perturbs the arm."]
    lines = [Line(t, t, 9.0, False, False, (40, 100 + 12 * i, 500, 110 + 12 * i), i, 0) for i, t in enumerate(texts)]
    text, _, labelled = abstract.find(lines, body=9.0, after_y=90)
    assert labelled
    assert text == "The papers were parsed with GROBID before the velocity-dependent field was fitted and the computation ended."
