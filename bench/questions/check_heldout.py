#!/usr/bin/env python3
"""Validate the held-out questions (heldout.jsonl) and the development / held-out split (split.json).

heldout.jsonl:
  * every line is a JSON object with id, question, answers, answer, kind, facts, corpus
    (and optionally table: true); ids h01, h02, ... are unique;
  * corpus is "r-papers" or "mixed", and every answers[].file exists in that corpus folder,
    with pages that are 1-based PDF page indices within the file (no duplicates);
  * facts is a list of fact groups, each a list of lowercase spellings of one fact (graded by
    substring on the normalized answer, see answer_right in bench/answers.py); every group has
    a spelling in the reference answer and a spelling on one of the listed pages. Page text is
    normalized the way the bench normalizes answers (NFKC, lowercase, dashes, whitespace
    collapsed), with ligatures folded, so a spelling found here is one a correct answer can carry;
  * a table question (answer only in a table row) is of kind factual.

split.json:
  * development and held_out are disjoint and together hold every id of r-papers.jsonl,
    mixed.jsonl, fresh.jsonl (development only; check_fresh.py), tables.jsonl (development only) and heldout.jsonl; every h-question is held out;
  * no held-out id is spent: named in a commit message, named in a tracked file outside
    bench/questions and resources/judge (the labelled pairs, whose own ids look alike), or a question whose system answer was labelled in support-pairs.jsonl.
    A spent id belongs in development.

Usage:
  python3 bench/questions/check_heldout.py [--r-papers DIR] [--mixed DIR]

The corpora default to <repo>/../shared/corpus/{r-papers,mixed}. Needs PyMuPDF; the git checks
are skipped (with a line saying so) where git is not available.
Exit status 0 = valid, 1 = problems (listed on stderr), 2 = PyMuPDF or a corpus missing.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

from check_questions import _DINGBATS, _PUNCT, KINDS, REPO, Corpus, check_answers, load_questions, report

HERE = Path(__file__).resolve().parent
HELDOUT = HERE / "heldout.jsonl"
SPLIT = HERE / "split.json"
SHARED = REPO.parent / "shared" / "corpus"
REQUIRED = {"id", "question", "answers", "answer", "kind", "facts", "corpus"}
OPTIONAL = {"table"}
ID = re.compile(r"\b[qmh]\d{2}\b")


def norm(text: str) -> str:
    """bench/answers.py's normalization of an answer, plus what PDF text layers need (ligatures, soft hyphens)."""
    text = "".join(_DINGBATS.get(c, c) for c in text)
    text = unicodedata.normalize("NFKC", text).replace("\u00ad", "")
    text = "".join(_PUNCT.get(c, c) for c in text.lower())
    return " ".join(text.split())


class Pages(Corpus):
    """A corpus folder whose pages are read as normalized text (whitespace kept, unlike check_questions)."""

    def __init__(self, folder: Path):
        super().__init__(folder)
        self._texts: dict[str, list[str]] = {}

    def texts(self, name: str) -> list[str]:
        if name not in self._texts:
            self._texts[name] = [norm(p.get_text()) for p in self._doc(name)]
        return self._texts[name]


def check_question(q: dict, corpora: dict[str, Pages], errors: list[str]) -> None:
    where = f"line {q['_line']} ({q.get('id', '?')})"
    keys = set(q) - {"_line"}
    if not REQUIRED <= keys <= REQUIRED | OPTIONAL:
        errors.append(f"{where}: fields {sorted(keys)}; need {sorted(REQUIRED)}, may add {sorted(OPTIONAL)}")
    if not re.fullmatch(r"h\d{2}", str(q.get("id"))):
        errors.append(f"{where}: id must be h01, h02, ...")
    for field in ("question", "answer"):
        if not isinstance(q.get(field), str) or not q[field].strip():
            errors.append(f"{where}: empty {field}")
    if q.get("kind") not in KINDS:
        errors.append(f"{where}: kind {q.get('kind')!r} not in {KINDS}")
    if "table" in q and (q["table"] is not True or q.get("kind") != "factual"):
        errors.append(f"{where}: a table question has table: true and kind factual")
    corpus = corpora.get(q.get("corpus"))
    if corpus is None:
        errors.append(f"{where}: corpus {q.get('corpus')!r} not in {sorted(corpora)}")
        return
    facts = q.get("facts")
    if not isinstance(facts, list) or not facts or not all(
            isinstance(g, list) and g and all(isinstance(s, str) and s.strip() for s in g) for g in facts):
        errors.append(f"{where}: facts must be a non-empty list of non-empty lists of spellings")
        return
    # the normalized text of every listed page
    pages = [corpus.texts(name)[p - 1] for name, p in check_answers(where, q.get("answers"), corpus, errors)]
    answer = norm(q.get("answer") or "")
    for group in facts:
        if any(s != norm(s) for s in group):
            errors.append(f"{where}: spellings must be normalized (lowercase, single spaces): {group}")
        if not any(norm(s) in answer for s in group):
            errors.append(f"{where}: the reference answer has none of {group}")
        if pages and not any(norm(s) in text for s in group for text in pages):
            errors.append(f"{where}: no listed page has any of {group}")


def git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout


def check_split(heldout: list[dict], errors: list[str]) -> tuple[int, int]:
    split = json.loads(SPLIT.read_text(encoding="utf-8"))
    dev, held = split.get("development", []), split.get("held_out", [])
    every = [q["id"] for f in ("r-papers.jsonl", "mixed.jsonl", "fresh.jsonl", "tables.jsonl") if (HERE / f).is_file()
             for q in map(json.loads, (HERE / f).read_text().splitlines())]
    every += [q.get("id") for q in heldout]
    for name, ids in (("development", dev), ("held_out", held)):
        if len(ids) != len(set(ids)):
            errors.append(f"split: {name} lists an id twice")
    if set(dev) & set(held):
        errors.append(f"split: in both lists: {sorted(set(dev) & set(held))}")
    if set(dev) | set(held) != set(every):
        errors.append(f"split: missing {sorted(set(every) - set(dev) - set(held))}, "
                      f"unknown {sorted((set(dev) | set(held)) - set(every))}")
    # Spent: the system's answers to these questions were read and labelled.
    questions = {q["question"]: q["id"] for f in ("r-papers.jsonl", "mixed.jsonl", "heldout.jsonl")
                 for q in map(json.loads, (HERE / f).read_text().splitlines())}
    pairs = map(json.loads, (HERE.parents[1] / "resources" / "judge" / "support-pairs.jsonl").read_text().splitlines())
    spent = {questions[p["question"]] for p in pairs if p.get("question") in questions}
    logs, tracked = git("log", "--format=%B"), git("grep", "-I", "-h", "-E", r"\b[qmh][0-9]{2}\b", "--", ".", ":!bench/questions",
                                                 ":!resources/judge")  # the labelled pairs' own ids (h01…), moved there
    if logs is None or tracked is None:
        print("git not available: commit messages and tracked files not checked for held-out ids")
    else:
        spent |= set(ID.findall(logs)) | set(ID.findall(tracked))
    if spent & set(held):
        errors.append(f"split: spent ids still held out (move them to development): {sorted(spent & set(held))}")
    # A question of heldout.jsonl leaves the held-out part only once it is spent.
    if not {q.get("id") for q in heldout} - spent <= set(held):
        errors.append("split: every unspent question of heldout.jsonl is held out")
    return len(dev), len(held)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--r-papers", type=Path, default=SHARED / "r-papers", help="default: %(default)s")
    ap.add_argument("--mixed", type=Path, default=SHARED / "mixed", help="default: %(default)s")
    args = ap.parse_args(argv)
    try:
        import pymupdf  # noqa: F401, PLC0415
    except ImportError:
        print("PyMuPDF is required: python3 -m pip install --user pymupdf", file=sys.stderr)
        return 2
    corpora = {"r-papers": Pages(args.r_papers), "mixed": Pages(args.mixed)}
    for name, corpus in corpora.items():
        if not corpus.folder.is_dir():
            print(f"{name} corpus folder not found: {corpus.folder}", file=sys.stderr)
            return 2

    errors: list[str] = []
    rows = load_questions(HELDOUT, errors)
    ids = [q.get("id") for q in rows]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(f"duplicate id {dup}")
    for q in rows:
        check_question(q, corpora, errors)
    dev, held = check_split(rows, errors)

    print(f"{len(rows)} questions in {HELDOUT.name}; split: {dev} development, {held} held out")
    print("by corpus: " + ", ".join(f"{k}={v}" for k, v in sorted(collections.Counter(q.get("corpus") for q in rows).items())))
    print("by kind: " + ", ".join(f"{k}={sum(q.get('kind') == k for q in rows)}" for k in KINDS))
    print(f"answers only in a table: {sum(bool(q.get('table')) for q in rows)}")
    print(f"fact groups checked against pages and reference answers: {sum(len(q.get('facts') or []) for q in rows)}")
    files = collections.Counter(a["file"] for q in rows for a in q.get("answers", []) if isinstance(a, dict))
    print(f"papers ({len(files)}): " + ", ".join(f"{f.rsplit('.', 1)[0]} {n}" for f, n in sorted(files.items())))
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
