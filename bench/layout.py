"""Type as printed: words broken in titles, headings and body text, and titles read right.

    .venv/bin/python bench/layout.py [--corpus mixed|r-papers|synthetic|all] [--show] [--time N]

Every paper is read twice in one run: "before" with MuPDF's own words (`page.get_text("dict")`,
as the code read them until letter_spacing.py), "after" as an import reads it now. Corpora:
../shared/corpus/mixed (its metadata.jsonl has the true titles), ../shared/corpus/r-papers
(bench/questions/r-papers-metadata.jsonl), and "synthetic": the held-out letter-spaced papers of
tests/support/letter_spaced_pdfs.py (titles, names and tracking the tests do not use), made afresh.

A broken word, measured without a word list: a token that is rare in the paper's own text (at
most twice in its markdown) and makes, joined with its neighbour, a word the paper uses ("abstr"
+ "act" where "abstract" is in the text); and every token of a run of three or more one-letter
tokens ("G r a p h i c a l"). Normal text has a floor of these too (a rare word next to one it
compounds with, a formula's "x y z"): compare the columns, not the figures with zero. The rate is
broken tokens over all tokens, for the title read (metadata), the headings ("#" lines of the
markdown) and the rest of the text. "changed" counts the markdown lines that differ between
the two readings. Title: exact match after bench/metadata.py's normalisation.

`--time N`: N rounds of reading the r-papers corpus (open, metadata, every page's markdown),
before and after in turn; the least CPU time of each is printed.

Measured (2026-11-28): synthetic held-out set, titles exact 1/5 before and 5/5 after, broken
tokens in titles 66/90 -> 0/35, in headings 4/63 -> 0/70, in the text 265/2536 -> 0/2287 (the
author lines and split headings), author lists exact 5/5 after; mixed: 2 lines change (a report's
"W E B S I T E S" and "R E F E R E N C E S" headings, set letter-spaced, read "WEBSITES",
"REFERENCES"), titles 28/30 both; r-papers: no line changes, titles 28/29 both.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from app.core.pdf import accents, letter_spacing, extract as pdf_extract, rows as pdf_rows  # noqa: E402
from app.core.errors import ImportFailure  # noqa: E402
from app.core.pdf.metadata import layout as meta_layout  # noqa: E402
from metadata import norm  # noqa: E402
from tests.support.letter_spaced_pdfs import HELD_OUT, make_tracked_paper  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus"
TRUTH = {"mixed": SHARED / "mixed" / "metadata.jsonl", "r-papers": ROOT / "bench" / "questions" / "r-papers-metadata.jsonl"}
_TOKEN = re.compile(r"[^\W\d_]+")
# A TeX accent left apart from a Latin letter (an accent over a Greek letter or a variable with no
# one-character form stays apart: accents.py).
_ABOVE = re.escape(accents.TYPOGRAPHIC_ACCENTS.replace("\u00b8", ""))  # the cedilla is written after its letter
_APART = re.compile(rf"[{_ABOVE}][A-Za-zıȷ]|[A-Za-z][\u00b8`][A-Za-z]")


def _mupdf_words(page: Any, flags: int) -> dict[str, Any]:
    return page.get_text("dict", flags=flags)


def reading(before: bool) -> None:
    """Read pages as before letter_spacing.py and accents.py (MuPDF's text), or as now."""
    read: Callable[[Any, int], dict[str, Any]] = _mupdf_words if before else letter_spacing.page_dict
    pdf_rows.page_dict = read  # type: ignore[assignment]
    meta_layout.page_dict = read  # type: ignore[assignment]
    pdf_rows.join_accents = (lambda text: text) if before else accents.join_accents  # type: ignore[assignment]


@dataclass
class Rates:
    broken: Counter = field(default_factory=Counter)
    tokens: Counter = field(default_factory=Counter)
    titles_right: int = 0
    titles: int = 0
    apart: int = 0  # accents TeX set apart from their letters, left so in the text

    def rate(self, kind: str) -> str:
        return f"{self.broken[kind] / self.tokens[kind]:.4f}" if self.tokens[kind] else "-"


def broken_tokens(line: str, vocab: Counter) -> tuple[int, int]:
    """(broken tokens, tokens) of one line, by the rule in the module docstring."""
    tokens = _TOKEN.findall(line)
    broken: set[int] = set()
    run: list[int] = []
    for i, tok in enumerate(tokens + [""]):
        if len(tok) == 1:
            run.append(i)
            continue
        if len(run) >= 3:
            broken.update(run)
        run = []
    for i, (a, b) in enumerate(zip(tokens, tokens[1:])):
        rare = min(vocab[a.lower()], vocab[b.lower()]) <= 2
        if rare and len(a + b) >= 4 and vocab[(a + b).lower()] > 0:
            broken.update((i, i + 1))
    return len(broken), len(tokens)


@dataclass
class Paper:
    name: str
    title: str
    authors: list[str]
    markdown: list[str]


def read_paper(path: Path) -> Paper | None:
    try:
        doc = pdf_extract.open_pdf(path)
    except ImportFailure:
        return None
    try:
        meta = pdf_extract.extract_meta(doc, path.name)
        pages = [p.markdown for p in pdf_extract.iter_pages(doc)]
    finally:
        doc.close()
    return Paper(path.name, meta.title, meta.authors, pages)


def score(paper: Paper, want_title: str | None, rates: Rates) -> None:
    text = "\n".join(paper.markdown)
    rates.apart += len(_APART.findall(text))
    vocab = Counter(t.lower() for t in _TOKEN.findall(text))
    for kind, lines in (("title", [paper.title]),
                        ("headings", [ln for ln in text.splitlines() if ln.startswith("#")]),
                        ("body", [ln for ln in text.splitlines() if not ln.startswith("#")])):
        for ln in lines:
            b, n = broken_tokens(ln, vocab)
            rates.broken[kind] += b
            rates.tokens[kind] += n
    if want_title is not None:
        rates.titles += 1
        rates.titles_right += norm(paper.title) == norm(want_title)


def corpus_files(name: str, tmp: Path) -> list[tuple[Path, str | None, list[str] | None]]:
    """(pdf, true title or None, true authors or None) of a corpus."""
    if name == "synthetic":
        return [(make_tracked_paper(tmp / f"held-out-{i}.pdf", spec), spec.title, spec.authors)
                for i, spec in enumerate(HELD_OUT)]
    truth = {}
    for line in TRUTH[name].read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            truth[row["file"]] = row
    files = sorted((SHARED / name).glob("*.pdf"))
    return [(f, truth.get(f.name, {}).get("title"), truth.get(f.name, {}).get("authors")) for f in files]


def run_corpus(name: str, tmp: Path, show: bool) -> None:
    results = {}
    papers: dict[bool, dict[str, Paper]] = {}
    files = corpus_files(name, tmp)
    for before in (True, False):
        reading(before)
        rates = Rates()
        papers[before] = {}
        for path, title, _ in files:
            paper = read_paper(path)
            if paper is not None:
                papers[before][path.name] = paper
                score(paper, title, rates)
        results[before] = rates
    changed = 0
    for fname, after in papers[False].items():
        old = papers[True][fname]
        lines = [(a, b) for pa, pb in zip(old.markdown, after.markdown)
                 for a, b in zip(pa.splitlines(), pb.splitlines()) if a != b]
        changed += len(lines)
        if show:
            if old.title != after.title:
                print(f"  {fname}: title {old.title!r} -> {after.title!r}")
            for a, b in lines[:8]:
                print(f"  {fname}: {a[:100]!r}\n  {' ' * len(fname)}  -> {b[:100]!r}")
    authors_right = sum(papers[False][p.name].authors == want for p, _, want in files
                        if want is not None and p.name in papers[False])
    print(f"{name}: {len(papers[False])} papers, {changed} markdown lines changed")
    for label, before in (("before", True), ("after", False)):
        r = results[before]
        print(f"  {label:6}  titles exact {r.titles_right}/{r.titles}   broken tokens: title {r.rate('title')} "
              f"({r.broken['title']}/{r.tokens['title']})  headings {r.rate('headings')} "
              f"({r.broken['headings']}/{r.tokens['headings']})  body {r.rate('body')} "
              f"({r.broken['body']}/{r.tokens['body']})  TeX accents apart from a Latin letter {r.apart}")
    if name == "synthetic":
        print(f"  after   author lists exact {authors_right}/{len(files)}")


def timing(rounds: int) -> None:
    files = sorted((SHARED / "r-papers").glob("*.pdf"))
    best = {True: float("inf"), False: float("inf")}
    for _ in range(rounds):
        for before in (True, False):
            reading(before)
            start = time.process_time()
            for f in files:
                doc = pdf_extract.open_pdf(f)
                pdf_extract.extract_meta(doc, f.name)
                for _page in pdf_extract.iter_pages(doc):
                    pass
                doc.close()
            best[before] = min(best[before], time.process_time() - start)
    print(f"r-papers extraction ({len(files)} PDFs, least CPU time of {rounds} rounds): "
          f"before {best[True]:.2f} s, after {best[False]:.2f} s ({best[False] / best[True] - 1:+.1%})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="all", choices=["all", "mixed", "r-papers", "synthetic"])
    ap.add_argument("--show", action="store_true", help="print every changed line and title")
    ap.add_argument("--time", type=int, default=0, metavar="N", help="time N rounds of extraction instead")
    args = ap.parse_args()
    if args.time:
        timing(args.time)
        return 0
    names = ["mixed", "r-papers", "synthetic"] if args.corpus == "all" else [args.corpus]
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            run_corpus(name, Path(tmp), args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
