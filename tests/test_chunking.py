"""Chunking (app.core.chunking): sections, sizes, overlap, pages, blocks; on the real corpus."""

from __future__ import annotations

import re
import statistics

import pytest

from app.core import pdf_extract as px
from app.core.chunking import approx_tokens, chunk_pages
from app.core.records import Chunk, PageText

from tests.conftest import CORPUS  # tests/ is on sys.path (pytest rootdir conftest)


def sentences(prefix: str, n: int) -> str:
    """n distinct sentences of 10 words (13 tokens) each, as one paragraph."""
    return " ".join(f"{prefix} sentence number {i} has exactly ten words in it." for i in range(n))


def check_invariants(chunks: list[Chunk], pages: list[PageText], max_tokens: int, count=approx_tokens) -> None:
    by_page = {p.page: p for p in pages}
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        page = by_page[c.page]
        assert page.markdown[c.char_start:c.char_end] == c.text  # exact slice of ONE page
        assert c.page_label == page.label
        assert c.text == c.text.strip() and c.text
        assert count(c.text) <= max_tokens
        assert c.source_type == "content"


def test_sizes_overlap_and_exact_spans():
    pages = [PageText(1, "1", "## Method\n\n" + sentences("Alpha", 60) + "\n\n" + sentences("Beta", 60))]
    chunks = list(chunk_pages("p1", pages, target_tokens=200, max_tokens=260, overlap_tokens=50))
    check_invariants(chunks, pages, 260)
    assert len(chunks) >= 6
    assert all(c.section == "Method" and c.paper_id == "p1" for c in chunks)
    assert chunks[0].text.startswith("## Method")
    for a, b in zip(chunks, chunks[1:]):
        shared = a.char_end - b.char_start
        assert b.char_start > a.char_start and b.char_end > a.char_end  # always progresses
        assert 0 < approx_tokens(pages[0].markdown[b.char_start:a.char_end]) <= 50 if shared > 0 else True
    overlapping = sum(1 for a, b in zip(chunks, chunks[1:]) if b.char_start < a.char_end)
    assert overlapping >= len(chunks) - 2  # overlap within the section (paragraph change may reset)
    assert all(approx_tokens(c.text) >= 100 for c in chunks)  # no tiny remainders


def test_heading_starts_a_chunk_and_section_carries_across_pages():
    pages = [
        PageText(1, "i", "# Paper Title\n\nIntro words here.\n\n## 1. Background\n\n" + sentences("Bg", 5)),
        PageText(2, "ii", sentences("More background", 5) + "\n\n### 1.1 Detail\n\n" + sentences("Detail", 3)),
        PageText(3, "1", ""),  # an empty page (figure only) produces nothing
        PageText(4, "2", sentences("Still detail", 2)),
    ]
    chunks = list(chunk_pages("p", pages))
    check_invariants(chunks, pages, 500)
    assert [(c.page, c.section) for c in chunks] == [
        (1, "Paper Title"),
        (1, "1. Background"),
        (2, "1. Background"),  # carried across the page break; no chunk spans pages
        (2, "1.1 Detail"),
        (4, "1.1 Detail"),
    ]
    assert chunks[1].text.startswith("## 1. Background")
    assert chunks[3].text.startswith("### 1.1 Detail")
    assert [c.page_label for c in chunks] == ["i", "i", "ii", "ii", "2"]


def test_consecutive_headings_stay_with_their_text():
    md = "## 3. Methods\n\n### 3.1 Data\n\n" + sentences("Data", 3)
    chunks = list(chunk_pages("p", [PageText(1, "1", md)]))
    assert len(chunks) == 1
    assert chunks[0].section == "3.1 Data" and chunks[0].text.startswith("## 3. Methods")


def test_blocks_stay_whole_and_big_blocks_split_at_lines():
    code = "```\n" + "\n".join(f"x{i} <- compute({i}, other, args)" for i in range(8)) + "\n```"  # ~55 tokens
    eq = "a = b + c\nd = e + f\n(12)"
    md = f"{sentences('Lead', 8)}\n\n{code}\n\n{eq}\n\n{sentences('Tail', 8)}"
    page = PageText(1, "1", md)
    chunks = list(chunk_pages("p", [page], target_tokens=60, max_tokens=80, overlap_tokens=10))
    check_invariants(chunks, [page], 80)
    assert any(code in c.text for c in chunks)  # the code block is never cut
    assert any(eq in c.text for c in chunks)

    big = "```\n" + "\n".join(f"line_{i} = value_{i} + offset + more + words + here" for i in range(60)) + "\n```"
    page = PageText(1, "1", big)
    chunks = list(chunk_pages("p", [page], target_tokens=80, max_tokens=100, overlap_tokens=0))
    check_invariants(chunks, [page], 100)
    assert len(chunks) > 3
    for c in chunks:  # pieces end at line ends
        assert md_line_aligned(big, c.char_start, c.char_end)


def md_line_aligned(md: str, start: int, end: int) -> bool:
    return (start == 0 or md[start - 1] == "\n") and (end == len(md) or md[end] == "\n")


def test_overlong_sentence_is_split_at_words():
    md = "word " * 1000
    page = PageText(1, "1", md.strip())
    chunks = list(chunk_pages("p", [page], target_tokens=100, max_tokens=120, overlap_tokens=20))
    check_invariants(chunks, [page], 120)
    covered = set()
    for c in chunks:
        covered.update(range(c.char_start, c.char_end))
    text = page.markdown
    assert {i for i in range(len(text)) if not text[i].isspace()} <= covered  # no word lost


def test_custom_token_counter_is_respected():
    def chars(s: str) -> int:  # e.g. a real tokenizer; here: 1 token per 4 characters
        return len(s) // 4

    page = PageText(1, "1", "## S\n\n" + sentences("Gamma", 50))
    chunks = list(chunk_pages("p", [page], target_tokens=100, max_tokens=120, overlap_tokens=20, count_tokens=chars))
    check_invariants(chunks, [page], 120, count=chars)
    assert len(chunks) > 5


def test_escaped_hash_is_not_a_heading():
    md = "\\# not a heading, a comment\n\n" + sentences("Body", 2)
    chunks = list(chunk_pages("p", [PageText(1, "1", md)]))
    assert len(chunks) == 1 and chunks[0].section == ""


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError):
        list(chunk_pages("p", [PageText(1, "1", "x")], target_tokens=500, max_tokens=400))


def test_pages_are_consumed_lazily():
    consumed = []

    def pages():
        for i in range(1, 1000):
            consumed.append(i)
            yield PageText(i, str(i), sentences(f"P{i}", 5))

    first = next(chunk_pages("p", pages()))
    assert first.page == 1 and len(consumed) <= 2


# --------------------------------------------------------------------------- real corpus


def normalise(text: str) -> str:
    """Letters and digits only: ignores whitespace, markdown markers, hyphenation."""
    return re.sub(r"[\W_]+", "", text.lower())


@pytest.mark.skipif(not CORPUS.is_dir(), reason="development corpus not present")
def test_chunk_invariants_on_all_corpus_papers():
    pdfs = sorted(CORPUS.glob("*.pdf"))
    assert len(pdfs) == 29
    sizes: list[int] = []
    with_section = total = located = sampled = 0
    for path in pdfs:
        doc = px.open_pdf(path)
        pages = list(px.iter_pages(doc))
        chunks = list(chunk_pages("paper", pages))
        assert chunks, path.name
        check_invariants(chunks, pages, 500)
        plain = {p.page: normalise(doc[p.page - 1].get_text(flags=px.TEXT_FLAGS)) for p in pages}
        for c in chunks:
            # The chunk is really on that page of the PDF.
            assert normalise(c.text) in plain[c.page], (path.name, c.page, c.text[:80])
            sizes.append(approx_tokens(c.text))
            with_section += bool(c.section)
            total += 1
        for c in chunks[::7]:  # highlighting: MuPDF's search finds the chunk's start
            sampled += 1
            located += bool(px.locate_text(doc[c.page - 1], c.text))
    assert with_section >= 0.95 * total
    assert 150 <= statistics.median(sizes) <= 450
    assert located >= 0.9 * sampled
