"""Papers set in letter-spaced (tracked) type, made with PyMuPDF: for tests and bench/layout.py.

Each glyph is placed on its own and advanced by its width plus the tracking, and by a kerning
value for some letter pairs, as a typesetter does it; a word space is the space's width plus
the tracking, and no space glyph is drawn (many typesetters draw none). With tracking near
MuPDF's own word rule (0.15 em), a pair kerned apart splits a word ("Gr aphical"); with more,
every letter stands alone ("G r a p h i c a l").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

# Pairs a little apart (positive) or together (negative), in em, as a font's kerning table has them.
KERNING = {"ra": 0.045, "ap": 0.04, "rt": 0.035, "ct": 0.03, "Wa": -0.08, "Av": -0.07, "Te": -0.07,
           "To": -0.08, "yo": -0.03, "ve": -0.02, "Ch": 0.035}

BODY = ("The wavelet avoidance responses of cortical neurons were recorded in awake mice, and the "
        "graphical abstract summarises how cortical dynamics shape avoidance. Highlights of the "
        "results follow the summary; the introduction places these dynamics among earlier work on "
        "avoidance, and the discussion weighs what the recordings show about cortical circuits. ")


def tracked_line(page: pymupdf.Page, x: float, y: float, text: str, size: float, track: float,
                 font: str = "helv", kerning: dict[str, float] | None = None) -> float:
    """Write `text` glyph by glyph from (x, y) with `track` em after every glyph; returns the end x."""
    kerning = KERNING if kerning is None else kerning
    for i, ch in enumerate(text):
        if ch != " ":
            page.insert_text((x, y), ch, fontname=font, fontsize=size)
        x += pymupdf.get_text_length(ch, fontname=font, fontsize=size) + (track + kerning.get(text[i:i + 2], 0.0)) * size
    return x


@dataclass
class Spec:
    """What a synthetic paper prints: what the reader should get back."""

    title_lines: list[str]
    authors: list[str]
    headings: list[str] = field(default_factory=lambda: ["Graphical abstract", "Highlights", "Summary"])
    track: float = 0.12  # em
    title_size: float = 20.0
    body_words: str = BODY

    @property
    def title(self) -> str:
        return " ".join(self.title_lines)


def make_tracked_paper(path: Path, spec: Spec) -> Path:
    """A two-page paper whose title, author line and headings are letter-spaced; the body is not."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((50, 50), "Cell Reports", fontname="helv", fontsize=8)
    y = 110.0
    for line in spec.title_lines:
        tracked_line(page, 50, y, line, spec.title_size, spec.track, "hebo")
        y += spec.title_size * 1.2
    y += 10
    tracked_line(page, 50, y, ", ".join(spec.authors), 11, spec.track, "helv")
    y += 40
    for heading in spec.headings:
        tracked_line(page, 50, y, heading, 12, spec.track, "hebo")
        rect = pymupdf.Rect(50, y + 8, 560, y + 88)
        assert page.insert_textbox(rect, spec.body_words, fontsize=9.5, fontname="tiro") >= 0
        y += 100
    page = doc.new_page(width=612, height=792)
    y = 72.0
    for heading in ("Introduction", "Results", "Discussion"):
        tracked_line(page, 50, y, heading, 12, spec.track, "hebo")
        rect = pymupdf.Rect(50, y + 8, 560, y + 140)
        assert page.insert_textbox(rect, spec.body_words * 2, fontsize=9.5, fontname="tiro") >= 0
        y += 160
    doc.set_metadata({"title": "", "author": ""})
    doc.save(path)
    doc.close()
    return path


# A held-out set for bench/layout.py: titles, names and tracking not used in the tests.
HELD_OUT = [
    Spec(["Avoidance learning reshapes cortical", "dynamics through wavelet coupling"],
         ["Rosa Martins", "Tomas Kerr", "Yoko Tanaka"], track=0.12),
    Spec(["Chromatin tethering controls replication", "timing in yeast"],
         ["Peter Van Rooy", "Chiara Bassi"], track=0.14),
    Spec(["Transcriptional waves organize", "the developing retina"],
         ["Amara Okafor", "Lucas Brandt", "Mei Chen", "Ravi Patel"], track=0.2),
    Spec(["A bacterial toxin remodels", "host membranes"], ["Ines Duarte", "Karl Vogt"], track=0.3),
    Spec(["Sleep pressure tunes synaptic strength", "across cortical layers"],
         ["Hana Kovac", "Omar Haddad"], track=0.08),
]
