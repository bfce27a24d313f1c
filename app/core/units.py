"""The stored unit's text format: how a page's text, a passage and a table's units are written.

Import writes these forms (ingest/, pdf/tables/) and research reads them (research/): this module
is the one place both sides agree on, so that the research stages never import the PDF reader or
the importer.

- The text file of a paper (`text/<paper_id>.md`): each page opens with a page marker.
- A page's text splits into units (`text_units`): sentences, headings and whole blocks (tables,
  equations, code). Chunks are packed from them; focusing picks among them.
- A table becomes a caption unit and one unit per row, its fields joined by `SEP`
  ("Table 3 (page 14) · L-tryptophan · Fold change: 11.46 · P-value: <0.0001").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator


def page_marker(page: int, label: str) -> str:
    return f"<!-- page {page} label {label} -->"


def pages_of_text_file(text: str) -> Iterator[tuple[int, str]]:
    """(page, text) of each page of a paper's text file."""
    marks = list(P["page_mark"].finditer(text))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        yield int(mark.group(1)), text[mark.end() : end].strip()


# -- table units -----------------------------------------------------------------------------
# Source types of the units in `content_chunks` (running text is "content").
CAPTION_UNIT = "table"
ROW_UNIT = "table_row"
LOW_ROW_UNIT = "table_row_low"  # a reagent / key-resource table's row
TABLE_TYPES = (CAPTION_UNIT, ROW_UNIT, LOW_ROW_UNIT)
# A low-ranked row's fused score is multiplied by this in retrieval: below any running passage
# that matches as well, yet still found when nothing else matches (a question about a reagent).
LOW_RANK = 0.5

SEP = " · "  # between a table unit's fields
GROUP_SEP = " › "  # a group's heading and the row's name, in the row's first field ("Female › Alzheimer")
ABBR_SEP = " = "  # an abbreviation and its long form, in a row unit's name or a column header


def where(number: str, page: int) -> str:
    """A table unit's opening field: "Table 3 (page 14)"."""
    return f"Table {number} (page {page})" if number else f"Table (page {page})"


def is_table_unit(text: str) -> bool:
    """A table's unit: a row (focusing keeps it whole, as one sentence) or the table (caption and
    rows: each line one sentence)."""
    return bool(P["unit_head"].match(text))


def is_caption_line(line: str) -> bool:
    """A table unit's first line: where it is, its caption, and its columns or its number of rows,
    not a row."""
    return bool(P["unit_head"].match(line)) and (f"{SEP}columns: " in line or line.rstrip().endswith(" rows"))


def row_name(line: str) -> str:
    """A row's name (its first cell) in a row unit or a table unit's line, without its group's
    heading ("Female › Alzheimer": "Alzheimer"); "" where it is empty."""
    fields = line.split(SEP)
    if fields and P["unit_head"].match(fields[0] + SEP):
        fields = fields[1:]
    return fields[0].split(GROUP_SEP)[-1].strip() if fields and ": " not in fields[0] else ""


# -- a page's text as units ------------------------------------------------------------------
TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """Cheap token estimate: whitespace-separated words × 1.3 (see module docstring)."""
    return int(len(text.split()) * 1.3 + 0.5)


@dataclass
class Unit:
    """An indivisible piece of a page: a heading, a sentence, or a (part of a) block."""

    start: int
    end: int
    kind: str  # heading | text | block
    para_end: bool  # ends a paragraph/block: the preferred place to end a chunk
    heading: str = ""


_PATTERNS: dict[str, str] = {
    # -- the text file's page markers ----------------------------------------------------------
    "page_mark": r"<!-- page (\d+) label (.*?) -->",
    # A row unit opens with where it is; focusing and the viewer tell a row unit by it.
    "unit_head": r"^Table(?: [\w.-]+)? \(page \d+\)" + re.escape(SEP),
    # A sentence ends at . ! ? (plus closing quotes/brackets) followed by space and a capital,
    # digit or opening bracket. Abbreviations ("e.g. Smith") may split too: harmless, sentences
    # are only packing units, the chunk text is always a contiguous slice. Medical and biology
    # journals set their citations as raised numbers after the full stop ("… reducing waste.13–17
    # However, …"), which read as part of the sentence: two sentences were one unit to focusing and
    # one quote (34 places in 10 of the 59 bench-corpus papers).
    # A sentence may also open with a name set in lower case that a digit or an inner capital marks
    # as a name, not a word run on after an abbreviation: "lme4 incorporates two built-in
    # optimizers", "mRNA levels rose", "vcovHC() is a wrapper" (the lme4 paper's sentence on its
    # optimizers was one 500-character unit with the sentence before it, too long to quote).
    "sentence_end": r"(?:(?<=[a-z)])[.!?]\d{1,3}(?:[–,-]\d{1,3})*|[.!?])[\"”’')\]]*\s+(?=[A-Z(\[\"“‘]|[a-z]+[A-Z0-9])",
    "abbrev": r"(?i)(?:\b(?:al|e\.g|i\.e|cf|etc|fig|figs|eq|eqs|sec|no|vs|resp|approx|dr|mr|mrs|ms|prof|st)|\b[A-Z])\.$",
    "heading": r"#{1,6} \S",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def _paragraphs(md: str) -> Iterator[tuple[int, int]]:
    """Spans of blank-line-separated paragraphs; a ``` fence stays one paragraph."""
    pos = 0
    start: int | None = None
    in_fence = False
    for line in md.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("```"):
            if start is None:
                start = pos
            in_fence = not in_fence
        elif not stripped and not in_fence:
            if start is not None:
                yield start, pos
                start = None
        elif start is None:
            start = pos
        pos += len(line)
    if start is not None:
        yield start, pos


def _split_by(md: str, s: int, e: int, pattern: str, limit: int, count: TokenCounter) -> list[tuple[int, int]]:
    """Cut md[s:e] into pieces of at most `limit` tokens at matches of `pattern`.

    Items are lines (for blocks), then words, then characters for an item that is
    still too big. Each piece is found by binary search over item ends.
    """
    items = [(s + m.start(), s + m.end()) for m in re.finditer(pattern, md[s:e])] if pattern else [
        (i, i + 1) for i in range(s, e)
    ]
    pieces: list[tuple[int, int]] = []
    i = 0
    while i < len(items):
        lo, hi = i, len(items) - 1
        while lo < hi:  # largest j with count(items[i..j]) <= limit
            mid = (lo + hi + 1) // 2
            if count(md[items[i][0]:items[mid][1]]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        j = lo
        a, b = items[i][0], items[j][1]
        if count(md[a:b]) > limit and pattern:
            # A single line or word above the limit: split it more finely.
            finer = r"\S+" if pattern != r"\S+" else ""
            pieces.extend(_split_by(md, a, b, finer, limit, count))
        else:
            pieces.append((a, b))
        i = j + 1
    return pieces


def unit_spans(md: str, max_tokens: int, count: TokenCounter) -> list[Unit]:
    units: list[Unit] = []
    for ps, pe in _paragraphs(md):
        para = md[ps:pe]
        # Trim surrounding whitespace so chunk spans start and end on text.
        s = ps + (len(para) - len(para.lstrip()))
        e = pe - (len(para) - len(para.rstrip()))
        if s >= e:
            continue
        text = md[s:e]
        if "\n" not in text and P["heading"].match(text):
            units.append(Unit(s, e, "heading", True, heading=text.lstrip("#").strip()))
        elif "\n" in text:
            # Code, equations, tables: whole unless bigger than a chunk, then cut at lines.
            pieces = [(s, e)] if count(text) <= max_tokens else _split_by(md, s, e, r"[^\n]*\S[^\n]*", max_tokens, count)
            for k, (a, b) in enumerate(pieces):
                units.append(Unit(a, b, "block", k == len(pieces) - 1))
        else:
            ends = [m for m in P["sentence_end"].finditer(text) if not P["abbrev"].search(text[max(0, m.start() - 8):m.start() + 1])]
            bounds = [s] + [s + m.end() for m in ends] + [e]
            sentences = []
            for a, b in zip(bounds, bounds[1:]):
                b = a + len(md[a:b].rstrip())
                if a < b:
                    sentences.append((a, b))
            for idx, (a, b) in enumerate(sentences):
                pieces = [(a, b)] if count(md[a:b]) <= max_tokens else _split_by(md, a, b, r"\S+", max_tokens, count)
                last_sentence = idx == len(sentences) - 1
                for k, (x, y) in enumerate(pieces):
                    units.append(Unit(x, y, "text", last_sentence and k == len(pieces) - 1))
    return units


def text_units(md: str, max_tokens: int = 500, count_tokens: TokenCounter = approx_tokens) -> list[tuple[int, int, str]]:
    """Sentences, headings and whole blocks (tables, equations, code) of `md` as (start, end, kind).

    The same units chunks are packed from; evidence focusing (research/evidence/focus.py) picks
    among them, so a kept "sentence" is never half a table or half an equation.
    """
    return [(u.start, u.end, u.kind) for u in unit_spans(md, max_tokens, count_tokens)]
