"""Checks on the real development corpus that the test suite cannot carry (the PDFs stay in
the team share, never in the repository): chunk invariants on every r-papers PDF, metadata of
a few known papers, and the one paper whose text layer is unreadable. The tests check the same
code on PDFs they build (tests/test_chunking.py, tests/test_pdf_extract.py).

    .venv/bin/python bench/corpus_checks.py [--corpus ../shared/corpus/r-papers]

Prints one line per check and exits 1 if any fails.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.pdf import ocr  # noqa: E402
from app.core.pdf.accents import join_accents  # noqa: E402
from app.core.pdf import extract as px  # noqa: E402
from app.core.ingest.chunking import chunk_pages  # noqa: E402
from app.core.units import approx_tokens  # noqa: E402

KNOWN = [  # file, title (None: not checked), first author, other fields
    # As printed on the first page and in JSS 67(1); the file's own metadata says "using".
    ("lmer.pdf", "Fitting Linear Mixed-Effects Models Using lme4", "Douglas Bates",
     {"doi": "10.18637/jss.v067.i01", "published": "2015"}),
    ("sandwich.pdf", None, "Achim Zeileis", {"published": "2004"}),
    ("strucchange-intro.pdf", "strucchange: An R Package for Testing for Structural Change in Linear Regression Models",
     "Achim Zeileis", {}),
    ("Rcpp-FAQ.pdf", "Rcpp FAQ", "Dirk Eddelbuettel", {"published": "2022-04-03"}),
    ("Rcpp-libraries.pdf", None, "Dirk Eddelbuettel", {"arxiv_id": "1911.06416"}),
    ("Theory.pdf", "Computational methods for mixed models", "Douglas Bates", {}),
]


def _normalise(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def check_chunks(corpus: Path) -> list[str]:
    problems, sizes = [], []
    with_section = total = located = sampled = 0
    for path in sorted(corpus.glob("*.pdf")):
        doc = px.open_pdf(path)
        pages = list(px.iter_pages(doc))
        by_page = {p.page: p for p in pages}
        chunks = list(chunk_pages("paper", pages))
        if not chunks:
            problems.append(f"{path.name}: no chunks")
        # The page's own text, with TeX's accents joined as the markdown joins them (accents.py).
        plain = {p.page: _normalise(join_accents(doc[p.page - 1].get_text(flags=px.TEXT_FLAGS))) for p in pages}
        for c in chunks:
            if by_page[c.page].markdown[c.char_start:c.char_end] != c.text or approx_tokens(c.text) > 500:
                problems.append(f"{path.name}: chunk {c.chunk_index} is not an exact slice within 500 tokens")
            if _normalise(c.text) not in plain[c.page]:
                problems.append(f"{path.name}: chunk {c.chunk_index} is not on page {c.page}")
            sizes.append(approx_tokens(c.text))
            with_section += bool(c.section)
            total += 1
        for c in chunks[::7]:
            sampled += 1
            located += bool(px.locate_text(doc[c.page - 1], c.text))
    if with_section < 0.95 * total:
        problems.append(f"only {with_section} of {total} chunks have a section")
    if sizes and not 150 <= statistics.median(sizes) <= 450:
        problems.append(f"median chunk size {statistics.median(sizes)} tokens")
    if located < 0.9 * sampled:
        problems.append(f"MuPDF found only {located} of {sampled} sampled chunks")
    print(f"chunks: {total} in {len(list(corpus.glob('*.pdf')))} papers, median {statistics.median(sizes) if sizes else 0} tokens, "
          f"{with_section} with a section, {located}/{sampled} located")
    return problems


def check_meta(corpus: Path) -> list[str]:
    problems = []
    for name, title, first_author, extra in KNOWN:
        meta = px.extract_meta(px.open_pdf(corpus / name), name)
        wanted = {"title": title, **extra} if title else dict(extra)
        got = {key: getattr(meta, key) for key in wanted}
        if got != wanted or not meta.authors or meta.authors[0] != first_author:
            problems.append(f"{name}: {got} / first author {meta.authors[:1]} (want {wanted} / {first_author})")
    if px.has_text_layer(px.open_pdf(corpus / "PLSvGLS.pdf")):  # dvips Type3 bitmap fonts: text decodes to dingbats
        problems.append("PLSvGLS.pdf: its unreadable text layer was taken as text")
    print(f"metadata: {len(KNOWN)} known papers checked, text-layer check on PLSvGLS.pdf")
    # A subset font with no map to Unicode: 21 of its 23 pages read as control characters.
    tam = corpus.parent / "mixed" / "chuttur2009-technology-acceptance-model.pdf"
    if tam.exists():
        with px.open_pdf(tam) as doc:
            garbled, pages = sum(ocr.page_needs_ocr(doc[p]) for p in range(doc.page_count)), doc.page_count
        print(f"text layer of glyph numbers: {garbled} of {pages} pages of {tam.name} go to OCR")
        if garbled < 20:
            problems.append(f"{tam.name}: only {garbled} pages of glyph numbers found for OCR (21 expected)")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "r-papers")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 2
    problems = check_chunks(args.corpus) + check_meta(args.corpus)
    for p in problems:
        print("FAIL", p)
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
