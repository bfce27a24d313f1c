"""Word boundaries from the glyphs: a space is where the type leaves one, checked by the paper's words.

MuPDF ends a word at a space character, drawn by the PDF or added by MuPDF where two glyphs
stand apart. Some producers draw spaces that leave no room at all: Oxford University Press's
Nucleic Acids Research PDFs (Acrobat Distiller) carry a "dummy-space" glyph wherever the
typesetter kerned a pair, so MuPDF reads "Lineag e-det ermining", "kno wn f or", "ha v e",
"Gerg ely Nag y" where the page prints "Lineage-determining", "known for", "have", "Gergely Nagy".

The room a space leaves is the gap between the glyph before it and the glyph after it (the next
word's left edge minus the previous one's advance), in em of the larger of the two. In the two
NAR papers of ../shared/corpus/printed the gaps at those false spaces are -0.07 to +0.03 em (a
kerning pair), at real word spaces 0.15 em and more (a justified line squeezing the font's
0.25-0.28 em space); over the 59 papers of the two bench corpora no space between two letters
of text has a gap under 0.10 em. A line's own word spaces set the scale (`word_space`: the median
of its gaps that can be word spaces, at least `SPACE_FLOOR`, about the narrowest space a font
sets), and a space is

- inside a word (`KERN`) when its gap is under `KERN_SHARE` of that and under `KERN_MAX`: it
  goes, whatever stands on either side ("( Spi1 )", "Daniel, B. , Nagy" print "(Spi1)",
  "Daniel,B., Nagy"), unless it sits between two letters and the paper's words say otherwise;
- in doubt (`DOUBT`) when under `DOUBT_SHARE` of it (and under `PLAUSIBLE`), between two
  letters of one size: it goes only where the paper's words say so;
- a word space otherwise, as MuPDF reads it.

Never judged: a gap beside a spacing accent (TeX's, joined by accents.py) or in a math font (a
formula's variables stand where they stand), vertical or upside-down lines, and the lines of a
letter-spaced style (letter_spacing.py, whose tracking moves every gap; it calls this module).

The paper's words (`Vocabulary`) are the letter runs it prints whole: touching no gap between two
letters as close as one inside a word. A space between two letters inside a word stays where the word it would make
is printed nowhere whole while the pieces on either side are (words of two letters or more); a
space in doubt goes only where the word it makes is printed whole and a piece is not. So "kno wn"
and "se v eral" join by their gaps, and a squeezed "published immediately" stays two words.

Reading: one pass over the document (`document`, once per document, when a page is first read)
takes every page's words and plain text (`extractWORDS` beside the text the old pass for
line_breaks' spellings read) and finds the lines where two words stand as close as a gap inside a
word can, by their boxes' heights (`_narrow_lines`: a page opens only where two words of one
height do, so a formula's indices alone do not open one; only such lines are judged, so a space
is in doubt only on a line with a gap inside a word). It gives line_breaks its spellings
(`spellings`) with those gaps closed, and keeps the pages' text for the paper's words, counted the
first time a gap between two letters asks for them. The first time a page with such lines is read,
its dict's fonts and sizes judge them (`page_closed`) and the gaps to close are kept, with each
line's words as read; every later reading of the page closes them in its dict (`close_gaps`), and
`page_words` gives MuPDF's words joined the same way, one box around each, for finding a passage on
the page again (`as_read` writes a passage as MuPDF reads the page, for its search).

Long module: the rule for a line's gaps, the paper's words that check it and the reading that
applies it to every text path (dict, words, search) are one decision; apart, the page's text and the
highlight's search could close different spaces.

Measured (2026-12-07, bench/printed.py, docs/lab/2026-12-07-printed.md): words split inside 351
of 30,407 body tokens of the two NAR papers before, none after; the bench corpora's text changes
on 6 lines of 59 papers (a formula's "−→p )" reads "−→p)", "Development ," reads "Development,").
"""

from __future__ import annotations

import bisect
import logging
import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from ..text.line_breaks import document_words
from .accents import TYPOGRAPHIC_ACCENTS, join_accents
from .page_furniture import per_document

log = logging.getLogger(__name__)

# pdf_rows.TEXT_FLAGS (not imported: rows imports letter_spacing, which imports this module).
FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
KERN_SHARE = 0.35  # of the line's word space: a gap under it sits inside a word…
KERN_MAX = 0.10  # em: …and under this (no word space between two letters of the corpora was narrower)
DOUBT_SHARE = 0.6  # of the line's word space: under it (and under PLAUSIBLE) a gap between letters is in doubt
SPACE_FLOOR = 0.2  # em: about the narrowest word space a font sets (Times' 0.25 em, squeezed by justification)
PLAUSIBLE = 0.15  # em: a gap from here on can be a word space, and sets the line's word space
HEIGHT_SHARE = 0.9  # a word's box is about this many em high or more (font ascender to descender): the quick pass's scale
KERN, DOUBT = "kern", "doubt"
_ACCENTS = frozenset(TYPOGRAPHIC_ACCENTS + "`")
SPLIT = "\x01"  # marks a gap between two letters inside a word or in doubt in the text the vocabulary counts
_PATTERNS: dict[str, str] = {
    "run": r"[^\x00-\x20\u00a0]+",  # MuPDF's words: runs between whitespace and control characters
    "letters": r"[^\W\d_]+",
    "math_font": r"(?i)^(cmmi|cmsy|cmex|msbm|eufm|rsfs)|math|symbol",
    "at_split": r"[^\W\d_]*\x01[^\W\d_]*",
    "broken_at_end": r"[^\W\d_]+-\n[^\W\d_]+",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}

LineKey = tuple[int, int]  # (block number, line number) as MuPDF numbers them on a page


@dataclass(frozen=True)
class Gap:
    """The space between a line's word `k` and word `k + 1` (MuPDF's words)."""

    k: int
    em: float
    letters: bool  # a letter on either side
    alike: bool  # one size on either side
    text: bool = True  # neither side in a math font nor a spacing accent


def word_space(gaps: list[float]) -> float:
    """The line's word space (em): the median of its gaps that can be word spaces, at least `SPACE_FLOOR`."""
    wide = [g for g in gaps if g >= PLAUSIBLE]
    return max(statistics.median(wide), SPACE_FLOOR) if wide else SPACE_FLOOR


def zones(gaps: list[Gap]) -> dict[int, str]:
    """The gaps of one line inside a word (KERN) or in doubt (DOUBT), by their index `k`."""
    if not gaps:
        return {}
    space = word_space([g.em for g in gaps])
    kern, doubt = min(KERN_SHARE * space, KERN_MAX), min(DOUBT_SHARE * space, PLAUSIBLE)
    out = {}
    for g in gaps:
        if not g.text:
            continue
        if g.em < kern:
            out[g.k] = KERN
        elif g.em < doubt and g.letters and g.alike:
            out[g.k] = DOUBT
    return out


# --------------------------------------------------------------------------- one line


@dataclass
class _Line:
    """A dict line with MuPDF's words of it: their texts are the line's runs between spaces."""

    line: dict[str, Any]
    runs: list[str]
    starts: list[int]  # where each run starts in the line's text
    ends: list[int]
    text: str
    span_starts: list[int]  # where each span starts in the line's text


def _line(line: dict[str, Any]) -> _Line:
    spans = line["spans"]
    text = "".join(s["text"] for s in spans)
    runs = list(P["run"].finditer(text))
    span_starts, at = [], 0
    for s in spans:
        span_starts.append(at)
        at += len(s["text"])
    return _Line(line, [r.group() for r in runs], [r.start() for r in runs], [r.end() for r in runs], text, span_starts)


def _span(ln: _Line, pos: int) -> dict[str, Any]:
    return ln.line["spans"][bisect.bisect_right(ln.span_starts, pos) - 1]


def line_gaps(ln: _Line, words: list[tuple]) -> list[Gap]:
    """The gaps between the line's words (`words`: MuPDF's, one per run of `ln`)."""
    out = []
    for k in range(len(words) - 1):
        a, b = _span(ln, ln.ends[k] - 1), _span(ln, ln.starts[k + 1])
        size = max(a["size"], b["size"], 1.0)
        left, right = ln.text[ln.ends[k] - 1], ln.text[ln.starts[k + 1]]
        text = (left not in _ACCENTS and right not in _ACCENTS
                and not P["math_font"].search(a["font"]) and not P["math_font"].search(b["font"]))
        out.append(Gap(k, (words[k + 1][0] - words[k][2]) / size, left.isalpha() and right.isalpha(),
                       abs(a["size"] - b["size"]) <= 0.1 * size, text))
    return out


def _pieces(runs: list[str], k: int, zone_of: dict[int, str]) -> tuple[str, str, str]:
    """(word, left piece, right piece): the letters across gap `k`, with the line's runs joined
    across every gap inside a word or in doubt around it ("Lineag e-det ermining", gap 0:
    "Lineage", "Lineag", "e")."""
    lo = k
    while lo - 1 in zone_of:
        lo -= 1
    hi = k + 1
    while hi in zone_of:
        hi += 1
    parts = runs[lo:hi + 1]
    joined = "".join(parts)
    bounds = [sum(len(r) for r in parts[:i]) for i in range(1, len(parts))]
    cut = bounds[k - lo]
    for m in P["letters"].finditer(joined):
        if m.start() < cut < m.end():
            left = max([b for b in bounds if m.start() < b < cut], default=m.start())
            right = min([b for b in bounds if cut < b < m.end()], default=m.end())
            return m.group(), joined[left:cut], joined[cut:right]
    return "", "", ""


# --------------------------------------------------------------------------- the paper's words


@dataclass
class Vocabulary:
    """The words a document prints whole (lower case): letter runs touching no gap between two
    letters as close as one inside a word."""

    whole: Counter = field(default_factory=Counter)

    def printed(self, word: str) -> bool:
        return self.whole[word.lower()] > 0

    def is_word(self, piece: str) -> bool:
        return len(piece) >= 2 and self.printed(piece)

    def joins(self, zone: str, word: str, left: str, right: str) -> bool:
        """Whether a gap between two letters in `zone` is inside `word` (pieces `left`, `right`)."""
        if not word:
            return zone == KERN
        both = self.is_word(left) and self.is_word(right)
        if zone == KERN:
            return self.printed(word) or not both
        return self.printed(word) and not both

    def count(self, text: str) -> None:
        """Count the letter runs of a page's plain text, but those touching a `SPLIT` mark (a gap
        inside a word or in doubt, between two letters) and the two pieces of a word broken at a
        line's end."""
        if SPLIT in text:
            text = P["at_split"].sub(" ", text)
        self.whole.update(P["letters"].findall(P["broken_at_end"].sub(" ", text).lower()))


def decide(runs: list[str], gaps: list[Gap], zone_of: dict[int, str],
           vocab: Callable[[], Vocabulary] | None) -> set[int]:
    """The gaps of one line to close: inside a word, or in doubt, as the paper's words say (asked
    only for a gap between two letters; with none, by the gaps alone: every gap inside a word)."""
    close = set()
    for g in gaps:
        zone = zone_of.get(g.k)
        if zone is None:
            continue
        if not g.letters or vocab is None:
            if zone == KERN:
                close.add(g.k)
            continue
        if vocab().joins(zone, *_pieces(runs, g.k, zone_of)):
            close.add(g.k)
    return close


# --------------------------------------------------------------------------- a page


def _words_by_line(words: list[tuple]) -> dict[LineKey, list[tuple]]:
    by: dict[LineKey, list[tuple]] = {}
    for w in words:
        by.setdefault((w[5], w[6]), []).append(w)
    return by


def _narrow_lines(words: list[tuple]) -> set[LineKey]:
    """The quick look at a page before its fonts and sizes are read: the lines where two words stand
    as close as a gap inside a word can (a word's box is at least `HEIGHT_SHARE` em high), none
    where no two words of one height do, no spacing accent beside the gap (a formula's indices
    and raised marks alone do not make a page worth reading closer)."""
    lines: set[LineKey] = set()
    alike = False
    factor = KERN_MAX / HEIGHT_SHARE
    for a, b in zip(words, words[1:]):
        if a[6] != b[6] or a[5] != b[5]:
            continue
        ha, hb = a[3] - a[1], b[3] - b[1]
        if b[0] - a[2] < factor * (ha if ha > hb else hb) and a[4][-1] not in _ACCENTS and b[4][0] not in _ACCENTS:
            lines.add((a[5], a[6]))
            alike = alike or abs(ha - hb) <= 0.1 * max(ha, hb)
    return lines if alike else set()


@dataclass
class _Split:
    """A line with gaps inside a word or in doubt, as the document pass read it."""

    runs: list[str]
    gaps: list[Gap]
    zone_of: dict[int, str]


def _split_lines(data: dict[str, Any], words: list[tuple], narrow: set[LineKey] | None = None) -> dict[LineKey, _Split]:
    """The page's lines with a gap inside a word or in doubt (`data`: the page's dict, `words`:
    its words, from one text page; `narrow`: the lines to look at, all where None)."""
    by = _words_by_line(words if narrow is None else [w for w in words if (w[5], w[6]) in narrow])
    out = {}
    for block in data["blocks"]:
        if block.get("type", 0) != 0:
            continue
        for i, line in enumerate(block["lines"]):
            line_words = by.get((block["number"], i), [])
            if len(line_words) < 2 or not line["spans"] or line["dir"][0] < 0.99:
                continue  # one word; vertical or upside-down text
            limit = PLAUSIBLE * max(s["size"] for s in line["spans"])
            if all(b[0] - a[2] >= limit for a, b in zip(line_words, line_words[1:])):
                continue
            ln = _line(line)
            if ln.runs != [w[4] for w in line_words]:
                continue
            gaps = line_gaps(ln, line_words)
            zone_of = zones(gaps)
            if zone_of:
                out[(block["number"], i)] = _Split(ln.runs, gaps, zone_of)
    return out


# --------------------------------------------------------------------------- the document


Closed = dict[LineKey, tuple[list[str], frozenset[int]]]  # a page's lines: their runs as read, the gaps to close


@dataclass
class Document:
    """What the document pass keeps: the pages with words as close as a gap inside a word can be
    (and their lines), the spellings for line_breaks, the paper's words (counted when first asked,
    from the pages' text), and each page's gaps to close, judged when the page is first read."""

    narrow: dict[int, set[LineKey]] = field(default_factory=dict)
    spellings: Counter = field(default_factory=Counter)
    closed: dict[int, Closed] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)  # until the vocabulary is counted
    marked: dict[int, str] = field(default_factory=dict)
    _vocab: Vocabulary | None = None

    @property
    def vocab(self) -> Vocabulary:
        if self._vocab is None:
            self._vocab = Vocabulary()
            for i, text in enumerate(self.texts):
                self._vocab.count(self.marked.get(i, text))
            self.texts, self.marked = [], {}
        return self._vocab


def _page_text(words: list[tuple], tight: set[tuple[LineKey, int]], mark: str = "", letters: bool = False) -> str:
    """A page's plain text from its words, one line of them for each of MuPDF's lines, the gaps
    `tight` (line, k) closed, or written `mark` (with `letters`: only between two letters)."""
    lines: dict[LineKey, list[str]] = {}
    for w in words:
        lines.setdefault((w[5], w[6]), []).append(w[4])
    out = []
    for key, runs in lines.items():
        parts = []
        for k, r in enumerate(runs):
            parts.append(r)
            if k < len(runs) - 1:
                close = (key, k) in tight and (not letters or (r[-1:].isalpha() and runs[k + 1][:1].isalpha()))
                parts.append(mark if close else " ")
        out.append("".join(parts))
    return "\n".join(out)


def _tight(words: list[tuple], narrow: set[LineKey]) -> set[tuple[LineKey, int]]:
    """The gaps (line, k) of the `narrow` lines as close as `_narrow_lines` looks for: inside a
    word by the words' heights alone, for the spellings and the paper's words."""
    out = set()
    for key, line_words in _words_by_line([w for w in words if (w[5], w[6]) in narrow]).items():
        for k, (a, b) in enumerate(zip(line_words, line_words[1:])):
            if b[0] - a[2] < KERN_MAX / HEIGHT_SHARE * max(a[3] - a[1], b[3] - b[1]) \
                    and a[4][-1] not in _ACCENTS and b[4][0] not in _ACCENTS:
                out.add((key, k))
    return out


@per_document
def document(doc: pymupdf.Document) -> Document:
    """Read every page's words once (see the module docstring); a page MuPDF cannot read is left out."""
    result = Document()
    for pno in range(doc.page_count):
        try:
            textpage = doc.load_page(pno).get_textpage(flags=FLAGS)
            words = textpage.extractWORDS()
            narrow = _narrow_lines(words)
            text = textpage.extractText() if not narrow else ""
        except Exception as exc:  # noqa: BLE001 - a damaged page has no words to give
            log.info("page %d: words not read: %s", pno + 1, exc)
            continue
        if narrow:
            result.narrow[pno] = narrow
            tight = _tight(words, narrow)
            result.marked[len(result.texts)] = _page_text(words, tight, SPLIT, letters=True)
            text = _page_text(words, tight)
        result.texts.append(text)
    result.spellings = document_words(join_accents(t) for t in result.texts)
    if not result.narrow:
        result.texts = []  # no page will ask for the paper's words
    return result


def spellings(doc: pymupdf.Document) -> Counter:
    """How often the document spells each word within a line (line_breaks.document_words), read
    with its spaces inside words closed (by the words' heights: the sizes are read page by page)."""
    return document(doc).spellings


def page_closed(page: pymupdf.Page, data: dict[str, Any] | None = None, words: list[tuple] | None = None) -> Closed:
    """The page's gaps to close, by line: judged with the fonts and sizes of its dict `data` (read
    with FLAGS, `words` from the same text page) the first time the page is read, then kept."""
    doc = page.parent
    if doc is None:
        return {}
    state = document(doc)
    narrow = state.narrow.get(page.number)
    if not narrow:
        return {}
    if page.number not in state.closed:
        if data is None or words is None:
            textpage = page.get_textpage(flags=FLAGS)
            data, words = textpage.extractDICT(), textpage.extractWORDS()
        closed = {}
        for key, s in _split_lines(data, words, narrow).items():
            close = decide(s.runs, s.gaps, s.zone_of, lambda: state.vocab)
            if close:
                closed[key] = (s.runs, frozenset(close))
        state.closed[page.number] = closed
    return state.closed[page.number]


def close_gaps(page: pymupdf.Page, textpage: pymupdf.TextPage, data: dict[str, Any],
               skip: Callable[[dict[str, Any]], bool] | None = None) -> None:
    """Close in the page's dict `data` (read with FLAGS from `textpage`) the spaces inside its
    words, in place: a span's space characters go, a span left empty goes. A line that does not
    read as it was judged is left as it is, and so is one that `skip(line)` names."""
    doc = page.parent
    if doc is None or not document(doc).narrow.get(page.number):
        return
    closed = page_closed(page, data, None if page.number in document(doc).closed else textpage.extractWORDS())
    if not closed:
        return
    for block in data["blocks"]:
        if block.get("type", 0) != 0:
            continue
        for i, line in enumerate(block["lines"]):
            found = closed.get((block["number"], i))
            if found is None or not line["spans"] or (skip is not None and skip(line)):
                continue
            ln = _line(line)
            if ln.runs != found[0]:
                continue
            _drop(ln, found[1])


def _drop(ln: _Line, close: frozenset[int]) -> None:
    spans = ln.line["spans"]
    cut: dict[int, list[int]] = {}  # span index: its characters to drop (positions in the line's text)
    for k in close:
        for p in range(ln.ends[k], ln.starts[k + 1]):
            cut.setdefault(bisect.bisect_right(ln.span_starts, p) - 1, []).append(p)
    for i, positions in cut.items():
        start, text = ln.span_starts[i], spans[i]["text"]
        for p in sorted(positions, reverse=True):
            text = text[:p - start] + text[p - start + 1:]
        spans[i]["text"] = text
    kept = [s for s in spans if s["text"]]
    ln.line["spans"] = kept or spans[:1]


def page_words(page: pymupdf.Page, flags: int = FLAGS) -> list[tuple]:
    """`page.get_text("words", flags=flags)` with the words a space inside them split joined again:
    one box around the pieces, one text (for finding a passage on the page again)."""
    words = page.get_text("words", flags=flags)
    closed = page_closed(page)
    if not closed:
        return words
    out: list[tuple] = []
    for key, line_words in _words_by_line(words).items():
        found = closed.get(key)
        close = found[1] if found is not None and found[0] == [w[4] for w in line_words] else frozenset()
        joining = False
        for k, w in enumerate(line_words):
            if joining:
                last = out.pop()
                w = (min(last[0], w[0]), min(last[1], w[1]), max(last[2], w[2]), max(last[3], w[3]), last[4] + w[4], *last[5:])
            out.append(w)
            joining = k in close
    return out


def as_read(page: pymupdf.Page, text: str) -> str:
    """`text` with each word that `page` prints with a space inside it (closed by this module)
    written as MuPDF reads it there ("marrow-derived" → "marro w-deriv ed"), for MuPDF's search; ""
    where the page has no such word or `text` holds none of them."""
    closed = page_closed(page)
    if not closed:
        return ""
    read: dict[str, str] = {}
    for runs, close in closed.values():
        k = 0
        while k < len(runs):
            j = k
            while j in close:
                j += 1
            if j > k:
                read.setdefault("".join(runs[k:j + 1]), " ".join(runs[k:j + 1]))
            k = j + 1
    tokens = text.split()
    if not any(t in read for t in tokens):
        return ""
    return " ".join(read.get(t, t) for t in tokens)
