"""Chunking (app.core.ingest.chunking): sections, sizes, overlap, pages, blocks; on a PDF built here."""

from __future__ import annotations

import re
import statistics

import pytest

from app.core.pdf import extract as px
from app.core.ingest.chunking import chunk_pages
from app.core.units import approx_tokens, text_units
from app.core.records import Chunk, PageText

from tests.support import pdf_factory as pf  # tests/ is on sys.path (pytest rootdir conftest)


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


# --------------------------------------------------------------------------- a real PDF


def normalise(text: str) -> str:
    """Letters and digits only: ignores whitespace, markdown markers, hyphenation."""
    return re.sub(r"[\W_]+", "", text.lower())


TOPICS = ["random effects", "penalized least squares", "sparse Cholesky factors", "profiled deviance",
          "sandwich estimators", "clustered standard errors", "structural change tests", "time series indexes"]


def _paper_pages(n_pages: int) -> list[str]:
    """Pages of a paper: sections with varied prose, a code block, sections running across pages."""
    pages = []
    for p in range(n_pages):
        parts = []
        if p % 2 == 0:
            parts.append(f"# {p // 2 + 1} {TOPICS[p % len(TOPICS)].capitalize()}")
        for k in range(5):
            topic = TOPICS[(p + k) % len(TOPICS)]
            parts.append(" ".join(
                f"Paragraph {k} on page {p + 1} discusses {topic} in model {j}, where estimates of variant {j * k} "
                f"are compared across {j + 2} designs and the results stay stable." for j in range(1, 5)))
        if p % 3 == 1:
            parts.append(f"```\nfit <- lmer(y ~ x + (1 | g{p}), data = d)\nsummary(fit)\n```")
        pages.append("\n\n".join(parts))
    return pages


def test_chunk_invariants_on_a_built_paper(tmp_path):
    path = pf.make_paper(tmp_path / "paper.pdf", "Mixed Models in Practice", ["Ada Lovelace"], _paper_pages(8))
    doc = px.open_pdf(path)
    pages = list(px.iter_pages(doc))
    assert len(pages) == 8
    chunks = list(chunk_pages("paper", pages))
    check_invariants(chunks, pages, 500)
    plain = {p.page: normalise(doc[p.page - 1].get_text(flags=px.TEXT_FLAGS)) for p in pages}
    sizes = []
    for c in chunks:
        # The chunk is really on that page of the PDF.
        assert normalise(c.text) in plain[c.page], (c.page, c.text[:80])
        sizes.append(approx_tokens(c.text))
    assert {c.page for c in chunks} == set(range(1, 9))
    assert all(c.section for c in chunks if c.page > 1)  # page 1 starts with its heading too, after the title
    assert sum(bool(c.section) for c in chunks) >= 0.9 * len(chunks)
    assert 150 <= statistics.median(sizes) <= 450
    # Highlighting: MuPDF's search finds where each chunk starts.
    assert all(px.locate_text(doc[c.page - 1], c.text) for c in chunks)


def test_chunks_sized_by_the_embedders_own_tokenizer_fit_it(tiny_models):
    from app.core.ingest.chunking import token_counter
    from app.core.models.llamacpp_embedding import LlamaCppEmbedding
    from app.core.settings import ModelConfig

    embedder = LlamaCppEmbedding(ModelConfig(path=str(tiny_models["embedding"]), context_length=512, threads=2))
    try:
        count = token_counter(embedder)
        assert count is not approx_tokens and token_counter(None) is approx_tokens
        formula = "Let $\\hat\\beta = (X^\\top X)^{-1} X^\\top y$ and $V = \\sigma^2 (X^\\top X)^{-1}$ hold."
        # Word pieces, uncapped: symbol-heavy text has far more than the estimate says.
        assert count(formula * 60) > 512 and count(formula) > approx_tokens(formula) * 1.5
        pages = [PageText(page=1, label="1", markdown=" ".join([formula] * 80))]
        chunks = list(chunk_pages("p", pages, target_tokens=200, max_tokens=250, overlap_tokens=40, count_tokens=count))
        check_invariants(chunks, pages, 250, count=count)
        assert len(chunks) > len(list(chunk_pages("p", pages, target_tokens=200, max_tokens=250, overlap_tokens=40)))
    finally:
        embedder.close()


def test_a_sentence_ends_before_the_raised_citation_numbers_after_its_full_stop():
    """Vancouver-style papers set citations as raised numbers after the full stop; read as part of
    the sentence, "… reducing waste.13–17 However, …" was one unit with the next sentence."""
    md = ("Familiarity improves safety while also reducing waste.13–17 However, the definition "
          "varies.4 Thus teams differ (Fig.2 Shows the spread). The mean was 3.5 The next value 4.")
    units = [md[s:e] for s, e, kind in text_units(md)]
    assert units == ["Familiarity improves safety while also reducing waste.13–17",
                     "However, the definition varies.4",
                     "Thus teams differ (Fig.2 Shows the spread).",
                     "The mean was 3.5 The next value 4."]


def test_a_sentence_may_open_with_a_name_set_in_lower_case():
    """Software and gene names open sentences in lower case ("lme4 incorporates…", "mRNA levels…");
    a plain lower-case word after a full stop is still no sentence start (an abbreviation's)."""
    md = ("The default optimizers changed over the years. lme4 incorporates two built-in optimizers. "
          "mRNA levels rose 3-fold. Cells were counted, approx. fifty a well.")
    units = [md[s:e] for s, e, kind in text_units(md)]
    assert units == ["The default optimizers changed over the years.", "lme4 incorporates two built-in optimizers.",
                     "mRNA levels rose 3-fold.", "Cells were counted, approx. fifty a well."]
