"""Words that letter-spacing split, joined again from the glyph positions.

Some journals set titles, headings and author names in letter-spaced (tracked) type: every glyph
is followed by a little extra space. MuPDF decides where a word ends by one fixed rule, a gap of
more than 0.15 em between two glyphs, so tracked type comes out split inside its words: with
tracking near that rule, where a kerning pair widens a gap ("Gr aphical abstr act"), and with
more, between every letter ("G r a p h i c a l a b s t r a c t", where the word spaces read like
the others). The rule here is the line's own: its tracking is the median gap between two letters
(most letter pairs sit inside a word), and a space MuPDF added is kept only where the gap
is a word space wider than that. A word space in tracked type is the space's advance (0.2-0.33 em)
plus the tracking once or twice, while a kerning pair moves a gap by less than 0.1 em; the margin
between the two, 0.15 em above the tracking, is where the line is cut (`WORD_GAP`). Measured on
the synthetic papers of tests/test_letter_spacing.py and bench/layout.py, and on both corpora,
where no line is letter-spaced and nothing changes.

A line counts as letter-spaced when its tracking lies between `TRACKED_MIN` and `TRACKED_MAX`:
below, the type is set normally (the median gap of the 42,254 lines of the two bench corpora is
0.0000 em, 99 % of them under 0.05 em) and MuPDF's text is kept as it is; above, the "letters"
are cells of a monospaced listing or table ("C C A C", "[1] 1 2 3", 0.42-0.56 em apart), not a
word. A space the PDF itself draws (a space glyph, not one MuPDF added) is kept in a tracked line.
In lines set normally, spaces that leave no room between two glyphs (drawn or added) are
word_spaces.py's, which page_dict calls after the tracked lines are read.

MuPDF also ends a line where a gap passes 0.8 em ("probably a new table column"), and in wide
tracking a word space does (0.28 em + twice 0.3 em): the title "A bacterial toxin remodels" came
out as four lines side by side, none of them long enough to be taken for a title. Lines of a
letter-spaced style that follow on one baseline at no more than a tracked word space apart
(`_TRACKED_SPACE`) are one line again.

Glyph positions cost: a page's characters as Python objects take twice as long as its text
(rawdict against dict), so they are read only for lines of a style (font and size) that this
document sets letter-spaced, judged once per style from its first line with four letter pairs
(`_Styles`), and for lines whose words are mostly one letter long (`_split_letters`), wherever
they are. A style set both ways, normally first and then with tracking too small for MuPDF to
split every letter, keeps MuPDF's text in its tracked lines. Over the 29 r-papers this reads
the first 16 glyphs of about 19 lines a paper, and reading the corpus (open, metadata, every
page's markdown) takes 5.8 % longer, timed inside one process (bench/layout.py --time gives the
same comparison from outside, noisier: +8.6 % on a machine loaded ten times over).
"""

from __future__ import annotations

import itertools
import logging
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from . import word_spaces
from .page_furniture import per_document

log = logging.getLogger(__name__)

TRACKED_MIN = 0.04  # em: the least tracking that counts (normal type: 0.00 em)
TRACKED_MAX = 0.35  # em: more is a monospaced grid of one-letter cells, not a word
WORD_GAP = 0.15  # em above the tracking: a word space (0.2-0.33 em) passes, a kerning pair (< 0.1) does not
MIN_PAIRS = 4  # letter pairs needed to measure a line's tracking
JUDGED_GLYPHS = 16  # a style is judged on the first glyphs of its first line with letter pairs enough
TRIES = 3  # lines of a style read before one that cannot tell is taken as normal
SPREAD = 0.05  # em: tracked letters sit this close to the tracking, but for kerning pairs
STEADY = 0.6  # share of letter pairs that must: a formula's letters are spaced unevenly
_TRACKED_SPACE = 0.5  # em: a word space at most, besides the tracking on either side of it
_MATH_FONT = re.compile(r"^(cmmi|cmsy|cmex|msbm|eufm|rsfs)|math|symbol", re.I)
_LETTER_PAIR = re.compile(r"(?=[^\W\d_]{2})")

try:  # MuPDF marks the spaces it adds (1.25 and later); a drawn space glyph is never removed
    _SYNTHETIC: int | None = pymupdf.mupdf.FZ_STEXT_SYNTHETIC
except AttributeError:  # pragma: no cover - older MuPDF: every space is judged by its gap
    _SYNTHETIC = None


@dataclass(frozen=True)
class Glyph:
    """One character of a line as MuPDF placed it (horizontal text, PDF points)."""

    c: str
    x0: float
    x1: float
    size: float
    drawn_space: bool = False  # a space glyph of the font, not one MuPDF added


def tracking(glyphs: list[Glyph]) -> float | None:
    """The line's typical gap between two letters (em); 0 where the gaps are uneven (a formula's
    letters), None with too few letter pairs to tell."""
    letters = [g for g in glyphs if g.c != " "]
    gaps = [(b.x0 - a.x1) / max(a.size, 1.0) for a, b in zip(letters, letters[1:])
            if a.c.isalpha() and b.c.isalpha()]
    if len(gaps) < MIN_PAIRS:
        return None
    track = statistics.median(gaps)
    steady = sum(abs(g - track) <= SPREAD for g in gaps)
    return track if steady >= STEADY * len(gaps) else 0.0


def tracked(track: float | None) -> bool:
    return track is not None and TRACKED_MIN <= track <= TRACKED_MAX


def spaces_to_drop(glyphs: list[Glyph], style_track: float | None = None) -> set[int]:
    """Indexes of the spaces MuPDF added inside words of a letter-spaced line (none elsewhere).
    `style_track`: the tracking of the line's style, for a line too short to measure its own."""
    track = tracking(glyphs)
    if track is None:
        track = style_track
    if not tracked(track):
        return set()
    assert track is not None
    drop: set[int] = set()
    prev = -1  # the last glyph that is not a space
    pending: list[int] = []  # the spaces since then
    for i, g in enumerate(glyphs):
        if g.c == " ":
            pending.append(i)
            continue
        if prev >= 0 and pending and not any(glyphs[k].drawn_space for k in pending):
            before = glyphs[prev]
            if (g.x0 - before.x1) / max(before.size, 1.0) - track <= WORD_GAP:
                drop.update(pending)
        prev, pending = i, []
    return drop


# --------------------------------------------------------------------------- PyMuPDF's lines


def _line_glyphs(line: Any, most: int | None = None) -> list[Glyph]:
    """The characters of one MuPDF text line (a `pymupdf.mupdf.FzStextLine`), the first `most`:
    each from its origin to the right edge of its box (its advance), about 20 µs a glyph."""
    out = []
    for ch in itertools.islice(line, most):
        c = ch.m_internal
        drawn = c.c == 32 and _SYNTHETIC is not None and not c.flags & _SYNTHETIC
        out.append(Glyph(chr(c.c), c.origin.x, c.quad.ur.x, c.size, drawn))
    return out


class _StextLines:
    """MuPDF's own lines behind the lines of the "dict" output: block by number, line by its box.
    The blocks are listed once per page, and only when a line is asked for."""

    def __init__(self, textpage: pymupdf.TextPage) -> None:
        self.textpage = textpage
        self.blocks: list[Any] | None = None

    def line(self, block_no: int, bbox: tuple[float, ...]) -> Any | None:
        if self.blocks is None:
            self.blocks = list(self.textpage.this)
        if block_no >= len(self.blocks):
            return None
        for line in self.blocks[block_no]:
            b = line.m_internal.bbox
            if abs(b.x0 - bbox[0]) < 0.01 and abs(b.y0 - bbox[1]) < 0.01 and abs(b.x1 - bbox[2]) < 0.01:
                return line
        return None


Style = tuple[str, float]


def _style(line: dict[str, Any]) -> Style:
    """The line's style, as its first span sets it (cheaper than weighing the spans; a style
    is judged over many lines anyway)."""
    span = line["spans"][0]
    return span["font"], round(span["size"] * 2) / 2


@dataclass
class _Styles:
    """Per document: the tracking of each style (font, size to half a point) judged so far, from
    its first line with letter pairs enough; 0.0 for a style set normally, or one whose first
    `TRIES` lines could not tell (too few letters among their first glyphs)."""

    track: dict[Style, float] = field(default_factory=dict)
    tries: Counter = field(default_factory=Counter)

    def judge(self, style: Style, glyphs: list[Glyph]) -> None:
        if style not in self.track:
            measured = 0.0 if _MATH_FONT.search(style[0]) else tracking(glyphs)
            self.tries[style] += 1
            if measured is not None or self.tries[style] >= TRIES:
                self.track[style] = measured or 0.0

    def tracked(self, style: Style) -> bool:
        return tracked(self.track.get(style))


@per_document
def _styles(doc: pymupdf.Document) -> _Styles:
    return _Styles()


def _text(line: dict[str, Any]) -> str:
    spans = line["spans"]
    return spans[0]["text"] if len(spans) == 1 else "".join([s["text"] for s in spans])


def _split_letters(text: str) -> bool:
    """Most words one letter long ("G r a p h i c a l"): tracking wider than MuPDF's rule, whatever
    the style's other lines do (a listing's "C C A C" passes too, and its gaps leave it as it is)."""
    if 3 * text.count(" ") < len(text):
        return False  # the quick test: in prose a space is one character in six
    words = text.split()
    return len(words) >= 4 and 2 * sum(len(w) == 1 and w.isalpha() for w in words) >= len(words)


def page_dict(page: pymupdf.Page, flags: int) -> dict[str, Any]:
    """`page.get_text("dict", flags=flags)` with the words of letter-spaced lines joined again.

    A span's text loses the spaces MuPDF put inside its words, and the pieces of a letter-spaced
    line MuPDF cut at its word spaces are one line again; nothing else changes. Should the glyphs
    not be readable (an odd font, another MuPDF), the page's text is MuPDF's as before.
    """
    textpage = page.get_textpage(flags=flags)
    data = textpage.extractDICT(cb=page.cropbox)
    try:
        styles = _styles(page.parent) if page.parent is not None else _Styles()
        lines = _StextLines(textpage)
        unsure: list[tuple[dict[str, Any], list[Glyph]]] = []  # read before their style was judged
        for block in data["blocks"]:
            if block.get("type", 0) == 0:
                for line in block["lines"]:
                    if line["spans"] and not _plainly_normal(line, styles):
                        unsure += _respace(line, block["number"], styles, lines)
        for line, glyphs in unsure:  # a short piece ("I n e s") before the line that judged its style
            _drop_spaces(line, glyphs, styles.track.get(_style(line)))
    except Exception as exc:  # noqa: BLE001 - the text as MuPDF reads it is always a usable answer
        log.info("letter spacing not read on page %d: %s", page.number + 1, exc)
        styles = _Styles()
    try:  # spaces that leave no room between two glyphs (word_spaces.py), in the lines not letter-spaced
        word_spaces.close_gaps(page, textpage, data, skip=lambda line: styles.tracked(_style(line)))
    except Exception as exc:  # noqa: BLE001
        log.info("word spaces not read on page %d: %s", page.number + 1, exc)
    try:
        if any(tracked(t) for t in styles.track.values()):
            for block in data["blocks"]:
                if block.get("type", 0) == 0:
                    block["lines"] = _rejoined(block["lines"], styles)
    except Exception as exc:  # noqa: BLE001
        log.info("letter spacing not read on page %d: %s", page.number + 1, exc)
    return data


def _plainly_normal(line: dict[str, Any], styles: _Styles) -> bool:
    """The quick answer for most lines: a style judged normal, and not split letter by letter (whose
    first word would be one letter and a space: "G r a p h")."""
    known = styles.track.get(_style(line))
    return known is not None and not tracked(known) and (line["spans"][0]["text"][1:2] != " " or not _split_letters(_text(line)))


def _respace(line: dict[str, Any], block_no: int, styles: _Styles,
             lines: _StextLines) -> list[tuple[dict[str, Any], list[Glyph]]]:
    """Drop the spaces inside the words of a letter-spaced line; returns the line and its glyphs
    when it is too short to measure and its style has not been judged yet."""
    if abs(line["dir"][0]) < 0.99 or line["dir"][0] < 0 or not line["spans"]:
        return []  # vertical or upside-down text: positions along x say nothing
    style = _style(line)
    if style not in styles.track and not _split_letters(text := _text(line)):
        if len(_LETTER_PAIR.findall(text)) < MIN_PAIRS:
            return []  # too short to judge the style by
        stext = lines.line(block_no, tuple(line["bbox"]))
        if stext is None:
            return []
        styles.judge(style, _line_glyphs(stext, JUDGED_GLYPHS))
        if not styles.tracked(style):
            return []
    stext = lines.line(block_no, tuple(line["bbox"]))
    if stext is None:
        return []
    glyphs = _line_glyphs(stext)
    styles.judge(style, glyphs)  # a style first seen split letter by letter
    if tracking(glyphs) is None and style not in styles.track:
        return [(line, glyphs)]
    _drop_spaces(line, glyphs, styles.track.get(style))
    return []


def _drop_spaces(line: dict[str, Any], glyphs: list[Glyph], style_track: float | None) -> None:
    """Remove from the line's spans the spaces `spaces_to_drop` names (spans and glyphs align 1:1);
    not in a math font's spans, whose italic letters stand apart as variables ("T S E")."""
    if sum(len(s["text"]) for s in line["spans"]) != len(glyphs):
        return
    drop = spaces_to_drop(glyphs, style_track)
    if not drop:
        return
    start = 0
    for span in line["spans"]:
        text = span["text"]
        if not _MATH_FONT.search(span["font"]):
            span["text"] = "".join(c for k, c in enumerate(text) if start + k not in drop)
        start += len(text)


def _rejoined(block_lines: list[dict[str, Any]], styles: _Styles) -> list[dict[str, Any]]:
    """A block's lines with the pieces of a letter-spaced line, cut where its word spaces passed
    MuPDF's column rule, joined again (a space between them)."""
    out: list[dict[str, Any]] = []
    for line in block_lines:
        prev = out[-1] if out else None
        if prev is not None and line["spans"] and prev["spans"] and _same_row(prev, line, styles):
            space = dict(prev["spans"][-1], text=" ", bbox=(prev["bbox"][2], line["bbox"][1], line["bbox"][0], line["bbox"][3]))
            prev["spans"] = prev["spans"] + [space] + line["spans"]
            prev["bbox"] = tuple(f(a, b) for f, a, b in zip((min, min, max, max), prev["bbox"], line["bbox"]))
        else:
            out.append(line)
    return out


def _same_row(a: dict[str, Any], b: dict[str, Any], styles: _Styles) -> bool:
    style = _style(b)
    if not (styles.tracked(style) and styles.tracked(_style(a))) or a["dir"] != b["dir"]:
        return False
    size = b["spans"][0]["size"]
    gap = (b["bbox"][0] - a["bbox"][2]) / max(size, 1.0)
    return abs(a["bbox"][3] - b["bbox"][3]) < 0.2 * size and 0 <= gap <= _TRACKED_SPACE + 2 * styles.track[style]
