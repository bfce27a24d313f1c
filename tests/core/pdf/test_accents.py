"""Accents TeX set apart from their letters: joined in the text, found again on the page."""

from __future__ import annotations

import pymupdf
import pytest

from app.core.pdf import extract as pdf_extract
from app.core.pdf.accents import join_accents, tex_form


@pytest.mark.parametrize("printed, read", [
    ("Institut f¨ur Medizininformatik", "Institut für Medizininformatik"),
    ("Universit`a di Padova", "Università di Padova"),
    ("Instituto de F´ısica", "Instituto de Física"),
    ("the Lemaˆıtre–Tolman model", "the Lemaître–Tolman model"),
    ("solved at 2.2 ˚A", "solved at 2.2 Å"),
    ("Pierre-Franc¸ois and J˛edrzej", "Pierre-François and Jędrzej"),
    ("Kemal Bas¸", "Kemal Baş"),
    ("heated to 36/31˚C", "heated to 36/31°C"),
])
def test_an_accent_set_apart_joins_its_letter(printed, read):
    assert join_accents(printed) == read
    assert tex_form(read) == printed  # what the page is searched for


@pytest.mark.parametrize("text", [
    "y ~ x + z", "x^2 + y^2", "`lm` and `glm`", "a `b` c",  # code and formulas keep their ASCII marks
    "ˆβ and ˜σ",  # no one character for a Greek letter under an accent: as printed
    "the dieresis ¨ alone", "Grégory Mounié",  # nothing to join; already joined
])
def test_other_text_is_left_as_it_is(text):
    assert join_accents(text) == text


def test_names_and_titles_take_the_ascii_marks_too():
    assert join_accents("Gr^ace and Pe~na", ascii_marks=True) == "Grâce and Peña"


def _tex_like_pdf(path) -> None:
    """A page whose text layer holds each accent as its own glyph over the next letter, as
    pdfTeX writes "f¨ur": the accent drawn first, at the letter's place."""
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=300)
    font = pymupdf.Font("helv")
    y = 100
    for line in ("Institut f|¨u|r Medizininformatik, Universit|`a di Padova,",
                 "and the Laboratoire de Physique of F|´e|lix Hausdorff."):
        x = 40.0
        for piece in line.split("|"):
            if piece in ("¨u", "`a", "´e"):
                accent, letter = piece
                page.insert_text((x, y), accent, fontname="helv", fontsize=11)  # over the letter, no advance
                page.insert_text((x, y), letter, fontname="helv", fontsize=11)
                x += font.text_length(letter, fontsize=11)
            else:
                page.insert_text((x, y), piece, fontname="helv", fontsize=11)
                x += font.text_length(piece, fontsize=11)
        y += 16
    doc.save(path)
    doc.close()


def test_a_tex_page_reads_joined_and_its_quote_is_found(tmp_path):
    path = tmp_path / "tex.pdf"
    _tex_like_pdf(path)
    doc = pymupdf.open(path)
    assert "f¨ur" in doc[0].get_text()  # as MuPDF reads the page
    text = "\n".join(p.markdown for p in pdf_extract.iter_pages(doc))
    assert "Institut für Medizininformatik" in text
    assert "Università di Padova" in text and "Félix Hausdorff" in text
    assert "¨" not in text and "`" not in text
    # The viewer highlights a quote of the stored text on the page that prints it apart.
    hits = pdf_extract.locate_text(doc[0], "Institut für Medizininformatik, Università di Padova")
    assert hits and hits[0].y0 < 110
