#!/usr/bin/env python3
"""Validate the fresh development questions (fresh.jsonl, ids f01, f02, ...).

Written for issue 78 from pages no earlier question used, before any rule of that issue changed:
the questions the rule changes are measured on, not built on. Same format and checks as
heldout.jsonl (check_heldout.py): every fact group has a spelling in the reference answer and on a
listed page of its corpus; ids are unique; every id is in split.json "development".

Usage:
  python3 bench/questions/check_fresh.py [--r-papers DIR] [--mixed DIR]

Exit status 0 = valid, 1 = problems (listed on stderr), 2 = PyMuPDF or a corpus missing.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

from check_heldout import HERE, SHARED, SPLIT, Pages, check_question
from check_questions import KINDS, load_questions, report

FRESH = HERE / "fresh.jsonl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--r-papers", type=str, default=str(SHARED / "r-papers"), help="default: %(default)s")
    ap.add_argument("--mixed", type=str, default=str(SHARED / "mixed"))
    args = ap.parse_args(argv)
    try:
        import pymupdf  # noqa: F401, PLC0415
    except ImportError:
        print("PyMuPDF is required", file=sys.stderr)
        return 2
    corpora = {"r-papers": Pages(Path(args.r_papers)), "mixed": Pages(Path(args.mixed))}
    errors: list[str] = []
    rows = load_questions(FRESH, errors)
    ids = [q.get("id") for q in rows]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(f"duplicate id {dup}")
    for q in rows:
        # check_heldout wants h-ids; the rest of its checks (fields, facts on pages and in the answer) hold here
        qid = str(q.get("id"))
        if not re.fullmatch(r"f\d{2}", qid):
            errors.append(f"line {q['_line']}: id must be f01, f02, ...")
        before = len(errors)
        check_question({**q, "id": "h" + qid[1:]}, corpora, errors)
        errors[before:] = [e.replace(f"(h{qid[1:]})", f"({qid})") for e in errors[before:]
                           if "id must be h01" not in e]
    dev = set(json.loads(SPLIT.read_text(encoding="utf-8")).get("development", []))
    if set(ids) - dev:
        errors.append(f"split: not in development: {sorted(set(ids) - dev)}")
    print(f"{len(rows)} questions in {FRESH.name}")
    print("by corpus: " + ", ".join(f"{k}={v}" for k, v in sorted(collections.Counter(q.get("corpus") for q in rows).items())))
    print("by kind: " + ", ".join(f"{k}={sum(q.get('kind') == k for q in rows)}" for k in KINDS))
    files = collections.Counter(a["file"] for q in rows for a in q.get("answers", []))
    print(f"papers ({len(files)}): " + ", ".join(f"{f.rsplit('.', 1)[0]} {n}" for f, n in sorted(files.items())))
    return report(errors)


if __name__ == "__main__":
    sys.exit(main())
