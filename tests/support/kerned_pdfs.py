"""Papers set as Oxford University Press's NAR PDFs are, made with PyMuPDF: for tests of word_spaces.py.

Each piece of text is placed at an explicit position. Where the typesetter kerned a pair, a space
glyph is drawn in a small font of its own (the "dummy-space" font of those PDFs) and the next
letter is set where the kerned pair puts it, over the space: MuPDF reads a space there
("kno wn f or"). A real word space draws the same glyph and leaves the word space after the word.

A line is written as text with "|" where a pair is kerned ("kno|wn f|or") and "^" before a raised
mark that runs to the next "~" or the piece's end ("Nagy^1,* and", "KIR^+~CD8^+"); `kerned_line`
returns the x where it ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

SPACE_FONT = "cour"  # the drawn space glyph's font, set small
KERN = -0.018  # em: where a kerned pair puts the next letter (the NAR papers: -0.017 to -0.018)
WORD = 0.26  # em: a word space


def _length(text: str, font: str, size: float) -> float:
    # pymupdf.get_text_length counts "ó" short; the Font's own widths are those MuPDF reads.
    return pymupdf.Font(font).text_length(text, fontsize=size)


def kerned_line(page: pymupdf.Page, x: float, y: float, text: str, size: float, font: str = "helv",
                kern: float = KERN, word: float = WORD) -> float:
    space = 0.35 * size
    for i, token in enumerate(text.split(" ")):
        if i:
            page.insert_text((x, y), " ", fontname=SPACE_FONT, fontsize=space)
            x += word * size
        for j, piece in enumerate(token.split("|")):
            if j:
                page.insert_text((x, y), " ", fontname=SPACE_FONT, fontsize=space)
                x += kern * size
            for n, part in enumerate(piece.split("^")):
                mark, _, rest = part.partition("~") if n else ("", "", part)
                if mark:
                    small = 0.6 * size
                    page.insert_text((x, y - 0.35 * size), mark, fontname=font, fontsize=small)
                    x += _length(mark, font, small)
                if rest:
                    page.insert_text((x, y), rest, fontname=font, fontsize=size)
                    x += _length(rest, font, size)
    return x


@dataclass
class Paper:
    """What a synthetic NAR-like paper prints, lines as set ("|": a kerned pair, "^": a raised mark)."""

    title_lines: list[str]
    author_line: str
    abstract_lines: list[str]
    body_lines: list[str] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)


def make_kerned_paper(path: Path, paper: Paper) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((50, 40), "Nucleic Acids Research, 2024, 52, 1–12", fontname="helv", fontsize=7)
    y = 110.0
    for line in paper.title_lines:
        kerned_line(page, 50, y, line, 18, font="hebo")
        y += 22
    y += 6
    kerned_line(page, 50, y, paper.author_line, 11, font="hebo")
    y += 16
    page.insert_text((50, y), "1 Department of Biochemistry, University of Debrecen, Debrecen, Hungary", fontname="helv", fontsize=7)
    y += 24
    page.insert_text((50, y), "Abstract", fontname="hebo", fontsize=10)
    y += 14
    for line in paper.abstract_lines:
        kerned_line(page, 50, y, line, 8)
        y += 10
    y += 14
    page.insert_text((50, y), "Introduction", fontname="hebo", fontsize=10)
    y += 14
    for line in paper.body_lines:
        if y > 800:
            page = doc.new_page(width=595, height=842)
            y = 60
        kerned_line(page, 50, y, line, 9.2, font="tiro")
        y += 11.5
    if paper.info:
        doc.set_metadata(paper.info)
    doc.save(path)
    doc.close()
    return path
