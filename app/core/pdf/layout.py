"""Page layout to markdown: a page's rows and blocks (pdf_rows.py) classified and rendered.

The page markdown is deliberately close to PyMuPDF's own plain text (same characters,
same reading order); we only add "#" heading markers and code fences, join a paragraph's
lines into one line and remove line-break hyphens. That keeps every chunk findable on its
page again (`pdf_extract.locate_text` / `page.search_for`) for highlighting.

Conventions of the markdown that `chunking` relies on:
- blocks are separated by a blank line;
- a prose paragraph is a single line;
- a heading is one line starting with "#";
- code is fenced with ``` and keeps its lines; equations and table-like blocks keep their
  line breaks, so "a block with inner newlines" means "do not split at sentences".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable

import pymupdf

from ..text.line_breaks import join_lines, runs_on
from .page_furniture import COPYRIGHT_NOTICE, is_furniture, per_document, running_heads
from .rows import Block, Row, page_blocks


@per_document
def _body_size(doc: pymupdf.Document, sample_pages: int = 5) -> float:
    """The most common font size (by characters) over a sample of pages: the body text.

    Cached per document: metadata extraction and page iteration both need it.
    """
    n = doc.page_count
    picks = sorted({round(i * (n - 1) / max(1, sample_pages - 1)) for i in range(min(n, sample_pages))})
    sizes: Counter[float] = Counter()
    for pno in picks:
        for block in page_blocks(doc.load_page(pno)):
            for r in block.rows:
                sizes[r.size] += r.chars
    return sizes.most_common(1)[0][0] if sizes else 10.0


# How much of the column's width a heading set in the paragraph's own block may take. A bold first
# row wider than 0.7 is more often a bold lead-in sentence; a row in a face of its own needs only to
# stop short of the column's edge, as a paragraph's first line never does ("Study approach,
# sampling and data analysis" takes 0.76 of BMC's column).
_BOLD_WIDTH = 0.7
_APART_WIDTH = 0.9


# A publisher's notice printed on every page in a larger type ("Copyright © 2022 Wolters Kluwer
# Health, Inc. All rights reserved.") is never a heading (page_furniture.COPYRIGHT_NOTICE): it named
# the section of every passage after it. "3. Copyright and fair use" stays one.

_PATTERNS: dict[str, str] = {
    "section_words": r"(?i)^(abstract|introduction|background|related work|methods?|methodology|results|discussion|"
                     r"conclusions?|summary|acknowledge?ments?|references|bibliography|appendix|contents)\b",
    # A section name in capitals on a line of its own at the top of a paragraph ("DISCUSSION" over
    # "This paper presents …", as medical and Frontiers templates set it): the section starts there.
    "run_in_section": r"(?:ABSTRACT|INTRODUCTION|BACKGROUND|(?:MATERIALS?|PATIENTS|SUBJECTS) AND METHODS|METHODS?|METHODOLOGY|"
                      r"RESULTS(?: AND DISCUSSION)?|DISCUSSION|CONCLUSIONS?|ACKNOWLEDGE?MENTS?|REFERENCES)",
    "numbered": r"^(\d+(\.\d+)*\.?|[A-Z]\.(\d+\.?)*|[IVX]+\.)\s+\S",
    "section_number": r"^(\d+\.(\d+\.?)*|[A-Z]\.\d+\.?|[IVX]+\.)\s+\S",  # with a dot: not "2019 data"
    # A label that opens a caption on a line of its own ("Table 2", "Figure 3"): never a heading.
    "caption_label": r"(?i)^(?:table|fig(?:ure)?\.?|scheme|box|chart|plate)\s*[A-Z]?\d",
    "number_cell": r"(\d+\.)*\d+\.?|[A-Z](\.\d+)*\.?|[IVX]+\.",  # a section number set apart from its title
    # A short paragraph set larger than the body is not a heading when it reads as a sentence: eight
    # words or more that end with a full stop, or hold one sentence's end and the next one's start.
    # Short medical papers set a long reference list in small type, so the body-size estimate takes
    # the list's 7.3 pt for the body, and their 9.8 pt paragraphs of two lines ("from 0.193 to 0.920
    # and 0.059 to 0.714, respectively, … (Table 2).") were headings: never evidence, and the name of
    # every passage after them. Over both corpora this turns 5 of 841 headings into prose, all of
    # them sentences; "Appendix. Model specification" and "7.5 Monte-Carlo … vs. Weight Scaling" stay.
    "sentence_end": r"[a-z]{2,}\.\s+[A-Z][a-z]",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
_HEADING_WORDS = 8
_SUBHEADING_MAX_WORDS = 20


def _reads_as_sentence(text: str) -> bool:
    if len(text.split()) < _HEADING_WORDS:
        return False
    return text.rstrip().endswith(".") or P["sentence_end"].search(text) is not None


def _sentence_part(text: str, words: int) -> bool:
    """A paragraph set 1.15-1.5 times the body size that is part of a sentence: the lower-case rest of one
    ("incorporating surgical team dynamics by considering …"), or 20 words and more, cut by a page break
    before its full stop ("In a subgroup analysis of 4117 elective cases from … performed 46.8%").
    A title is set larger, and may open in lower case ("zoo: An S3 Class and Methods for …")."""
    return words >= _SUBHEADING_MAX_WORDS or (words >= _HEADING_WORDS and text[:1].islower())


def _classify(block: Block, body: float) -> None:
    text = block.text
    words = len(text.split())
    size = block.size
    # Headings are words: not formulas (big integral signs and brackets are set large too).
    short = (len(block.rows) <= 3 and len(text) <= 160 and not text.endswith((",", ";"))
             and not COPYRIGHT_NOTICE.search(text) and not _reads_as_sentence(text)
             and re.search(r"[^\W\d_]{3}", text) is not None
             and sum(c.isalpha() or c == " " for c in text) >= 0.6 * len(text)
             and block.share("math") < 0.2 and block.share("mono") < 0.5)
    if short and size >= body * 1.15 and (size >= body * 1.5 or not _sentence_part(text, words)):
        block.kind = "heading"
        block.level = 1 if size >= body * 1.5 else 2
        return
    # Smaller headings are bold: slightly larger than body text, or body-sized and
    # numbered ("2.1. Data") or a standard section name. A bold lead-in inside a paragraph
    # is not a block of its own, and bold figure labels are rarely numbered.
    bold = block.share("bold")
    numbered = P["numbered"].match(text) is not None or P["section_words"].match(text) is not None
    if short and words <= 14 and not any(_cells(r) for r in block.rows) and (
        (size >= body * 1.05 and bold >= 0.5) or (size >= body * 0.95 and bold >= 0.6 and numbered)
        or (block.apart and _opens_as_heading(text))
    ):
        block.kind = "heading"
        block.level = 3
        return
    if block.share("mono") >= 0.7:
        block.kind = "code"
        return
    if len(block.rows) >= 2:
        lengths = sorted(len(r.text) for r in block.rows)
        median = lengths[len(lengths) // 2]
        # Equations and tables: math fonts, or many short rows. Keep their line breaks.
        if block.share("math") >= 0.3 or median < 30:
            block.kind = "lines"
            return
        # A table with long cells ("Dropout NN + max-norm constraint | ReLU | 3 layers, 1024
        # units | 1.06"): most rows are three or more pieces on one baseline. Joined as prose,
        # its rows ran together and the model read one method's error as another's.
        cells = sum(len(r.pieces) >= 3 for r in block.rows)
        if cells >= 3 and 2 * cells >= len(block.rows):
            block.kind = "lines"


def _code_lines(rows: list[Row]) -> str:
    """Code rows with their indentation rebuilt from x positions (monospace ≈ 0.55 em wide)."""
    left = min(r.bbox[0] for r in rows)
    return "\n".join(" " * round((r.bbox[0] - left) / (0.55 * r.size)) + r.text for r in rows)


_BULLETS = tuple("•◦▪▫●○■□‣⁃")


def _join_prose(rows: list[Row], words: Counter | None = None) -> str:
    """Join a paragraph's rows into one line, removing line-break hyphens ("compu-tation") but not
    a compound's ("velocity-dependent"), as the document's `words` spell them (line_breaks.py).

    List items ("• ...") each keep a line of their own.
    """
    out = rows[0].text
    for r in rows[1:]:
        nxt = r.text
        if nxt.startswith(_BULLETS):
            out = f"{out}\n{nxt}"
        elif out.endswith("\u00ad") and len(out) >= 2 and out[-2].isalpha():  # a soft hyphen is the typesetter's, never the word's
            out = out[:-1] + nxt
        else:
            out = join_lines(out, nxt, words)
    return out.replace("\u00ad", "")


def _drop_cap(cap: Block, b: Block, text: str) -> bool:
    """A paragraph's first letter set large ("C" | "onducting an …"); a math font's "Z" or "X" is an integral or a sum."""
    return (cap.kind == "prose" and len(cap.text) == 1 and cap.text.isupper() and cap.share("math") < 0.5
            and cap.size >= 1.8 * b.size and text[:1].islower())


def _escape(text: str) -> str:
    """Escape a "#" that starts a line of ordinary text, so it is not read as a heading."""
    return re.sub(r"(?m)^#", r"\\#", text)


def _render(blocks: list[Block], words: Counter | None = None) -> str:
    parts: list[str] = []
    prev: Block | None = None
    code_rows: list[Row] = []
    for b in blocks:
        if b.kind == "heading":
            text = b.text
            # A heading wrapped over two blocks (long titles): one heading line.
            # A numbered one ("1.1 Cluster computing" under "1. INTRODUCTION") starts a section of its own.
            if (prev is not None and prev.kind == "heading" and prev.level == b.level and not P["section_number"].match(text)
                    and abs(prev.size - b.size) < 0.5 and b.bbox[1] - prev.bbox[3] < b.size):
                parts[-1] = f"{parts[-1]} {text}"
            else:
                parts.append("#" * b.level + " " + text)
        elif b.kind == "code":
            # Consecutive code blocks in one column are one listing: one fence, and
            # indentation measured from the listing's left edge.
            if prev is not None and code_rows and prev.kind == "code" and b.bbox[0] < prev.bbox[2]:
                code_rows.extend(b.rows)
                parts[-1] = "```\n" + _code_lines(code_rows) + "\n```"
            else:
                code_rows = list(b.rows)
                parts.append("```\n" + _code_lines(code_rows) + "\n```")
        elif b.kind == "lines":
            parts.append(_escape("\n".join(r.text for r in b.rows)))
        else:
            rows, run_in = b.rows, len(b.rows) >= 2 and P["run_in_section"].fullmatch(b.rows[0].text.strip())
            if run_in:
                parts.append("## " + rows[0].text.strip())
            text = _escape(_join_prose(rows[1:] if run_in else rows, words))
            if run_in or prev is None or not parts:
                parts.append(text)
            elif _drop_cap(prev, b, text):
                parts[-1] = parts[-1] + text
            elif prev.kind == "prose" and not parts[-1].rsplit("\n", 1)[-1].startswith(_BULLETS) and runs_on(parts[-1], text):
                parts[-1] = join_lines(parts[-1], text, words)
            else:
                parts.append(text)
        prev = b
    return "\n\n".join(p for p in parts if p.strip())


def _cells(row: Row) -> bool:
    """The row is set in gap-separated cells (a table's bold header), not a number and its title."""
    pieces = [p.strip() for p in row.pieces if p.strip()]
    return len(pieces) > 2 or (len(pieces) == 2 and not P["number_cell"].fullmatch(pieces[0]))


def _opens_as_heading(text: str) -> bool:
    """A line set apart by its face alone reads as a heading: it opens with a capital or a section
    number and ends without a sentence's or a list's punctuation, and is no caption's label."""
    return (text[:1].isupper() or text[:1].isdigit()) and not text.endswith((".", ",", ";", ":")) and not P["caption_label"].match(text)


def _face_apart(first: Row, rest: list[Row]) -> bool:
    """The row is set in a face none of the rows under it uses, at about their size or larger: BMC's
    subheadings ("Setting", "Study approach, sampling and data analysis") are a 9.2 pt sans over a
    9.8 pt serif, and their font names say nothing of weight. The row under it must not open in the
    heading's face: an italic title that wraps ("Computer Architecture: A Hardware/Software" over
    "Approach. Morgan Kaufmann…") goes on in the face it was set in."""
    return (bool(first.face) and not first.bold and all(r.face != first.face for r in rest)
            and rest[0].opens != first.face and first.size >= 0.9 * rest[0].size)


def _heading_apart(block: Block, body: float) -> list[Block]:
    """The block, or its first row apart where that row is a heading set in the paragraph's own
    block: short of the column's width, above rows that are not bold, and bold itself or set in a
    face of its own (`_face_apart`). PyMuPDF gives BMC's "Methods" and "Results" one block with the
    text under them, so they were read as its first words ("Results The results reported below…")
    and the paper had no sections."""
    if len(block.rows) < 2:
        return [block]
    first, rest = block.rows[0], block.rows[1:]
    widest = max(r.bbox[2] - r.bbox[0] for r in block.rows)
    bold = first.bold >= 0.8 * first.chars
    apart = not bold and _face_apart(first, rest)
    if not (first.chars and not _cells(first) and (bold or apart)
            and rest[0].bold < 0.5 * max(1, rest[0].chars)
            and first.bbox[2] - first.bbox[0] <= (_APART_WIDTH if apart else _BOLD_WIDTH) * widest
            and len(first.text.split()) <= _HEADING_WORDS):
        return [block]
    under = Block(rest, (min(r.bbox[0] for r in rest), min(r.bbox[1] for r in rest),
                         max(r.bbox[2] for r in rest), max(r.bbox[3] for r in rest)))
    if not bold:  # a face of its own heads a paragraph; over a table's rows it is a column's label ("Male"),
        _classify(under, body)  # over one line a front page's note ("Draft version July 14, 2017" over "Typeset using…")
        if under.kind != "prose" or len(rest) < 2:
            return [block]
    head = Block([first], first.bbox, apart=not bold)
    _classify(head, body)
    # The paragraph may open with a subheading of its own ("Methods" over "Setting" over the text).
    return [head, *_heading_apart(under, body)] if head.kind == "heading" else [block]


def _classified_blocks(page: pymupdf.Page, body_size: float,
                       name_line: Callable[[str], object] | None = None) -> list[Block]:
    """Blocks of a page, furniture dropped, classified. `name_line(text)` is truthy for a line of
    author names (metadata's reader, passed in so that layout does not depend on metadata)."""
    # The first page keeps its margin lines whatever repeats: its title and journal line are
    # where metadata comes from, and a title is set where later pages run their head.
    running = running_heads(page.parent, page_blocks) if page.number else frozenset()
    blocks = [b for b in page_blocks(page) if not is_furniture(b, page.rect, body_size, running)]
    blocks = [piece for b in blocks for piece in _heading_apart(b, body_size)]
    for b in blocks:
        _classify(b, body_size)
    if page.number == 0:
        # Author names under the title are often set large; they are not section headings.
        for b in blocks[1:12]:
            if P["section_words"].match(b.text):
                break
            if b.kind == "heading" and b.level > 1 and name_line and name_line(b.rows[0].pieces[0]):
                b.kind = "prose"
    return blocks


def page_markdown(page: pymupdf.Page, body_size: float, name_line: Callable[[str], object] | None = None,
                  words: Counter | None = None) -> str:
    """Markdown for one page (see the module docstring for its conventions); `words`: the document's
    spellings (line_breaks.document_words), which decide a word broken at a line's end."""
    return _render(_classified_blocks(page, body_size, name_line), words)
