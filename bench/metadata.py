"""Score the metadata read from PDFs against hand-made ground truth.

    .venv/bin/python bench/metadata.py [--corpus mixed|r-papers|all] [--show] [--ocr PAGES]
    .venv/bin/python bench/metadata.py CORPUS_DIR [--truth FILE.jsonl] [--show]

Two ground-truth sets, scored one after the other by default (`--corpus all`):
- mixed: ../shared/corpus/mixed with its own `metadata.jsonl` (30 papers, nine fields);
- r-papers: ../shared/corpus/r-papers (29 statistics papers and R vignettes) with
  bench/questions/r-papers-metadata.jsonl, labelled by hand from the rendered first pages.
A CORPUS_DIR of your own is scored against `--truth` (default CORPUS_DIR/metadata.jsonl); one
without any truth file only lists what was read, so that a person can look at it. `--show`
adds every miss, paper by paper.

Truth rows: `file`, `title`, `authors` (in printed order), `year` (null where the paper prints
none), `doi` ("" where none is printed), optional `abstract` (false where the paper has none;
default true) and `abstract_start`, `venue`. The year rule used for r-papers: the year the document dates itself
with -- a journal issue line, or a vignette's / report's own date ("This version was compiled
on ...", a date under the authors, "typeset on ..."); else the year of the publication the
document says it is a version or preprint of ("a modified version of X (2004), published in
...", "preprint of an article published in ... Copyright 2006"); else null. Citation years,
example data and the PDF's creation date never count.

Matching rules (both sides normalised the same way):
- text is compared after Unicode NFKD with accents dropped (ligatures "ﬁ" become "fi", TeX's
  separated accents "Meg´ıas" become "Megias"), case folded, and every run of punctuation or
  space turned into one space ("Agyeman-Duah" = "Agyeman Duah", "O’Connell" = "O Connell");
- title: equal after normalisation;
- an author: the surname (last word) is equal and the first given name agrees, where an
  initial agrees with any name starting with that letter ("D. E. Trilling" = "David Trilling");
  middle names and initials are not compared ("Mohammad S. Rahman" = "Mohammad Rahman");
  a one-word name (a collaboration, a mononym) must be equal as a whole;
- full author list: same number of authors, each matching in order; first author: the first;
- year: the first four digits of the date read equal the printed year (scored where one is
  printed; a year read where none is printed is counted on its own line);
- DOI: equal ignoring case, scored where the paper prints its DOI;
- abstract found: at least 100 characters whose first words occur in the text of the first
  three pages (so a running head or a wrong block does not count). Ground truth has no
  abstract text; papers without any abstract would count as misses (none in `mixed` on a
  readable page; the two scans count as misses until OCR reads them); a paper labelled
  `"abstract": false` is not scored, and an abstract read for it is counted on its own line;
  where a row gives `abstract_start` (r-papers: the abstract's first words as printed), the
  abstract read must also begin with them (letters compared, spaces ignored);
- venue (not a target): one normalised string contains the other, or they share ≥ 60 % of
  the shorter one's words.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from names import norm, same_name  # bench/names.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.pdf import ocr, extract as pdf_extract  # noqa: E402
from app.core.errors import ImportFailure  # noqa: E402
from app.core.records import PaperMeta  # noqa: E402

CORPORA = {
    "mixed": (ROOT.parent / "shared" / "corpus" / "mixed", None),
    "r-papers": (ROOT.parent / "shared" / "corpus" / "r-papers", ROOT / "bench" / "questions" / "r-papers-metadata.jsonl"),
}
FIELDS = ("title", "authors", "first_author", "year", "doi", "abstract", "venue")






def same_venue(got: str, want: str) -> bool:
    g, w = norm(got), norm(want)
    if not g or not w:
        return False
    if g in w or w in g:
        return True
    gs, ws = set(g.split()), set(w.split())
    return len(gs & ws) >= 0.6 * min(len(gs), len(ws))


@dataclass
class Score:
    right: int = 0
    total: int = 0
    right_text: int = 0  # among papers with a text layer
    total_text: int = 0

    def add(self, ok: bool, text_layer: bool) -> None:
        self.right += ok
        self.total += 1
        if text_layer:
            self.right_text += ok
            self.total_text += 1


@dataclass
class Result:
    scores: dict[str, Score] = field(default_factory=lambda: {f: Score() for f in FIELDS})
    misses: list[str] = field(default_factory=list)
    year_without_printed: int = 0
    year_without_printed_sure: int = 0  # of those, not marked unsure
    doi_without_printed: int = 0
    abstract_without_one: int = 0
    unsure_right: int = 0  # fields marked unsure that were right after all
    unsure_wrong: int = 0
    sure_wrong: int = 0


def first_pages_text(doc, n: int = 3) -> str:
    return norm(" ".join(doc.load_page(i).get_text() for i in range(min(n, doc.page_count))))


OCR_PAGES = 0  # --ocr: first pages of scans to OCR before reading, as an import does


def read_meta(path: Path) -> tuple[PaperMeta | None, bool, str, str]:
    """(meta, has text layer, text of the first pages, error)."""
    try:
        doc = pdf_extract.open_pdf(path)
    except ImportFailure as exc:
        return None, False, "", exc.message
    try:
        text_layer = pdf_extract.has_text_layer(doc)
        if OCR_PAGES and ocr.available():
            reader = ocr.PageOcr(doc, text_layer=text_layer)
            for pno in range(min(OCR_PAGES, doc.page_count)):
                reader.ensure(pno)
            text_layer = text_layer or bool(reader.done)
        meta = pdf_extract.extract_meta(doc, path.name)
        return meta, text_layer, first_pages_text(doc), ""
    finally:
        doc.close()


def load_truth(truth: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(truth.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{truth}:{n}: not a JSON object ({exc.msg})") from None
    return rows


def score(corpus: Path, truth: Path) -> tuple[Result, int, float]:
    result = Result()
    rows = load_truth(truth)
    started = time.monotonic()
    for gold in rows:
        name = gold["file"]
        meta, text_layer, page_text, error = read_meta(corpus / name)
        meta = meta or PaperMeta()
        unsure = set(meta.unsure)

        def judge(fld: str, ok: bool, got: object, want: object, unsure_key: str | None = None) -> None:
            result.scores[fld].add(ok, text_layer)
            key = unsure_key or fld
            if key in unsure:
                if ok:
                    result.unsure_right += 1
                else:
                    result.unsure_wrong += 1
            elif not ok:
                result.sure_wrong += 1
            if not ok:
                mark = " (unsure)" if key in unsure else ""
                layer = "" if text_layer else " [no text layer]"
                result.misses.append(f"{name}{layer}: {fld}{mark}\n    got:  {got!r}\n    want: {want!r}")

        judge("title", norm(meta.title) == norm(gold["title"]), meta.title, gold["title"])
        want_authors = gold["authors"]
        full = len(meta.authors) == len(want_authors) and all(map(same_name, meta.authors, want_authors))
        judge("authors", full, meta.authors, want_authors)
        first_ok = bool(meta.authors) and bool(want_authors) and same_name(meta.authors[0], want_authors[0])
        judge("first_author", first_ok, meta.authors[:1], want_authors[:1], "authors")
        year = meta.published[:4]
        if gold.get("year"):
            judge("year", year == str(gold["year"]), meta.published, gold["year"])
        elif year:
            result.year_without_printed += 1
            if "year" not in unsure:
                result.year_without_printed_sure += 1
                result.misses.append(f"{name}: year given as sure where the paper prints none: {meta.published!r}")
        if gold.get("doi"):
            judge("doi", meta.doi.casefold() == gold["doi"].casefold(), meta.doi, gold["doi"])
        elif meta.doi:
            result.doi_without_printed += 1
            result.misses.append(f"{name}: doi given where the paper prints none: {meta.doi!r}")
        # Letters only: line-end hyphens and spaces differ between the page and the reader.
        found = len(meta.abstract) >= 100 and norm(meta.abstract).replace(" ", "")[:40] in page_text.replace(" ", "")
        if gold.get("abstract_start"):  # where the truth names the abstract's first words, they must open it
            found = found and norm(meta.abstract).replace(" ", "").startswith(norm(gold["abstract_start"]).replace(" ", ""))
        if gold.get("abstract", True):
            judge("abstract", found, meta.abstract[:160], "(an abstract from the first pages)")
        elif meta.abstract:
            result.abstract_without_one += 1
            result.misses.append(f"{name}: abstract given where the paper has none: {meta.abstract[:80]!r}")
        if gold.get("venue"):
            judge("venue", same_venue(meta.venue, gold["venue"]), meta.venue, gold["venue"])
        if error:
            result.misses.append(f"{name}: could not be opened: {error}")
    return result, len(rows), time.monotonic() - started


def print_scores(corpus: Path, result: Result, n: int, seconds: float, show: bool) -> None:
    with_text = max(s.total_text for s in result.scores.values())
    print(f"metadata bench: {corpus} ({n} papers, {with_text} with a text layer, {seconds:.1f} s)")
    print(f"{'field':<13} {'right':>5} {'of':>4} {'accuracy':>9}   text layer only")
    for fld in FIELDS:
        s = result.scores[fld]
        if not s.total:
            continue
        pct = 100 * s.right / s.total
        pct_text = 100 * s.right_text / s.total_text if s.total_text else 0.0
        label = f"{fld}{' (info)' if fld == 'venue' else ''}"
        print(f"{label:<13} {s.right:>5} {s.total:>4} {pct:>8.1f}%   {s.right_text}/{s.total_text} {pct_text:.1f}%")
    print(f"year read where none is printed: {result.year_without_printed} "
          f"({result.year_without_printed_sure} not marked unsure); "
          f"DOI read where none is printed: {result.doi_without_printed}; "
          f"abstract read where there is none: {result.abstract_without_one}")
    print(f"wrong fields marked unsure: {result.unsure_wrong}; wrong and not marked: {result.sure_wrong}; "
          f"marked unsure but right: {result.unsure_right}")
    if show:
        print("\nmisses:")
        for line in result.misses:
            print(f"- {line}")


def list_without_truth(corpus: Path) -> None:
    print(f"{corpus}: no truth file, so nothing to score; what was read:")
    for path in sorted(corpus.glob("*.pdf")):
        meta, text_layer, _, error = read_meta(path)
        if meta is None:
            print(f"- {path.name}: {error}")
            continue
        unsure = f" unsure={meta.unsure}" if meta.unsure else ""
        layer = "" if text_layer else " [no text layer]"
        print(f"- {path.name}{layer}: {meta.title[:70]!r} | {meta.authors} | {meta.published} | "
              f"doi={meta.doi or '-'} | abstract={len(meta.abstract)} chars{unsure}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, help="a folder of PDFs of your own (instead of --corpus)")
    parser.add_argument("--corpus", choices=[*CORPORA, "all"], default="all", help="named ground-truth set (default: all)")
    parser.add_argument("--truth", type=Path, help="truth file for PATH (default PATH/metadata.jsonl)")
    parser.add_argument("--show", action="store_true", help="list every miss, paper by paper")
    parser.add_argument("--ocr", type=int, default=0, metavar="PAGES",
                        help="OCR the first PAGES pages of scans first, as an import does (slow: ~20-60 s a page)")
    args = parser.parse_args(argv)
    global OCR_PAGES
    OCR_PAGES = args.ocr
    logging.basicConfig(level=logging.WARNING)
    if args.path is not None:
        sets = [(args.path, args.truth or args.path / "metadata.jsonl")]
    else:
        names = list(CORPORA) if args.corpus == "all" else [args.corpus]
        sets = [(CORPORA[n][0], CORPORA[n][1] or CORPORA[n][0] / "metadata.jsonl") for n in names]
    for i, (corpus, truth) in enumerate(sets):
        if i:
            print()
        if not corpus.is_dir():
            print(f"{corpus}: no such folder, skipped")
            continue
        if not truth.is_file():
            list_without_truth(corpus)
            continue
        result, n, seconds = score(corpus, truth)
        print_scores(corpus, result, n, seconds, args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
