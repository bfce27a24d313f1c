"""Text as printed, paper by paper: words split inside, titles and authors against the truth, import time.

    .venv/bin/python bench/printed.py [--corpus printed|mixed|r-papers|all] [--show] [--against REV] [--ocr PAGES]
    .venv/bin/python bench/printed.py --time N [--against REV]

Reads every PDF of ../shared/corpus/printed, mixed and r-papers as an import does (open, metadata,
every page's markdown) and prints, per corpus:

- words split inside: a body token (letters, in the markdown's lines that are not headings) that
  joins with the next one, two, or three tokens, separated by single spaces, into a word the paper
  prints whole elsewhere (in its markdown), where the pieces are not all words the paper prints on
  their own twice or more ("ha v e" where "have" is printed, "kno wn", "Lineag e-det ermining";
  not "a new" where "anew" is printed too). Normal type has a floor of these (a word the paper
  also prints as a compound: "data set" and "dataset"): compare the corpora, not the figures with
  zero. Per paper with `--show`, with the first pieces found.
- titles: equal to metadata.jsonl's after bench/metadata.py's normalisation (case, accents,
  punctuation) with as many commas, and where not, how it is broken: empty (the import shows the
  file name), a file name, comma-joined (commas between the words), split inside a word (equal
  once spaces are dropped, more words), commas differ, cut at a line (the start of the true
  title), other. Papers without a text layer have no title unless `--ocr` reads their first pages;
- authors where the truth lists them: the list equal as printed (diacritics and order), and equal by
  bench/metadata.py's looser rule (surname and first name, accents dropped);
- the CPU time the reading took;
- with `--tables`, the tables the import reads and the words split inside their cells (headers,
  row names, values; one cell a line), by the same rule against the paper's own words.

With `--against REV` (and no --time), the same figures for the app/ of git revision REV.

`--time N`: the CPU time of reading the corpora, each PDF's least of N rounds, per corpus; with
`--against REV`, the app/ of git revision REV (extracted with `git archive` into a temporary
folder) reads each PDF in turn with this checkout's, each side in a process of its own, so that the
load of a shared machine falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from names import norm, same_name  # bench/names.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus"
TRUTH = {
    "printed": SHARED / "printed" / "metadata.jsonl",
    "mixed": SHARED / "mixed" / "metadata.jsonl",
    "r-papers": ROOT / "bench" / "questions" / "r-papers-metadata.jsonl",
}
_TOKEN = re.compile(r"[^\W\d_]+")
_PIECES = 4  # a word split into up to this many pieces is found
TABLES = False

# The reading that --time runs, in a worker process whose app/ is the checkout timed: a PDF's path
# on each line of its input, the CPU seconds it took to read it (open, metadata, every page) on each
# line of its output.
_WORKER = """
import sys, time
from app.core.pdf import extract as px
from app.core.errors import ImportFailure
for line in sys.stdin:
    f = line.strip()
    start = time.process_time()
    try:
        doc = px.open_pdf(f)
        px.extract_meta(doc, f.rsplit("/", 1)[-1])
        for _page in px.iter_pages(doc):
            pass
        doc.close()
    except ImportFailure:
        pass
    print(time.process_time() - start, flush=True)
"""






def split_words(lines: list[str], vocab: Counter) -> tuple[int, int, list[str]]:
    """(tokens split inside, tokens, the splits found) of `lines`, by the rule in the module docstring."""
    split = tokens = 0
    found: list[str] = []
    for line in lines:
        parts = line.split(" ")
        tokens += len(_TOKEN.findall(line))
        i = 0
        while i < len(parts) - 1:
            hit = 0
            for n in range(min(_PIECES, len(parts) - i), 1, -1):
                pieces = parts[i:i + n]
                # The word's letters: the first piece's last letters, the last piece's first, the
                # middle pieces whole and all letters ("Lineag e-det ermining": "lineage", "determining").
                head, tail = re.search(r"[\w]+$", pieces[0]), re.match(r"[\w]+", pieces[-1])
                if not (head and tail and _TOKEN.fullmatch(head.group()) and _TOKEN.fullmatch(tail.group())
                        and all(_TOKEN.fullmatch(p) for p in pieces[1:-1])):
                    continue  # letters only: "Figure S9" is no "figures", "the N62R1" no "then"
                if any(a[-1].islower() and b[0].isupper() for a, b in zip(pieces, pieces[1:])):
                    continue  # "a TF", "the Y/CCAAT": a word does not turn to capitals mid-way
                word = (head.group() + "".join(pieces[1:-1]) + tail.group()).lower()
                bits = [head.group(), *pieces[1:-1], tail.group()]
                if len(word) >= 3 and vocab[word] and not all(vocab[b.lower()] >= 2 and len(b) >= 2 for b in bits):
                    hit = n
                    break
            if hit:
                split += hit
                found.append(" ".join(parts[i:i + hit]))
                i += hit
            else:
                i += 1
    return split, tokens, found


def title_verdict(got: str, want: str, filename: str) -> str:
    if norm(got) == norm(want) and got.count(",") == want.count(","):
        return "right"
    if not got.strip():
        return "empty"
    if got.strip() == Path(filename).stem or re.fullmatch(r"[\w.%-]+\.(pdf|docx?|tex|dvi)|[\w%.-]*\d{4}[\w%.-]*", got.strip()):
        return "file name"
    g, w = norm(got), norm(want)
    if "," in got and got.count(",") > want.count(",") + 1 and g.replace(" ", "") == w.replace(" ", ""):
        return "comma-joined"
    if g.replace(" ", "") == w.replace(" ", ""):
        return "split inside a word" if len(g.split()) > len(w.split()) else "commas differ"
    if w.startswith(g):
        return "cut at a line"
    return "other"


@dataclass
class Paper:
    name: str
    seconds: float
    split: int = 0
    tokens: int = 0
    found: list[str] = field(default_factory=list)
    title: str = ""
    title_verdict: str = ""
    authors: list[str] = field(default_factory=list)
    authors_exact: bool | None = None
    authors_loose: bool | None = None
    tables: int = 0  # with --tables: tables read, and their cells' words split inside
    cells_split: int = 0
    cells_tokens: int = 0
    cells_found: list[str] = field(default_factory=list)


def truth(corpus: str) -> dict[str, dict]:
    path = TRUTH[corpus]
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["file"]: r for r in rows}


OCR_PAGES = 0  # --ocr: the first pages of a paper without a text layer are read by OCR first, as an import does


def read(path: Path, gold: dict | None) -> Paper | None:
    from app.core.errors import ImportFailure
    from app.core.pdf import extract as px, ocr

    start = time.process_time()
    try:
        doc = px.open_pdf(path)
    except ImportFailure:
        return None
    try:
        if OCR_PAGES and ocr.available() and not px.has_text_layer(doc):
            reader = ocr.PageOcr(doc, text_layer=False)
            for pno in range(min(OCR_PAGES, doc.page_count)):
                reader.ensure(pno)
        meta = px.extract_meta(doc, path.name)
        pages = list(px.iter_pages(doc))
        markdown = "\n".join(p.markdown for p in pages)
        cells: list[str] = []
        if TABLES:  # the table reader, as an import runs it page by page (untimed beside the text)
            from app.core.pdf.tables.chunks import PaperTables

            start_tables = time.process_time()
            found = PaperTables(doc)
            for page in pages:
                found.read(page)
            cells = [c for t in found.scan.tables for row in [t.headers, *t.rows] for c in row if c]
            start += time.process_time() - start_tables
    finally:
        doc.close()
    paper = Paper(path.name, time.process_time() - start, title=meta.title, authors=meta.authors)
    vocab = Counter(t.lower() for t in _TOKEN.findall(markdown))
    body = [ln for ln in markdown.splitlines() if not ln.startswith("#")]
    paper.split, paper.tokens, paper.found = split_words(body, vocab)
    if TABLES:
        paper.tables = len(found.scan.tables)
        paper.cells_split, paper.cells_tokens, paper.cells_found = split_words(cells, vocab)
    if gold:
        paper.title_verdict = title_verdict(meta.title, gold.get("title", ""), path.name)
        want = gold.get("authors")
        if want:
            nfc = [unicodedata.normalize("NFC", a) for a in meta.authors]
            paper.authors_exact = nfc == [unicodedata.normalize("NFC", a) for a in want]
            paper.authors_loose = len(meta.authors) == len(want) and all(map(same_name, meta.authors, want))
    return paper


def run_corpus(corpus: str, show: bool) -> None:
    gold = truth(corpus)
    papers = [p for f in sorted((SHARED / corpus).glob("*.pdf")) if (p := read(f, gold.get(f.name))) is not None]
    split, tokens = sum(p.split for p in papers), sum(p.tokens for p in papers)
    verdicts = Counter(p.title_verdict for p in papers if p.title_verdict)
    scored = [p for p in papers if p.authors_exact is not None]
    print(f"{corpus}: {len(papers)} papers read, {sum(p.seconds for p in papers):.1f} s CPU")
    print(f"  words split inside: {split}/{tokens} body tokens ({split / max(tokens, 1):.2%}); "
          f"worst paper {max((p.split / max(p.tokens, 1) for p in papers), default=0):.2%}")
    print(f"  titles right {verdicts['right']}/{sum(verdicts.values())}"
          + "".join(f", {v} {n}" for v, n in sorted(verdicts.items()) if v != "right"))
    if scored:
        print(f"  authors as printed (diacritics, order) {sum(bool(p.authors_exact) for p in scored)}/{len(scored)}, "
              f"by bench/metadata.py's rule {sum(bool(p.authors_loose) for p in scored)}/{len(scored)}")
    if TABLES:
        cs, ct = sum(p.cells_split for p in papers), sum(p.cells_tokens for p in papers)
        print(f"  table cells: {sum(p.tables for p in papers)} tables, words split inside {cs}/{ct} cell tokens "
              f"({cs / max(ct, 1):.2%})" + "".join(f"; {p.name} {p.cells_found[:6]}" for p in papers if p.cells_found))
    if show:
        for p in papers:
            flag = "" if p.title_verdict in ("", "right") else f"  title {p.title_verdict}: {p.title!r}"
            names = "" if p.authors_exact in (None, True) else f"  authors {p.authors}"
            print(f"  - {p.name}: split {p.split}/{p.tokens} ({p.split / max(p.tokens, 1):.2%}) "
                  f"{p.found[:6]}{flag}{names}")


class _Worker:
    """A process reading PDFs with the app/ under `root`, one at a time."""

    def __init__(self, root: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(root))
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER], cwd=root, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, path: Path) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def extract_app(rev: str, into: str) -> None:
    """The app/ of git revision `rev`, written under the folder `into`."""
    archive = subprocess.run(["git", "archive", rev, "app"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)


def timing(rounds: int, against: str | None, names: list[str]) -> None:
    """Each PDF read by each checkout in turn, `rounds` times; a PDF's time is its least, so that a
    moment of load on a shared machine weighs on neither side."""
    files = [(c, f) for c in names for f in sorted((SHARED / c).glob("*.pdf"))]
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"this checkout": ROOT}
        if against is not None:
            extract_app(against, tmp)
            sides = {against: Path(tmp), "this checkout": ROOT}
        workers = {name: _Worker(root) for name, root in sides.items()}
        best: dict[str, dict[Path, float]] = {name: {} for name in sides}
        try:
            for _ in range(rounds):
                for _corpus, f in files:
                    for name, worker in workers.items():
                        t = worker.read(f)
                        best[name][f] = min(best[name].get(f, t), t)
        finally:
            for worker in workers.values():
                worker.close()
    print(f"reading {len(files)} PDFs, each one's least CPU time of {rounds} rounds, the checkouts in turn:")
    for corpus in names:
        row = {name: sum(t for f, t in best[name].items() if f.parent.name == corpus) for name in sides}
        print(f"  {corpus:9}" + "".join(f"  {name} {t:.2f} s" for name, t in row.items())
              + (f"  ({row['this checkout'] / row[against] - 1:+.1%})" if against else ""))
    total = {name: sum(best[name].values()) for name in sides}
    print(f"  {'all':9}" + "".join(f"  {name} {t:.2f} s" for name, t in total.items())
          + (f"  ({total['this checkout'] / total[against] - 1:+.1%})" if against else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="all", choices=["all", *TRUTH])
    ap.add_argument("--show", action="store_true", help="one line per paper")
    ap.add_argument("--time", type=int, default=0, metavar="N", help="time N rounds of reading instead")
    ap.add_argument("--against", metavar="REV", help="the app/ of this git revision instead (with --time: beside this one)")
    ap.add_argument("--ocr", type=int, default=0, metavar="PAGES",
                    help="OCR the first PAGES pages of papers without a text layer first, as an import does (slow)")
    ap.add_argument("--tables", action="store_true",
                    help="read the papers' tables too, and count the words split inside their cells (slow)")
    args = ap.parse_args()
    global OCR_PAGES, TABLES
    OCR_PAGES, TABLES = args.ocr, args.tables
    names = list(TRUTH) if args.corpus == "all" else [args.corpus]
    if args.time:
        timing(args.time, args.against, names)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        if args.against:
            extract_app(args.against, tmp)
            print(f"(the app/ of {args.against})")
        sys.path.insert(0, tmp if args.against else str(ROOT))
        for corpus in names:
            if (SHARED / corpus).is_dir():
                run_corpus(corpus, args.show)
            else:
                print(f"{corpus}: {SHARED / corpus} not found, skipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
