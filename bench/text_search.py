"""Searching the papers' text: the library pane's search and the viewer's find, measured.

No model needed. On a library (never one you care about: it is only read):

* library search (app/core/library/text_search.py): for each query, the chunks the BM25 leg returns
  (words matched with AND, then read for the phrase) against a scan of every chunk's text for the
  phrase, the places listed, and the milliseconds of each (median of `--repeat` runs);
* the viewer's find (app/ui/reader/search.py): for the PDFs given with --pdf, the words read per page
  (once a paper) and the milliseconds a query then takes, against PyMuPDF's own `search_for`.

    .venv/bin/python bench/text_search.py --library /tmp/copy-of-a-library [--pdf PAPER.pdf …]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUERIES = ["confidence interval", "bootstrap", "heteroskedasticity consistent", "Efron (1979)", "random effects",
           "the", "xyzzy"]


def _ms(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def library_search(root: str, repeat: int) -> None:
    from app.core.library.store import Library
    from app.core.library.schema import CONTENT_CHUNKS
    from app.core.library.table_reader import snapshot
    from app.core.library.text_search import _candidates, query_words, search_text

    lib = Library(root, create=False)
    dataset = snapshot(lib.chunks_table(CONTENT_CHUNKS)).dataset
    papers = sorted(lib.complete_paper_ids())
    texts = dataset.to_table(columns=["text"]).column("text").to_pylist()
    print(f"library {root}: {len(papers)} papers, {len(texts)} chunks")
    print(f"{'query':32} {'bm25 rows':>9} {'phrase rows':>11} {'scan rows':>9} {'places':>6} {'search ms':>9} {'scan ms':>7}")
    for query in QUERIES:
        words = query_words(query)
        phrase = " ".join(query.lower().split())
        candidates = _candidates(dataset, words, papers)
        with_phrase = sum(phrase in " ".join((r["text"] or "").lower().split()) for r in candidates)
        scan_ms, scanned = _ms(lambda: sum(phrase in " ".join(t.lower().split()) for t in
                                           dataset.to_table(columns=["text"]).column("text").to_pylist()), repeat)
        search_ms, hits = _ms(lambda: search_text(lib, query), repeat)
        print(f"{query:32} {len(candidates):9} {with_phrase:11} {scanned:9} {len(hits):6} {search_ms:9.1f} {scan_ms:7.1f}")


def viewer_find(pdfs: list[Path], repeat: int) -> None:
    import pymupdf

    from app.ui.reader.search import PdfWords, find_hits

    for pdf in pdfs:
        words = PdfWords()
        start = time.perf_counter()
        pages = words.pages(pdf)
        read_ms = (time.perf_counter() - start) * 1000
        print(f"\n{pdf.name}: {len(pages)} pages, words read in {read_ms:.0f} ms ({read_ms / max(1, len(pages)):.1f} ms a page)")
        with pymupdf.open(pdf) as doc:
            for query in QUERIES:
                ms, hits = _ms(lambda: find_hits(pages, query), repeat)
                theirs = sum(len(page.search_for(query)) for page in doc)
                print(f"  {query:32} {len(hits):4} places in {ms:6.1f} ms   (PyMuPDF search_for: {theirs} rectangles)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", required=True)
    parser.add_argument("--pdf", nargs="*", type=Path, default=[])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    library_search(args.library, args.repeat)
    viewer_find(args.pdf, args.repeat)


if __name__ == "__main__":
    main()
