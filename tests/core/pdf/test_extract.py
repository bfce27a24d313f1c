"""PDF opening, page labels, metadata, page markdown and streaming (app.core.pdf.extract)."""

from __future__ import annotations

import re
import time
import tracemalloc
from pathlib import Path

import pymupdf
import pytest

from app.core.pdf import extract as px
from app.core.errors import ImportFailure
from app.core.pdf.page_furniture import COPYRIGHT_NOTICE
from app.core.ingest.paper_id import make_paper_id, slugify
from app.core.records import PaperMeta

from tests.support import pdf_factory as pf


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "make, reason",
    [
        (pf.make_empty, "empty file"),
        (pf.make_not_pdf, "not a PDF"),
        (pf.make_corrupt, "corrupt or unreadable PDF"),
        (pf.make_encrypted, "encrypted: needs a password"),
        (pf.make_zero_pages, "no pages"),
    ],
)
def test_bad_input_gives_import_failure_with_name_and_reason(tmp_path, make, reason):
    path = make(tmp_path / f"bad-{make.__name__}.pdf")
    with pytest.raises(ImportFailure) as info:
        px.open_pdf(path)
    assert info.value.message.startswith(f"{path.name}: ")
    assert reason in info.value.message
    assert info.value.hint  # always something the user can do


def test_missing_file(tmp_path):
    with pytest.raises(ImportFailure, match="nothere.pdf: file not found"):
        px.open_pdf(tmp_path / "nothere.pdf")


def test_truncated_pdf_is_repaired_or_refused_cleanly(tmp_path):
    # MuPDF repairs what it can; either outcome is fine, a crash is not.
    path = pf.make_truncated(tmp_path / "truncated.pdf")
    try:
        doc = px.open_pdf(path)
    except ImportFailure as exc:
        assert "truncated.pdf" in exc.message
    else:
        assert doc.page_count >= 1
        list(px.iter_pages(doc))


def test_junk_before_header_is_accepted(tmp_path):
    # Readers accept up to 1 KB before "%PDF-" (some mail gateways prepend bytes).
    good = pf.make_paper(tmp_path / "good.pdf")
    path = tmp_path / "prefixed.pdf"
    path.write_bytes(b"\n\n junk \n" + good.read_bytes())
    assert px.open_pdf(path).page_count == 1


def test_scanned_pdf_needs_ocr(tmp_path):
    path = pf.make_scanned(tmp_path / "scan.pdf")
    doc = px.open_pdf(path)  # opening is fine: the problem is what is inside
    assert not px.has_text_layer(doc)


def test_text_pdf_has_text_layer(tmp_path):
    doc = px.open_pdf(pf.make_paper(tmp_path / "ok.pdf"))
    assert px.has_text_layer(doc)


# --------------------------------------------------------------------------- page labels


def test_page_labels_roman_front_matter(tmp_path):
    path = pf.make_paper(
        tmp_path / "book.pdf",
        pages=["Preface text."] * 2 + ["# One\n\nChapter text."] * 3,
        page_labels=[
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1},
        ],
    )
    doc = px.open_pdf(path)
    expected = ["i", "ii", "1", "2", "3"]
    assert px.page_labels(doc) == expected
    # Same as MuPDF's own per-page answer.
    assert [doc[i].get_label() for i in range(doc.page_count)] == expected
    assert [p.label for p in px.iter_pages(doc)] == expected
    assert [p.page for p in px.iter_pages(doc)] == [1, 2, 3, 4, 5]


def test_page_labels_default_to_numbers(tmp_path):
    doc = px.open_pdf(pf.make_paper(tmp_path / "plain.pdf", pages=["a", "b", "c"]))
    assert px.page_labels(doc) == ["1", "2", "3"]


# --------------------------------------------------------------------------- markdown


def test_page_markdown_headings_paragraphs_and_hyphens(tmp_path):
    text = (
        "# Introduction\n\n"
        "We describe the compu-\ntation of estimates and the Newton-\nRaphson method in some detail here.\n\n"
        "# Methods\n\n" + "Another paragraph follows. " * 12
    )
    doc = px.open_pdf(pf.make_paper(tmp_path / "p.pdf", title="Streaming Extraction", pages=[text]))
    md = next(px.iter_pages(doc)).markdown
    assert md.startswith("# Streaming Extraction\n\n")
    assert "\n\n## Introduction\n\n" in md and "\n\n## Methods\n\n" in md
    assert "computation of estimates" in md  # line-break hyphen removed
    assert "Newton-Raphson" in md  # real compound hyphen kept
    # A paragraph is one line, blocks are separated by blank lines.
    para = [p for p in md.split("\n\n") if p.startswith("Another")][0]
    assert "\n" not in para


def test_a_word_broken_at_a_lines_end_is_spelled_as_the_document_spells_it(tmp_path):
    # "velocity-dependent" and "GROBID" stand whole elsewhere in the paper: the break keeps the
    # compound's hyphen and drops the name's; "compu-tation", spelled nowhere else, is joined by case.
    text = (
        "Subjects adapted to a velocity-\ndependent force field, and the PDFs were parsed with GRO-\nBID "
        "before the compu-\ntation of the scores began.\n\n"
        + "A velocity-dependent field was used on every day, and GROBID parsed each paper again. " * 4
    )
    doc = px.open_pdf(pf.make_paper(tmp_path / "p.pdf", title="Line Breaks", pages=[text]))
    md = next(px.iter_pages(doc)).markdown
    first = [p for p in md.split("\n\n") if p.startswith("Subjects")][0]
    assert "a velocity-dependent force field" in first and "parsed with GROBID before" in first
    assert "computation of the scores" in first
    # The compound is found on the page for highlighting, though MuPDF reads it as one word.
    assert px.locate_text(doc[0], first)


def test_the_documents_spelling_decides_and_case_where_it_is_silent():
    from collections import Counter

    from app.core.text.line_breaks import document_words, join_hyphenated

    words = document_words(["a well-known result", "Page-\nRank ranks pages; PageRank again", "the trust-\nrank"])
    assert words["well-known"] == 1 and words["pagerank"] == 1 and "page-rank" not in words
    assert "trust-rank" not in words and "trustrank" not in words  # a broken word votes for neither spelling
    assert join_hyphenated("a well-", "known result", words) == "a well-known result"
    assert join_hyphenated("ranked by Page-", "Rank", words) == "ranked by PageRank"
    assert join_hyphenated("the compu-", "tation", Counter()) == "the computation"
    assert join_hyphenated("the Newton-", "Raphson step", None) == "the Newton-Raphson step"


def test_a_sentence_that_runs_on_into_the_next_column_is_one_paragraph(tmp_path):
    """A column that ends mid-sentence left two paragraphs, two half sentences to focusing and
    quoting; pieces of a formula set as blocks of their own stay apart."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    left = ["The median surgeon-scrub teaming score was low across", "the whole study period, and the",
            "median surgeon-circulator score was lower"]
    right = ["still, at 0.06 with an interquartile range", "of 0.03 to 0.13 in all specialties.", "",
             "sum over j=1", "", "where the weights are fixed in advance of the fit."]
    for column, lines in ((72, left), (330, right)):
        y = 600 if column == 72 else 100
        for line in lines:
            if line:
                page.insert_text((column, y), line, fontsize=10, fontname="helv")
            y += 12 if line else 40
    doc.save(tmp_path / "c.pdf")
    doc = px.open_pdf(tmp_path / "c.pdf")
    paragraphs = next(px.iter_pages(doc)).markdown.split("\n\n")
    whole = ("The median surgeon-scrub teaming score was low across the whole study period, and the median "
             "surgeon-circulator score was lower still, at 0.06 with an interquartile range of 0.03 to 0.13 in all "
             "specialties.")
    assert whole in paragraphs
    assert "sum over j=1" in paragraphs  # a formula's piece: not run on into the next block
    assert px.locate_text(doc[0], whole)


def test_code_blocks_are_fenced_and_keep_lines(tmp_path):
    code = "```\nR> fit <- lm(y ~ x)\nR> summary(fit)\n```"
    doc = px.open_pdf(pf.make_paper(tmp_path / "c.pdf", pages=[f"Some prose first.\n\n{code}\n\nProse after."]))
    md = next(px.iter_pages(doc)).markdown
    assert "```\nR> fit <- lm(y ~ x)\nR> summary(fit)\n```" in md


def test_locate_text_finds_passages_for_highlighting(tmp_path):
    text = "# Results\n\nThe estimator was unbiased in all simulated settings and its variance shrank with n."
    doc = px.open_pdf(pf.make_paper(tmp_path / "h.pdf", pages=[text]))
    md = next(px.iter_pages(doc)).markdown
    passage = md[md.index("## Results"):]
    assert px.locate_text(doc[0], passage)


def _raised_text_page(path: Path) -> Path:
    """One line of body text with raised pieces, as TeX sets powers of ten and footnote marks."""
    doc = pymupdf.open()
    page = doc.new_page()
    x = 72.0
    for text, size, rise in [("We find around 10", 11, 0), ("6.6", 7, 4), (" objects, p = 3 x 10", 11, 0), ("-8", 7, 4),
                             (" as Smith", 11, 0), ("1,2", 7, 4), (" showed in 2010", 11, 0), ("3", 7, 4), (".", 11, 0)]:
        page.insert_text((x, 100 - rise), text, fontsize=size, fontname="helv")
        x += pymupdf.get_text_length(text, fontname="helv", fontsize=size)
    doc.save(path)
    return path


def test_a_raised_number_after_ten_reads_as_a_power_and_is_still_found_on_the_page(tmp_path):
    doc = px.open_pdf(_raised_text_page(tmp_path / "p.pdf"))
    md = next(px.iter_pages(doc)).markdown
    # Not "106.6" and "10-8"; footnote marks after a name or a year stay as printed.
    assert "around 10^6.6 objects, p = 3 x 10^-8 as Smith1,2 showed in 20103." in md
    rects = px.locate_text(doc[0], md[md.index("We find"):])
    assert rects and rects[0].x0 == pytest.approx(72, abs=1)


TABLE_ROWS = [
    ("Standard neural net (Simard et al., 2003)", "Logistic", "2 layers, 800 units", "1.60"),
    ("Dropout network with logistic units", "Logistic", "3 layers, 1024 units", "1.35"),
    ("Dropout network with rectified units", "ReLU", "3 layers, 1024 units", "1.25"),
    ("Dropout network with a max-norm constraint", "ReLU", "3 layers, 1024 units", "1.06"),
]


def _table_page(path: Path) -> Path:
    """A borderless table with long cells, as papers set them: each cell placed on its row's baseline."""
    doc = pymupdf.open()
    page = doc.new_page()
    for r, cells in enumerate(TABLE_ROWS):
        for x, cell in zip((60, 290, 350, 470), cells):
            page.insert_text((x, 120 + 13 * r), cell, fontsize=9, fontname="helv")
    doc.save(path)
    return path


def test_a_table_with_long_cells_keeps_one_line_per_row_and_is_still_found_on_the_page(tmp_path):
    doc = px.open_pdf(_table_page(tmp_path / "t.pdf"))
    md = next(px.iter_pages(doc)).markdown
    lines = md.strip().splitlines()
    # Not run together as one paragraph: each method's error stays on its method's line.
    assert [line.split()[-1] for line in lines] == ["1.60", "1.35", "1.25", "1.06"]
    assert lines[3].startswith("Dropout network with a max-norm constraint")
    assert px.locate_text(doc[0], md.strip())


def _second_page(path: Path, lines: list[tuple[float, str, float]], title_size: float) -> tuple[str, list[str]]:
    """The Markdown and headings of a page of (y, text, size) lines, set as a paper's second page
    (the first page's author-line rule does not apply there)."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 90), "Operative team familiarity at an academic medical center.", fontsize=title_size)
    page = doc.new_page()
    for y, text, size in lines:
        page.insert_text((72, y), text, fontsize=size, fontname="helv")
    doc.save(path)
    md = list(px.iter_pages(px.open_pdf(path)))[1].markdown
    return md, [line for line in md.splitlines() if line.startswith("#")]


def test_a_publisher_notice_in_large_type_is_not_a_heading(tmp_path):
    """Annals of Surgery prints its copyright line on every page, larger than the body text."""
    lines = ([(90, "Copyright © 2022 Wolters Kluwer Health, Inc. All rights reserved.", 10),
              (130, "Statistical Analysis", 10)]
             + [(150 + 10 * i, "Teaming scores were compared before and after March 2020 with Wilcoxon tests.", 7.5)
                for i in range(6)]
             + [(250, "Copyright and fair use", 10), (270, "The notice above is the journal's, not the authors'.", 7.5)])
    md, headings = _second_page(tmp_path / "n.pdf", lines, title_size=7.5)
    assert headings == ["## Statistical Analysis", "## Copyright and fair use"]
    assert "Copyright © 2022 Wolters Kluwer Health" in md  # still text, just not a section


def test_a_copyright_sign_drawn_as_a_letter_in_a_circle_is_a_notice():
    """Portland Press draws © as C and a combining circle ("C⃝2014 Biochemical Society"): the line,
    set in a face of its own over the licence, was read as a heading."""
    assert COPYRIGHT_NOTICE.search("C\u20ddThe Authors Journal compilation C\u20dd2014 Biochemical Society")
    assert not COPYRIGHT_NOTICE.search("Compilation of the authors' C code")


def test_a_short_paragraph_set_larger_than_a_small_type_body_is_not_a_heading(tmp_path):
    """Short medical papers set their long reference lists in small type, so the body-size estimate
    reads the list's size; a two-line paragraph in the real body type then looked like a heading."""
    lines = ([(90, "Results", 12),
              (110, "Emergency cases had greater median teaming scores than elective cases (Table 2).", 9.8),
              (150, "7.5 Model Averaging vs. Weight Scaling", 9.8)]
             + [(170 + 9 * i, f"{i + 1}. Hoff WS, Hoey BA, Wainwright GA. Early experience with filters. "
                f"J Trauma 2004;{40 + i}:958-64.", 7.3) for i in range(20)])
    md, headings = _second_page(tmp_path / "s.pdf", lines, title_size=7.3)
    assert headings == ["# Results", "## 7.5 Model Averaging vs. Weight Scaling"]
    assert "Emergency cases had greater median teaming scores than elective cases (Table 2)." in md


def test_a_sentence_cut_by_a_page_break_or_begun_before_is_not_a_heading(tmp_path):
    """The same medical template: a 9.8 pt paragraph that a page break cut before its full stop,
    and the lower-case rest of a sentence, were "## In a subgroup analysis of 4117 elective cases …"
    and "## incorporating surgical team dynamics …": never evidence, and the section of what followed."""
    lines = ([(90, "Statistical Analysis", 10)]
             + [(110 + 9 * i, "Teaming scores were compared before and after March 2020 with Wilcoxon tests.", 7.5)
                for i in range(8)]
             + [(200, "incorporating surgical team dynamics by considering these distinct relationships", 9.8),
                (240, "In a subgroup analysis of 4117 elective cases from January 1 to July 15, 2021, junior "
                 "surgeons (n = 70) performed 46.8%", 9.8)])
    md, headings = _second_page(tmp_path / "c.pdf", lines, title_size=7.5)
    assert headings == ["## Statistical Analysis"]
    assert "junior surgeons (n = 70) performed 46.8%" in md and "incorporating surgical team dynamics" in md


def test_a_section_name_in_capitals_atop_a_paragraph_starts_the_section(tmp_path):
    """Frontiers and Annals of Surgery set "DISCUSSION" on the first line of the discussion's first
    paragraph: it was read as its first word ("DISCUSSION This paper presents …")."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Median scores fell after March 2020 in every specialty.", fontsize=10)
    page.insert_text((72, 130), "DISCUSSION\nThis paper presents a way to measure how well operating-room\nteams "
                     "know each other, from the cases they have shared in the six\nmonths before, and "
                     "shows that unfamiliar teams are commonplace.", fontsize=10)
    page.insert_text((72, 200), "RESULTS AND DISCUSSION ARE REPORTED TOGETHER IN THE NEXT SECTION OF THIS PAPER.", fontsize=10)
    doc.save(tmp_path / "d.pdf")
    md = next(px.iter_pages(px.open_pdf(tmp_path / "d.pdf"))).markdown
    assert "\n\n## DISCUSSION\n\nThis paper presents a way to measure" in md
    assert "## RESULTS AND DISCUSSION ARE" not in md  # a line in capitals that only begins with a section name


def test_a_drop_cap_is_the_first_letter_of_its_paragraph(tmp_path):
    """Annals of Surgery sets an article's first letter large: "C" and "onducting an operation …"
    were two paragraphs, the first sentence misspelt wherever it was quoted."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 118), "C", fontsize=30)
    page.insert_text((98, 100), "onducting an operation has been a team event since the\nadvent of the modern "
                     "surgical era, and effective teamwork is\nessential to prevent harm to patients.", fontsize=10)
    doc.save(tmp_path / "c.pdf")
    md = next(px.iter_pages(px.open_pdf(tmp_path / "c.pdf"))).markdown
    assert "Conducting an operation has been a team event" in md


def _paper_with_running_head(path: Path, pages: int = 5) -> Path:
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page()
        if n == 0:
            page.insert_text((72, 130), "Metabolomics in wheat following post-anthesis heat stress", fontsize=16)
        else:  # the head, and a footer whose page number changes
            page.insert_text((72, 40), "Metabolomics in wheat following post-anthesis heat stress", fontsize=8)
            page.insert_text((72, 780), f"PLOS ONE | June 11, 2018 {n + 1} / {pages}", fontsize=8)
        page.insert_text((72, 60), "using namespace Rcpp;", fontsize=9, fontname="cour")  # code, never furniture
        page.insert_text((72, 300), f"Heat stress lowered the yield of genotype {n} in both years.", fontsize=10)
        page.insert_text((72, 320), "Metabolomics in wheat following post-anthesis heat stress", fontsize=10)
    doc.save(path)
    return path


def test_a_running_head_is_dropped_from_every_page_but_the_first(tmp_path):
    """A running head repeats the title's words on every page; focusing took it for a sentence on
    the question. The same words in the body, a changing footer's text and code lines stay."""
    pages = [p.markdown for p in px.iter_pages(px.open_pdf(_paper_with_running_head(tmp_path / "h.pdf")))]
    assert "# Metabolomics in wheat" in pages[0]  # the title on the first page is kept
    for n, md in enumerate(pages[1:], start=1):
        assert md.count("Metabolomics in wheat following post-anthesis heat stress") == 1, md  # the body's, not the head
        assert f"genotype {n} in both years" in md and "using namespace Rcpp;" in md
        assert "PLOS ONE" not in md


def test_a_running_head_under_a_wide_top_margin_is_dropped_and_numbered_headings_stay(tmp_path):
    """JCAP sets its head 12.7 % down the page, below the band where a page number is looked for;
    joined to the sentence the page opens with, it read "Apparent and average accelerations of
    the Universe averaged quantities with observations." Headings "Example 1", "Example 2", … at
    the same height repeat too, numbers aside: they stay."""
    doc = pymupdf.open()
    for n in range(5):
        page = doc.new_page()  # 612 x 792
        if n:
            page.insert_text((200, 101), "Apparent and average accelerations of the Universe", fontsize=8)
        page.insert_text((72, 122), f"Example {n + 1}", fontsize=12)
        page.insert_text((72, 160), f"averaged quantities of region {n} were compared with observations.", fontsize=10)
    doc.save(tmp_path / "j.pdf")
    pages = [p.markdown for p in px.iter_pages(px.open_pdf(tmp_path / "j.pdf"))]
    for n, md in enumerate(pages):
        assert "Apparent and average" not in md, md
        assert f"Example {n + 1}" in md and f"averaged quantities of region {n} were" in md


def test_a_running_head_in_two_lines_is_dropped(tmp_path):
    """BMC sets its head in two lines that PyMuPDF gives as one block: the authors and journal with
    "Page 2 of 5" on the first, the article's address under it. It was read as a paragraph at the
    end of every page; the body's own mention of the journal stays."""
    doc = pymupdf.open()
    for n in range(5):
        page = doc.new_page()
        if n:
            page.insert_text((57, 40), "Agyeman-Duah et al. BMC Health Services Research 2014, 14:1\n"
                             "http://www.biomedcentral.com/1472-6963/14/1", fontsize=7)
            page.insert_text((480, 40), f"Page {n + 1} of 5", fontsize=7)
        page.insert_text((72, 300), f"Outpatients of ward {n} were interviewed as they left.", fontsize=10)
        page.insert_text((72, 320), "BMC Health Services Research published the protocol.", fontsize=10)
    doc.save(tmp_path / "bmc.pdf")
    pages = [p.markdown for p in px.iter_pages(px.open_pdf(tmp_path / "bmc.pdf"))]
    for n, md in enumerate(pages):
        assert "Agyeman-Duah" not in md and "biomedcentral" not in md and "of 5" not in md, md
        assert f"Outpatients of ward {n} were interviewed" in md and "published the protocol" in md


# --------------------------------------------------------------------------- metadata


def test_meta_from_generated_paper(tmp_path):
    page1 = (
        "# Abstract\n\nWe propose a method for streaming PDF extraction. It works well.\n\n"
        "# Introduction\n\nSee doi:10.1234/abcd.5678 and arXiv:2301.12345v2 for details."
    )
    path = pf.make_paper(
        tmp_path / "paper.pdf",
        title="Streaming Extraction of Papers",
        authors=["Émilie du Châtelet", "Alan Turing"],
        pages=[page1],
        metadata={"creationDate": "D:20240105120000Z"},
    )
    meta = px.extract_meta(px.open_pdf(path), path.name)
    assert meta.title == "Streaming Extraction of Papers"
    assert meta.authors == ["Émilie du Châtelet", "Alan Turing"]
    assert meta.abstract == "We propose a method for streaming PDF extraction. It works well."
    assert meta.doi == "10.1234/abcd.5678"
    assert meta.arxiv_id == "2301.12345v2"
    assert meta.published == "2024-01-05"


def test_meta_from_layout_when_metadata_is_missing(tmp_path):
    path = pf.make_paper(
        tmp_path / "2405.00001v3.pdf",
        title="A Title Only Printed on the Page",
        authors=["Grace Hopper", "John von Neumann"],
        pages=["# Introduction\n\nPublished March 3, 2021. Body text here."],
        title_in_metadata=False,
    )
    meta = px.extract_meta(px.open_pdf(path), path.name)
    assert meta.title == "A Title Only Printed on the Page"  # largest font on page 1
    assert meta.authors == ["Grace Hopper", "John von Neumann"]
    assert meta.arxiv_id == "2405.00001v3"  # from the file name
    assert meta.published == "2021-03-03"


def test_meta_reads_the_arxiv_stamp_in_the_margin(tmp_path):
    path = pf.make_paper(tmp_path / "download.pdf", title="Stamped", pages=["# Introduction\n\nText."])
    doc = pymupdf.open(path)
    # arXiv prints "arXiv:ID [category] date" rotated in the left margin of page 1.
    doc[0].insert_text((30, 600), "arXiv:2312.01234v4 [stat.ME] 7 Dec 2023", fontsize=16, rotate=90)
    doc.save(tmp_path / "stamped.pdf")
    meta = px.extract_meta(px.open_pdf(tmp_path / "stamped.pdf"), "download.pdf")
    assert meta.arxiv_id == "2312.01234v4"
    assert meta.published == "2023-12-07"
    assert make_paper_id(meta, "download.pdf", set()) == "2312.01234v4"


def test_meta_prefers_where_the_paper_says_it_was_published_over_the_build_date(tmp_path):
    # Preprints and package vignettes are rebuilt years later: the metadata dates the file.
    path = pf.make_paper(
        tmp_path / "vignette.pdf", title="Sandwich Estimators",
        pages=["# Introduction\n\nThis is a slightly modified version of Smith (2004), published in the "
               "Journal of Things. Since then, Jones (2010) extended it."],
        metadata={"creationDate": "D:20220614025606+02'00'"},
    )
    assert px.extract_meta(px.open_pdf(path), "vignette.pdf").published == "2004"


def test_meta_ignores_implausible_metadata_title(tmp_path):
    path = pf.make_paper(
        tmp_path / "x.pdf", title="The Real Title", metadata={"title": "Microsoft Word - draft7.docx"}
    )
    assert px.extract_meta(px.open_pdf(path), "x.pdf").title == "The Real Title"


# The same extraction on the real development corpus (kept out of the repository): bench/corpus_checks.py.


# --------------------------------------------------------------------------- streaming


@pytest.fixture(scope="module")
def large_pdf(tmp_path_factory) -> Path:
    return pf.make_large(tmp_path_factory.mktemp("large") / "book.pdf", n_pages=1000)


@pytest.mark.slow
def test_iter_pages_streams_a_1000_page_pdf_in_bounded_memory(large_pdf):
    doc = px.open_pdf(large_pdf)
    tracemalloc.start()
    try:
        total = pages = 0
        for page in px.iter_pages(doc):
            pages += 1
            total += len(page.markdown)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pages == 1000
    # The whole text is over a megabyte; holding only one page at a time stays far below.
    assert total > 1_000_000
    assert peak < 20 * 1024 * 1024


def test_iter_pages_is_lazy(large_pdf):
    doc = px.open_pdf(large_pdf)
    start = time.perf_counter()
    first = next(px.iter_pages(doc))
    assert first.page == 1 and "## Chapter" in first.markdown
    assert time.perf_counter() - start < 5  # did not extract the whole book first


# --------------------------------------------------------------------------- paper ids


def test_paper_id_prefers_arxiv_then_doi_then_title_then_file():
    assert make_paper_id(PaperMeta(arxiv_id="2301.12345v2", doi="10.1/x", title="T"), "f.pdf", set()) == "2301.12345v2"
    assert make_paper_id(PaperMeta(arxiv_id="hep-th/9901001v1"), "f.pdf", set()) == "hep-th_9901001v1"
    assert make_paper_id(PaperMeta(doi="10.18637/jss.v067.i01", title="T"), "f.pdf", set()) == "10.18637-jss.v067.i01"
    assert make_paper_id(PaperMeta(title="Fitting Linear Mixed-Effects Models"), "f.pdf", set()) == (
        "fitting-linear-mixed-effects-models"
    )
    assert make_paper_id(PaperMeta(), "My Paper (final).pdf", set()) == "my-paper-final"
    assert make_paper_id(PaperMeta(), "!!!.pdf", set()) == "paper"


def test_paper_id_unique_and_safe():
    existing = {"a-study", "A-Study-2"}  # case-insensitive file systems
    assert make_paper_id(PaperMeta(title="A Study"), "x.pdf", existing) == "a-study-3"
    assert make_paper_id(PaperMeta(title="Über Ähnlichkeit – Straße"), "x.pdf", set()) == "uber-ahnlichkeit-strasse"
    assert make_paper_id(PaperMeta(title="CON"), "x.pdf", set()) == "con-paper"  # Windows device name
    long = make_paper_id(PaperMeta(title="word " * 40), "x.pdf", set())
    assert len(long) <= 60 and not long.endswith("-")
    assert re.fullmatch(r"[a-z0-9][a-z0-9.-]*", slugify("  ***  Ünïcödé ... Title!!  ", keep_dots=True))
