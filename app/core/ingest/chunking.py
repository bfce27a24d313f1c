"""Split page markdown into retrieval chunks that follow sections and never span pages.

Every chunk is an exact slice of one page's markdown (`page.markdown[char_start:char_end]
== chunk.text`), so a citation can be turned back into a place on the PDF page.

The page markdown comes from `pdf_extract` and follows its conventions: blocks separated
by blank lines, a prose paragraph on one line, headings start with "#", and blocks that
keep their line breaks (code fences, equations, tables) must not be cut at sentences.

Sizes are in tokens of the embedding model. The default counter is an approximation
(whitespace words × 1.3): it needs no tokenizer, costs almost nothing, and is close to
WordPiece counts for English prose (≈1.2–1.4 pieces per word; more for formulas and code,
so real chunks of symbol-heavy text run somewhat longer). Pass the model's own tokenizer
as `count_tokens` where exact sizes matter: `token_counter(embedder)` gives it where the
embedder has a local tokenizer, and the estimate otherwise. Note all-MiniLM-L6-v2 reads at most 256
word-pieces well (512 hard limit): with the defaults the tail of a long chunk is seen by
full-text search and by the LLM, but contributes less to the vector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from ..records import Chunk, PageText

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """Cheap token estimate: whitespace-separated words × 1.3 (see module docstring)."""
    return int(len(text.split()) * 1.3 + 0.5)


def token_counter(embedder: object | None) -> TokenCounter:
    """The embedding model's own tokenizer where it has a local one (llama.cpp), else the estimate.

    Duck-typed (`tokenizer_counter()` of models/base.py's EmbeddingModel) so that chunking
    stays free of the model layer.
    """
    make = getattr(embedder, "tokenizer_counter", None)
    counter = make() if callable(make) else None
    return counter or approx_tokens


@dataclass
class _Unit:
    """An indivisible piece of a page: a heading, a sentence, or a (part of a) block."""

    start: int
    end: int
    kind: str  # heading | text | block
    para_end: bool  # ends a paragraph/block: the preferred place to end a chunk
    heading: str = ""


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
_SENTENCE_END = re.compile(r"(?:(?<=[a-z)])[.!?]\d{1,3}(?:[–,-]\d{1,3})*|[.!?])[\"”’')\]]*\s+(?=[A-Z(\[\"“‘]|[a-z]+[A-Z0-9])")
_ABBREV = re.compile(r"(?:\b(?:al|e\.g|i\.e|cf|etc|fig|figs|eq|eqs|sec|no|vs|resp|approx|dr|mr|mrs|ms|prof|st)|\b[A-Z])\.$", re.I)


_HEADING = re.compile(r"#{1,6} \S")


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


def _units(md: str, max_tokens: int, count: TokenCounter) -> list[_Unit]:
    units: list[_Unit] = []
    for ps, pe in _paragraphs(md):
        para = md[ps:pe]
        # Trim surrounding whitespace so chunk spans start and end on text.
        s = ps + (len(para) - len(para.lstrip()))
        e = pe - (len(para) - len(para.rstrip()))
        if s >= e:
            continue
        text = md[s:e]
        if "\n" not in text and _HEADING.match(text):
            units.append(_Unit(s, e, "heading", True, heading=text.lstrip("#").strip()))
        elif "\n" in text:
            # Code, equations, tables: whole unless bigger than a chunk, then cut at lines.
            pieces = [(s, e)] if count(text) <= max_tokens else _split_by(md, s, e, r"[^\n]*\S[^\n]*", max_tokens, count)
            for k, (a, b) in enumerate(pieces):
                units.append(_Unit(a, b, "block", k == len(pieces) - 1))
        else:
            ends = [m for m in _SENTENCE_END.finditer(text) if not _ABBREV.search(text[max(0, m.start() - 8):m.start() + 1])]
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
                    units.append(_Unit(x, y, "text", last_sentence and k == len(pieces) - 1))
    return units


def text_units(md: str, max_tokens: int = 500, count_tokens: TokenCounter = approx_tokens) -> list[tuple[int, int, str]]:
    """Sentences, headings and whole blocks (tables, equations, code) of `md` as (start, end, kind).

    The same units chunks are packed from; evidence focusing (research/evidence/focus.py) picks
    among them, so a kept "sentence" is never half a table or half an equation.
    """
    return [(u.start, u.end, u.kind) for u in _units(md, max_tokens, count_tokens)]


def chunk_pages(
    paper_id: str,
    pages: Iterable[PageText],
    *,
    target_tokens: int = 400,
    max_tokens: int = 500,
    overlap_tokens: int = 100,
    count_tokens: TokenCounter = approx_tokens,
) -> Iterator[Chunk]:
    """Chunks of a paper's pages, in order (pages are consumed lazily, one at a time).

    - a heading starts a new chunk; `section` is the latest heading, carried across pages;
    - a chunk ends at a paragraph end once it reaches `target_tokens`, and never exceeds
      `max_tokens` (counted on the exact text);
    - consecutive chunks of one section on one page share about `overlap_tokens`;
    - a chunk never spans two pages; a small remainder at a page or section end is merged
      into the chunk before it where that stays within `max_tokens`;
    - blocks with line breaks (code, equations, tables) are split only if bigger than a chunk.
    """
    if not 0 < target_tokens <= max_tokens or overlap_tokens < 0:
        raise ValueError("need 0 < target_tokens <= max_tokens and overlap_tokens >= 0")
    overlap_tokens = min(overlap_tokens, target_tokens // 2)  # always leave room for new text
    small = max(1, target_tokens // 4)
    section = ""
    index = 0
    for page in pages:
        md = page.markdown
        units = _units(md, max_tokens, count_tokens)

        def tokens(a: int, b: int) -> int:
            return count_tokens(md[units[a].start:units[b - 1].end]) if a < b else 0

        pending: tuple[int, int, str] | None = None  # emitted, not yet yielded: (a, b, section)
        out: list[tuple[int, int, str]] = []

        def emit(a: int, b: int, new_from: int) -> None:
            nonlocal pending
            # A small remainder joins the chunk before it (same page and section) if it fits.
            if (pending is not None and pending[2] == section and tokens(new_from, b) < small
                    and tokens(pending[0], b) <= max_tokens):
                pending = (pending[0], b, section)
                return
            if pending is not None:
                out.append(pending)
            pending = (a, b, section)

        def overlap_start(a: int, b: int) -> int:
            k = b
            while k - 1 > a and units[k - 1].kind != "heading" and tokens(k - 1, b) <= overlap_tokens:
                k -= 1
            return k

        def has_text(a: int, b: int) -> bool:
            return any(units[i].kind != "heading" for i in range(a, b))

        # The current chunk is units[a:b]; units before `new_from` are already in an
        # emitted chunk (they are overlap), so a chunk is only emitted with new text in it.
        a = b = new_from = 0
        while b < len(units):
            u = units[b]
            has_new = has_text(max(a, new_from), b)
            if u.kind == "heading":
                if has_new:
                    emit(a, b, new_from)
                    new_from = b
                    a = b
                elif a < new_from:  # only overlap left over: drop it, a section starts here
                    a = b
                # (consecutive headings with no text between stay together in one chunk)
                section = u.heading
                b += 1
                continue
            if a < b and tokens(a, b + 1) > max_tokens:
                if has_new:
                    emit(a, b, new_from)
                    new_from = b
                    a = overlap_start(a, b)
                while a < b and tokens(a, b + 1) > max_tokens:
                    a += 1  # drop overlap (or a leading heading) until the unit fits
                continue
            b += 1
            if tokens(a, b) >= target_tokens and u.para_end:
                emit(a, b, new_from)
                new_from = b
                a = overlap_start(a, b)
        # End of page: emit the rest; headings alone only when the page has nothing else
        # (a part title page), otherwise their section simply continues on the next page.
        if has_text(max(a, new_from), b) or (a < b and pending is None and not has_text(a, b)):
            emit(a, b, new_from)
        if pending is not None:
            out.append(pending)
        for ca, cb, sec in out:
            start, end = units[ca].start, units[cb - 1].end
            yield Chunk(
                paper_id=paper_id,
                chunk_index=index,
                text=md[start:end],
                page=page.page,
                page_label=page.label,
                section=sec,
                char_start=start,
                char_end=end,
            )
            index += 1
