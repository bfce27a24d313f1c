#!/usr/bin/env python3
"""Validate the r-papers question set.

Checks (errors make the script exit with status 1):
  * every line of r-papers.jsonl is a JSON object with the fields
    id, question, answers, answer, kind (and nothing unexpected);
  * ids are unique, kind is one of factual|conceptual|comparison|method;
  * every answers[].file exists in the corpus folder and every page is a
    1-based PDF page index within that file's page count (no duplicates);
  * (unless --no-evidence) every key phrase recorded in r-papers.evidence.json
    occurs on the page it is recorded for, and the evidence covers exactly the
    files/pages listed in the JSONL.  Matching ignores case, whitespace and
    hyphens, folds ligatures (NFKC, and the control-character ligatures of
    strucchange-intro.pdf) and decodes PLSvGLS.pdf's Type3 "dingbat" text
    layer, so it is robust to PDF line breaks.

It then prints per-kind counts, the number of multi-paper questions and the
coverage per paper (papers of the corpus with no question are flagged).

Usage:
  python3 bench/questions/check_questions.py [--corpus DIR] [--no-evidence]

The corpus defaults to $RESEARCH_DESK_CORPUS, else <repo>/../shared/corpus/r-papers
(the same location tests/conftest.py uses).  Needs PyMuPDF (`import pymupdf`).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_CORPUS = Path(os.environ.get("RESEARCH_DESK_CORPUS") or REPO.parent / "shared" / "corpus" / "r-papers")
QUESTIONS = HERE / "r-papers.jsonl"
EVIDENCE = HERE / "r-papers.evidence.json"
KINDS = ("factual", "conceptual", "comparison", "method")
FIELDS = {"id", "question", "answers", "answer", "kind", "facts"}  # facts: bench/answers.py checks answers against them

# PLSvGLS.pdf is typeset with Type3 fonts whose glyph names map to Unicode
# dingbats; this table turns its text layer back into ASCII for matching.
_DINGBATS = {
    "❛": "a", "❜": "b", "❝": "c", "❞": "d", "❡": "e", "❢": "f", "❣": "g", "❤": "h", "✐": "i",
    "❄": "j", "❦": "k", "❧": "l", "♠": "m", "♥": "n", "♦": "o", "♣": "p", "✉": "u", "✈": "v",
    "✇": "w", "①": "x", "②": "y", "③": "z",
    "❆": "A", "❇": "B", "❈": "C", "❉": "D", "❊": "E", "❋": "F", "●": "G", "❍": "H", "■": "I",
    "▲": "L", "▼": "M", "◆": "N", "❖": "O", "❘": "R", "❙": "S", "❚": "T", "❯": "U", "❱": "V",
    "❲": "W", "❳": "X", "❩": "Z",
    "✵": "0", "✶": "1", "✷": "2", "✸": "3", "✹": "4", "✺": "5", "✻": "6", "✼": "7", "✽": "8",
    "✾": "9",
    "✱": ",", "✲": "-", "✳": ".", "✭": "(", "✮": ")", "✏": '"', "✑": '"', "✕": "-", "✖": "-",
    "✛": "ff", "✜": "fi", "✣": "ffi", "✧": ":", "✬": "'", "➓": "§",
    # strucchange-intro.pdf (OT1-encoded fonts) yields ligatures as control characters
    "\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl",
}
_PUNCT = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2212": "-", "\u2013": "-", "\u2014": "-"}


def match_key(text: str) -> str:
    """Normalise text for robust substring matching."""
    text = "".join(_DINGBATS.get(c, c) for c in text)
    text = unicodedata.normalize("NFKC", text).replace("\u00ad", "")
    text = "".join(_PUNCT.get(c, c) for c in text.lower())
    return re.sub(r"[\s\-]+", "", text)


class Corpus:
    def __init__(self, folder: Path):
        self.folder = folder
        self._docs: dict[str, object] = {}
        self._keys: dict[str, list[str]] = {}

    def _doc(self, name: str):
        if name not in self._docs:
            import pymupdf  # noqa: PLC0415  (optional heavy import)

            self._docs[name] = pymupdf.open(self.folder / name)
        return self._docs[name]

    def exists(self, name: str) -> bool:
        return (self.folder / name).is_file()

    def page_count(self, name: str) -> int:
        return len(self._doc(name))

    def page_keys(self, name: str) -> list[str]:
        if name not in self._keys:
            self._keys[name] = [match_key(p.get_text()) for p in self._doc(name)]
        return self._keys[name]


def load_questions(path: Path, errors: list[str]) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            errors.append(f"line {n}: empty line")
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"line {n}: invalid JSON ({exc})")
            continue
        if not isinstance(obj, dict):
            errors.append(f"line {n}: not a JSON object")
            continue
        obj["_line"] = n
        rows.append(obj)
    return rows


def check_structure(rows: list[dict], corpus: Corpus, errors: list[str]) -> None:
    seen: set[str] = set()
    for q in rows:
        where = f"line {q['_line']} ({q.get('id', '?')})"
        keys = set(q) - {"_line"}
        if keys != FIELDS:
            errors.append(f"{where}: fields {sorted(keys)} != {sorted(FIELDS)}")
        qid = q.get("id")
        if not isinstance(qid, str) or not qid:
            errors.append(f"{where}: missing id")
        elif qid in seen:
            errors.append(f"{where}: duplicate id {qid}")
        else:
            seen.add(qid)
        for field in ("question", "answer"):
            if not isinstance(q.get(field), str) or not q[field].strip():
                errors.append(f"{where}: empty {field}")
        if q.get("kind") not in KINDS:
            errors.append(f"{where}: kind {q.get('kind')!r} not in {KINDS}")
        check_answers(where, q.get("answers"), corpus, errors)


def check_answers(where: str, answers: object, corpus: Corpus, errors: list[str]) -> list[tuple[str, int]]:
    """A question's `answers` (files in the corpus, 1-based pages within them); returns the valid (file, page) pairs."""
    if not isinstance(answers, list) or not answers:
        errors.append(f"{where}: answers must be a non-empty list")
        return []
    files = [a.get("file") for a in answers if isinstance(a, dict)]
    if len(files) != len(set(files)):
        errors.append(f"{where}: a file is listed twice in answers")
    valid = []
    for a in answers:
        if not isinstance(a, dict) or set(a) != {"file", "pages"}:
            errors.append(f"{where}: answer entries need exactly 'file' and 'pages'")
            continue
        name, pages = a["file"], a["pages"]
        if not corpus.exists(name):
            errors.append(f"{where}: file {name!r} not in {corpus.folder}")
            continue
        if not isinstance(pages, list) or not pages or not all(isinstance(p, int) for p in pages):
            errors.append(f"{where}: {name}: pages must be a non-empty list of ints")
            continue
        if len(pages) != len(set(pages)):
            errors.append(f"{where}: {name}: duplicate pages")
        count = corpus.page_count(name)
        for p in pages:
            if 1 <= p <= count:
                valid.append((name, p))
            else:
                errors.append(f"{where}: {name}: page {p} outside 1..{count}")
    return valid


def check_evidence(rows: list[dict], corpus: Corpus, errors: list[str]) -> int:
    """Verify the key phrases; returns the number of phrases checked."""
    evidence = json.loads(EVIDENCE.read_text(encoding="utf-8"))
    checked = 0
    ids = {q.get("id") for q in rows}
    for extra in sorted(set(evidence) - ids):
        errors.append(f"evidence: {extra} has no question")
    for q in rows:
        qid = q.get("id")
        ev = evidence.get(qid)
        if ev is None:
            errors.append(f"{qid}: no evidence recorded")
            continue
        listed = {a["file"]: sorted(a["pages"]) for a in q.get("answers", []) if isinstance(a, dict)}
        recorded = {f: sorted(int(p) for p in pg) for f, pg in ev.items()}
        if listed != recorded:
            errors.append(f"{qid}: answers {listed} != evidence pages {recorded}")
        for name, by_page in ev.items():
            if not corpus.exists(name):
                continue
            keys = corpus.page_keys(name)
            for page, phrases in by_page.items():
                p = int(page)
                if not 1 <= p <= len(keys):
                    continue
                if not phrases:
                    errors.append(f"{qid}: {name} p{p}: no key phrase recorded")
                for phrase in phrases:
                    checked += 1
                    k = match_key(phrase)
                    if k not in keys[p - 1]:
                        found = [i + 1 for i, t in enumerate(keys) if k in t]
                        errors.append(f"{qid}: {name} p{p}: phrase not on page {phrase!r} (found on {found})")
    return checked


def report(errors: list[str]) -> int:
    """The exit status: the problems go to stderr (1), or OK (0)."""
    if errors:
        print(f"\n{len(errors)} problem(s):", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print("\nOK")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder with the PDFs (default: %(default)s)")
    ap.add_argument("--no-evidence", action="store_true", help="skip the key-phrase check")
    args = ap.parse_args(argv)

    try:
        import pymupdf  # noqa: F401, PLC0415
    except ImportError:
        print("PyMuPDF is required: python3 -m pip install --user pymupdf", file=sys.stderr)
        return 2
    if not args.corpus.is_dir():
        print(f"corpus folder not found: {args.corpus}", file=sys.stderr)
        return 2

    corpus = Corpus(args.corpus)
    errors: list[str] = []
    rows = load_questions(QUESTIONS, errors)
    check_structure(rows, corpus, errors)
    checked = 0
    if not args.no_evidence:
        checked = check_evidence(rows, corpus, errors)

    pdfs = sorted(p.name for p in args.corpus.glob("*.pdf"))
    coverage = collections.Counter(a["file"] for q in rows for a in q.get("answers", []) if isinstance(a, dict))
    kinds = collections.Counter(q.get("kind") for q in rows)
    multi = [q.get("id") for q in rows if len({a.get("file") for a in q.get("answers", []) if isinstance(a, dict)}) > 1]

    print(f"{len(rows)} questions in {QUESTIONS.name}")
    print("by kind: " + ", ".join(f"{k}={kinds.get(k, 0)}" for k in KINDS))
    print(f"questions citing two or more papers: {len(multi)} ({', '.join(multi)})")
    if not args.no_evidence:
        print(f"key phrases verified on their pages: {checked}")
    print(f"\ncoverage per paper ({sum(1 for p in pdfs if coverage[p])}/{len(pdfs)} papers covered):")
    for name in pdfs:
        n = coverage.get(name, 0)
        flag = "" if n else "   <-- NOT COVERED"
        print(f"  {name:<24} {n:3d}{flag}")
    for name in sorted(set(coverage) - set(pdfs)):
        print(f"  {name:<24} {coverage[name]:3d}   <-- not in corpus")
    uncovered = [p for p in pdfs if not coverage.get(p)]
    if uncovered:
        errors.append(f"papers without questions: {', '.join(uncovered)}")

    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
