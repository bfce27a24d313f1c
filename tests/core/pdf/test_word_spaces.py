"""Words as printed where the PDF draws spaces inside them (word_spaces.py): kerned NAR papers.

Synthetic papers (tests/support/kerned_pdfs.py) draw a space glyph at each kerned pair, as Oxford University
Press's Acrobat Distiller PDFs do; the two real papers of ../shared/corpus/printed are read where
they are (skipped elsewhere).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pymupdf
import pytest

from app.core.pdf import extract as pdf_extract, word_spaces
from app.core.pdf.rows import TEXT_FLAGS
from tests.support.kerned_pdfs import Paper, kerned_line, make_kerned_paper
from tests.support.paths import REPO

PRINTED = REPO.parent / "shared" / "corpus" / "printed"

ABSTRACT = [
    "DNA intercalators are mainly kno|wn f|or their capacity to kill cancer cells. R|ecently, se|v|eral",
    "DNA intercalators ha|v|e attracted much interest for their ability to degrade RNA Polymer|ase II.",
]
BODY = [
    "We have known for a long time that several intercalators bind DNA, and recently the",
    "polymerase was shown to be degraded; this lineage-determining factor is known to act.",
]
PAPER = Paper(
    title_lines=["Lineag|e-det|ermining tr|anscription fact|or-driv|en promot|ers", "regulate cell type-specific macrophage gene expression"],
    author_line="Gerg|ely Nag|y^1,*, Dór|a Bojcsuk^1, Petros Tz|erpos^1, Tímea Cseh^1 and László Nagy^1,2,*",
    abstract_lines=ABSTRACT,
    body_lines=BODY * 3,
)


def _read(path: Path) -> tuple[pdf_extract.PaperMeta, str]:
    doc = pdf_extract.open_pdf(path)
    try:
        return pdf_extract.extract_meta(doc, path.name), "\n\n".join(p.markdown for p in pdf_extract.iter_pages(doc))
    finally:
        doc.close()


def _one_line_pdf(path: Path, lines: list[str], size: float = 9.0, **kw) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for i, line in enumerate(lines):
        kerned_line(page, 40, 80 + 14 * i, line, size, **kw)
    doc.save(path)
    doc.close()
    return path


def _markdown(path: Path) -> str:
    doc = pdf_extract.open_pdf(path)
    try:
        return "\n".join(p.markdown for p in pdf_extract.iter_pages(doc))
    finally:
        doc.close()


def test_a_kerned_paper_reads_its_words_whole(tmp_path):
    path = make_kerned_paper(tmp_path / "kerned.pdf", PAPER)
    with pymupdf.open(path) as doc:  # the bug as MuPDF reads it: spaces inside the words
        mupdf = doc[0].get_text(flags=TEXT_FLAGS)
    assert "Lineag e-det ermining" in mupdf and "kno wn f or" in mupdf and "ha v e" in mupdf

    meta, markdown = _read(path)
    assert "# Lineage-determining transcription factor-driven promoters regulate cell type-specific macrophage gene expression" in markdown
    assert ("DNA intercalators are mainly known for their capacity to kill cancer cells. Recently, several DNA "
            "intercalators have attracted much interest for their ability to degrade RNA Polymerase II.") in markdown
    assert "kno wn" not in markdown and "se v eral" not in markdown
    # The real word spaces stay where they are.
    assert "We have known for a long time that several intercalators bind DNA" in markdown


def test_a_gap_inside_a_word_is_told_from_a_word_space_by_the_lines_own_spaces():
    def gap(k: int, em: float, letters: bool = True) -> word_spaces.Gap:
        return word_spaces.Gap(k, em, letters, True)

    justified = [gap(0, 0.24), gap(1, -0.018), gap(2, 0.25), gap(3, 0.02), gap(4, 0.23)]
    assert word_spaces.zones(justified) == {1: word_spaces.KERN, 3: word_spaces.KERN}
    # A squeezed line's word spaces: narrow, but none inside a word.
    assert word_spaces.zones([gap(0, 0.16), gap(1, 0.15), gap(2, 0.17)]) == {}
    # Between a narrow word space and the kerned gaps: in doubt, only between two letters of one size.
    assert word_spaces.zones([gap(0, 0.30), gap(1, 0.12), gap(2, 0.31), gap(3, 0.12, letters=False)]) == {1: word_spaces.DOUBT}
    # A line of one word space and one gap inside a word: the space's floor sets the scale.
    assert word_spaces.zones([gap(0, 0.28), gap(1, -0.017)]) == {1: word_spaces.KERN}
    assert word_spaces.zones([gap(0, -0.017)]) == {0: word_spaces.KERN}
    # A formula's variables and TeX's accents are never judged.
    assert word_spaces.zones([word_spaces.Gap(0, 0.0, True, True, text=False), gap(1, 0.25)]) == {}


def test_the_papers_words_decide_a_join_the_gaps_alone_would_make(tmp_path):
    vocab = word_spaces.Vocabulary()
    vocab.count("the cat sat with the dog\nthe cat and the dog\nsome thing and something")
    # Inside a word by its gap: joined, unless the pieces are words the paper prints and the join is not.
    assert vocab.joins(word_spaces.KERN, "kno" + "wn", "kno", "wn")
    assert not vocab.joins(word_spaces.KERN, "catdog", "cat", "dog")
    # In doubt: joined only where the paper prints the word whole and a piece is not a word.
    assert not vocab.joins(word_spaces.DOUBT, "publishedimmediately", "published", "immediately")
    assert not vocab.joins(word_spaces.DOUBT, "something", "some", "thing")
    vocab.count("an intermediate result")
    assert vocab.joins(word_spaces.DOUBT, "intermediate", "interme", "diate")

    # On a page: "cat|dog" set kerned stays two words where the paper prints both and never "catdog".
    path = _one_line_pdf(tmp_path / "veto.pdf", ["the cat sat with the dog and the cat and the dog ran", "then the cat|dog ran home and the cat|dog slept"])
    markdown = _markdown(path)
    assert "the cat dog ran home" in markdown and "catdog" not in markdown


def test_normally_set_type_is_read_as_mupdf_reads_it(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    text = "Word spaces set normally, justified or not, are never taken for kerning pairs here."
    page.insert_text((40, 80), text, fontname="helv", fontsize=10)
    # A squeezed word space (0.12 em) in a line of wide ones: in doubt, and "spacesnever" is no word.
    kerned_line(page, 40, 110, "Tight spaces in a line remain", 10, word=0.12)
    path = tmp_path / "normal.pdf"
    doc.save(path)
    markdown = _markdown(path)
    assert text in markdown and "Tight spaces in a line remain" in markdown
    with pymupdf.open(path) as doc:
        assert word_spaces.page_closed(doc[0]) == {}


def _lands_on(page: pymupdf.Page, rects: list[pymupdf.Rect], sentence: str) -> None:
    """The highlight covers the words of `sentence` that locate_text searches for (its first 12)
    where the page prints them (its words joined as printed: word_spaces.page_words), and nothing
    off the sentence's lines."""
    words = word_spaces.page_words(page)
    tokens = sentence.split()
    starts = [i for i in range(len(words) - len(tokens) + 1) if [w[4] for w in words[i:i + len(tokens)]] == tokens]
    assert len(starts) == 1, f"{sentence!r} is not printed once on the page"
    spelled = words[starts[0]:starts[0] + len(tokens)]
    searched = spelled[:12]
    for w in searched:
        centre = pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2)
        assert any(pymupdf.Rect(r.x0 - 1, r.y0 - 1, r.x1 + 1, r.y1 + 1).contains(centre) for r in rects), \
            f"{w[4]!r} is not highlighted"
    lines = {}
    for w in spelled:
        box = pymupdf.Rect(w[:4])
        lines[(w[5], w[6])] = lines[(w[5], w[6])] | box if (w[5], w[6]) in lines else box
    for r in rects:
        centre = pymupdf.Point((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2)
        assert any(pymupdf.Rect(b.x0 - 1, b.y0 - 1, b.x1 + 1, b.y1 + 1).contains(centre) for b in lines.values()), \
            f"a highlight off the sentence at {r}"


def test_a_highlight_lands_on_the_cited_sentence_of_a_kerned_page(tmp_path):
    path = make_kerned_paper(tmp_path / "kerned.pdf", PAPER)
    cited = "DNA intercalators are mainly known for their capacity to kill cancer cells."
    with pymupdf.open(path) as doc:
        page = doc[0]
        # MuPDF's own search misses the sentence the import stores (its text holds "kno wn f or")
        assert not page.search_for(cited, flags=pdf_extract.SEARCH_FLAGS)
        rects = pdf_extract.locate_text(page, cited)
        assert rects
        _lands_on(page, rects, cited)
        # The page's words joined as printed, with one box each.
        words = [w[4] for w in word_spaces.page_words(page)]
        assert "known" in words and "several" in words and "Lineage-determining" in words


# ----------------------------------------------------------------------------- the real papers

def _printed(name: str) -> Path:
    path = PRINTED / name
    if not path.is_file():
        pytest.skip(f"{path} not here (the shared corpus)")
    return path


@pytest.mark.parametrize("name, phrases, split", [
    ("nar-gkae088.pdf",
     ["Murine bone marrow-derived macrophages (BMDMs) are a widely used model",
      "a rich source of various next-generation sequencing data sets",
      "are composed exclusively of ‘distal’ elements that provide cell type-specific gene regulation by specialized TFs"],
     ["marro w-deriv ed", "v arious", "e x clusiv ely", "specializ ed"]),
    ("nar-gkae167.pdf",
     ["CRISPR-Cas provides adaptive immunity in prokaryotes. Type III CRISPR systems detect invading RNA",
      "to slow down viral replication. Here, we focus on the uncharacterised effector Csx23"],
     ["pro vides", "adaptiv e", "prokary otes", "sy stems", "in v ading", "slo w do wn", "w e f ocus"]),
])
def test_the_nar_papers_read_as_printed(name, phrases, split):
    path = _printed(name)
    with pymupdf.open(path) as doc:
        mupdf = " ".join(doc[0].get_text(flags=TEXT_FLAGS).split())
    assert all(s in mupdf for s in split)  # the bug, as MuPDF reads the first page
    markdown = _markdown(path)
    for phrase in phrases:
        assert phrase in markdown
    for s in split:
        assert s not in markdown


def test_cited_sentences_of_the_nar_papers_are_found_on_their_pages():
    path = _printed("nar-gkae088.pdf")
    doc = pdf_extract.open_pdf(path)
    try:
        pages = list(pdf_extract.iter_pages(doc))
        cited = "Murine bone marrow-derived macrophages (BMDMs) are a widely used model for studying gene expression regulation."
        assert cited in pages[0].markdown
        rects = pdf_extract.locate_text(doc[0], cited)
        assert rects
        _lands_on(doc[0], rects, cited)
        # Every sentence of the abstract: found where it is printed.
        abstract = next(p for p in pages[0].markdown.split("\n\n") if p.startswith("Mammalian promoters"))
        sentences = [s for s in re.split(r"(?<=\.)\s+(?=[A-Z])", abstract) if len(s.split()) >= 6]
        assert len(sentences) >= 8
        for s in sentences:
            assert pdf_extract.locate_text(doc[0], s), s
    finally:
        doc.close()


def test_the_two_papers_split_no_words():
    """Tokens that join with the next into a word the paper prints whole, the pieces not both its
    words (bench/printed.py's count): none in either paper (before: 217 and 134)."""
    for name in ("nar-gkae088.pdf", "nar-gkae167.pdf"):
        markdown = _markdown(_printed(name))
        vocab: dict[str, int] = {}
        for t in re.findall(r"[^\W\d_]+", markdown.lower()):
            vocab[t] = vocab.get(t, 0) + 1
        split = [f"{a} {b}" for line in markdown.splitlines() if not line.startswith("#")
                 for a, b in re.findall(r"(?<![\w-])([^\W\d_]+) (?=([^\W\d_]+)(?![\w]))", line)
                 if vocab.get((a + b).lower()) and not (a[-1].islower() and b[0].isupper())
                 and not (vocab.get(a.lower(), 0) >= 2 and vocab.get(b.lower(), 0) >= 2 and min(len(a), len(b)) >= 2)]
        tokens = len(re.findall(r"[^\W\d_]+", markdown))
        assert len(split) <= 0.005 * tokens, split[:20]


def test_metadata_jsonl_is_where_the_tests_look():
    path = _printed("metadata.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert {r["file"] for r in rows} == {"nar-gkae088.pdf", "nar-gkae167.pdf"}


def test_a_kerned_tables_cells_read_as_whole_words(tmp_path):
    # A ruled table set as the NAR papers set their text: a space glyph at each kerned pair, in the
    # row names, the column heads and the values. Its row units read the words the page prints.
    from app.core.pdf.tables import chunks as tables

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    kerned_line(page, 72, 80, "Macrophag|es and oste|oclasts diff|er in how they use the f|actor.", 9.2, font="tiro")
    kerned_line(page, 72, 110, "Table 1. Binding of the f|actor in each cell type.", 9.2, font="tiro")
    columns, top = [72.0, 220.0, 360.0, 500.0], 130.0
    rows = [["Cell type", "Bound sites", "Pr|ot|ein le|v|el"],
            ["Macrophag|es", "1,2|04", "hig|h"],
            ["Oste|oclasts", "8|71", "lo|w"],
            ["Monocyt|es", "3|02", "lo|w"]]
    for k in range(len(rows) + 1):
        page.draw_line((columns[0], top + 20 * k), (columns[-1], top + 20 * k))
    for x in columns:
        page.draw_line((x, top), (x, top + 20 * len(rows)))
    for k, row in enumerate(rows):
        for x, cell in zip(columns, row):
            kerned_line(page, x + 4, top + 20 * k + 14, cell, 9.2, font="tiro")
    kerned_line(page, 72, 240, "Monocytes and macrophages bind the factor at more sites than osteoclasts do, as", 9.2, font="tiro")
    kerned_line(page, 72, 252, "the protein level shows: the sites bound are high in number in every cell type.", 9.2, font="tiro")
    path = tmp_path / "kerned-table.pdf"
    doc.save(path)
    doc.close()
    with pymupdf.open(path) as doc:
        (table,) = tables.scan_pages(doc).tables
        assert "Macrophag es" in doc[0].get_text()  # MuPDF reads the kerning spaces
    assert table.headers == ["Cell type", "Bound sites", "Protein level"]
    assert table.rows == [["Macrophages", "1,204", "high"], ["Osteoclasts", "871", "low"], ["Monocytes", "302", "low"]]
    assert tables.row_text(table, table.rows[1]) == "Table 1 (page 1) · Osteoclasts · Bound sites: 871 · Protein level: low"
