"""Titles and authors as printed: read with the words' own boundaries (word_spaces.py), continued
onto the title's next line, raised marks as printed, authors "First Last" with their diacritics;
the PDF's info dictionary only a hint."""

from __future__ import annotations

import json
import unicodedata

import pytest

from app.core.pdf.metadata import authors as author_reader, reconcile, title as title_reader
from app.core.pdf.metadata.layout import read_front
from tests.support.kerned_pdfs import Paper, make_kerned_paper
from tests.support.pdf_factory import read_meta
from tests.support.paths import REPO

PRINTED = REPO.parent / "shared" / "corpus" / "printed"

NAR_LIKE = Paper(
    title_lines=["Lineag|e-det|ermining tr|anscription fact|or-driv|en promot|ers", "regulate cell type-specific macrophage gene expression"],
    author_line="Gerg|ely Nag|y^1,*, Dór|a Bojcsuk^1, Petros Tz|erpos^1, Tímea Cseh^1 and László Nagy^1,2,*",
    abstract_lines=["DNA intercalators are mainly kno|wn f|or their capacity to kill cancer cells, and se|v|eral of them",
                    "ha|v|e attracted much interest for their ability to degrade RNA Polymer|ase II in human cells."],
    body_lines=["We have known for a long time that several intercalators bind DNA in cells."] * 4,
    # As the publisher's info dictionary has them: "Last First", the accented letters dropped.
    info={"title": "Lineage-determining transcription factor-driven promoters regulate cell type-specific macrophage gene expression",
          "author": "Nagy Gergely, Bojcsuk Dra, Tzerpos Petros, Cseh Tmea, Nagy Lszl"},
)



def _nfc(names: list[str]) -> list[str]:
    return [unicodedata.normalize("NFC", n) for n in names]


def test_a_kerned_title_and_author_line_read_as_printed(tmp_path):
    meta = read_meta(make_kerned_paper(tmp_path / "nar.pdf", NAR_LIKE))
    # Before: "Lineag,e-det,ermining,tr,anscription,…" (the drawn spaces, set small, read as marks).
    assert meta.title == ("Lineage-determining transcription factor-driven promoters regulate cell type-specific "
                          "macrophage gene expression")
    assert _nfc(meta.authors) == ["Gergely Nagy", "Dóra Bojcsuk", "Petros Tzerpos", "Tímea Cseh", "László Nagy"]
    assert "title" not in meta.unsure and "authors" not in meta.unsure


def test_a_title_keeps_its_raised_charges_and_runs_onto_its_next_line(tmp_path):
    paper = Paper(
        title_lines=["KIR^+~CD8^+ T cells suppress pathogenic T cells and are", "active in the moss Physcomitrium patens^1"],
        author_line="Jaime A. Espinoza^1, Sabine Grüschow^2 and Stuart McQuarrie^1,*",
        abstract_lines=["Here we show that these T cells act in many tissues, and that the moss is a fine model for it."],
        body_lines=["We show that the cells act."] * 3,
    )
    meta = read_meta(make_kerned_paper(tmp_path / "kir.pdf", paper))
    # Before: "T cells suppress … patens" (MuPDF ends a line at the raised "+", and the piece before
    # it was too short to open a title), and in the library "KIR,CD8, T cells …".
    assert meta.title == "KIR+CD8+ T cells suppress pathogenic T cells and are active in the moss Physcomitrium patens"
    assert _nfc(meta.authors) == ["Jaime A. Espinoza", "Sabine Grüschow", "Stuart McQuarrie"]


def test_a_title_wrapped_after_a_comma_keeps_it(tmp_path):
    paper = Paper(
        title_lines=["Overview of the Technology Acceptance Model: Origins,", "Developments and Future Directions"],
        author_line="Mohammad Chuttur^1",
        abstract_lines=["User acceptance of technology has been an important field of study for over two decades now."],
        body_lines=["Many models have been proposed to explain the use of a system."] * 3,
    )
    meta = read_meta(make_kerned_paper(tmp_path / "tam.pdf", paper))
    assert meta.title == "Overview of the Technology Acceptance Model: Origins, Developments and Future Directions"


def test_the_info_dictionarys_names_are_taken_as_the_page_prints_them():
    words = ("Sabine Grüschow1, Stuart McQuarrie1, Katrin Ackermann2, Bela E. Bode2, Tracey M. Gloster 1,* and "
             "Malcolm F. White 1,* Dóra Bojcsuk1, Jaime A. Espinoza").split()
    info = ("Grschow Sabine, McQuarrie Stuart, Ackermann Katrin, Bode BelaE., Gloster TraceyM., White MalcolmF., "
            "Bojcsuk Dra, Espinoza Jaime A, Unprinted Person")
    names = author_reader.as_printed(author_reader.split_metadata_authors(info), words)
    assert _nfc(names) == ["Sabine Grüschow", "Stuart McQuarrie", "Katrin Ackermann", "Bela E. Bode", "Tracey M. Gloster",
                           "Malcolm F. White", "Dóra Bojcsuk", "Jaime A. Espinoza", "Unprinted Person"]


def test_where_the_page_gives_no_names_the_dictionarys_come_as_printed(tmp_path):
    import pymupdf

    path = make_kerned_paper(tmp_path / "nar.pdf", NAR_LIKE)
    with pymupdf.open(path) as doc:
        front = read_front(doc)
        names, unsure = reconcile._authors(front, [], NAR_LIKE.info["author"])  # no author block read
    assert _nfc(names) == ["Gergely Nagy", "Dóra Bojcsuk", "Petros Tzerpos", "Tímea Cseh", "László Nagy"]
    assert unsure


def test_a_file_name_or_an_identifier_is_no_title():
    for name in ("10.1101%2F2024.05.07.593022", "gkae088.pdf", "fit_hyp_M_3.00.eps"):
        assert not title_reader.plausible_metadata_title(name, "10.1101_2024.05.07.593022.full.pdf")
    found, unsure = title_reader.choose(title_reader.TitleFound(), "10.1101%2F2024.05.07.593022", "paper.pdf", "")
    assert found == "" and unsure


# ----------------------------------------------------------------------------- the real papers


def _truth() -> dict[str, dict]:
    path = PRINTED / "metadata.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not here (the shared corpus)")
    return {r["file"]: r for r in (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())}


@pytest.mark.parametrize("name", ["nar-gkae088.pdf", "nar-gkae167.pdf"])
def test_the_nar_papers_titles_and_authors_are_as_printed(name):
    want = _truth()[name]
    meta = read_meta(PRINTED / name)
    assert meta.title == want["title"]
    assert _nfc(meta.authors) == _nfc(want["authors"])  # diacritics and printed order: "Sabine Grüschow"
    assert meta.doi == want["doi"]
    assert "title" not in meta.unsure and "authors" not in meta.unsure
