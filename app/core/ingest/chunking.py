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

from typing import Iterable, Iterator

from ..records import Chunk, PageText
from ..units import TokenCounter, approx_tokens, unit_spans


def token_counter(embedder: object | None) -> TokenCounter:
    """The embedding model's own tokenizer where it has a local one (llama.cpp), else the estimate.

    Duck-typed (`tokenizer_counter()` of models/base.py's EmbeddingModel) so that chunking
    stays free of the model layer.
    """
    make = getattr(embedder, "tokenizer_counter", None)
    counter = make() if callable(make) else None
    return counter or approx_tokens


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
        units = unit_spans(md, max_tokens, count_tokens)

        counted: dict[tuple[int, int], int] = {}

        def tokens(a: int, b: int) -> int:
            # The loop below asks for one span several times (does it fit, is it big enough, how
            # much overlap): the model's tokenizer was a tenth of the reading's time.
            if a >= b:
                return 0
            if (a, b) not in counted:
                counted[a, b] = count_tokens(md[units[a].start:units[b - 1].end])
            return counted[a, b]

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
