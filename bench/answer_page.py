"""The answer's page among an answer's citations, on answers saved by `bench/answers.py --save`.

Issue 78, item 5: where the model's claim states what a passage on another page of the same paper
says better, its citation should move there. Before building that, this measures what it could
gain. Per saved answer: is a gold page cited (by any claim, by the model's own claims), is it in the
evidence at all; and for every answer that misses it, the support judge's P(yes) for each model
claim against each passage of the papers it cites (its own citations and their other pages, the
same read the check makes: `support.judge_text`). A claim for which another page of its paper is
rated above its cited one is where a move would help; none such means the misses are the claim's
(a wrong or off-point sentence), not the citation's.

    RESEARCH_DESK_MODELS_DIR=<starter> .venv/bin/python bench/answer_page.py --library /tmp/rlib \
        [--library /tmp/mixlib] RUN.jsonl [RUN.jsonl …] [--no-judge]

Development questions only (answers.py saves no held-out answer).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval import gold_pages, load_questions  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.records import ResearchResult  # noqa: E402
from app.core.research.check.support import Pair, judge_beginning, judge_text, support_probability  # noqa: E402
from app.core.research.check.support_rules import quote_for  # noqa: E402

QUESTION_FILES = ("r-papers.jsonl", "mixed.jsonl", "fresh.jsonl", "tables.jsonl")


def misplaced(chat, result: ResearchResult) -> list[str]:
    """For each model claim: its cited passages' P(yes) against the best other page of the same papers."""
    lines = []
    for i, claim in enumerate(result.claims):
        if claim.quoted or not claim.sources:
            continue
        cited = [e for e in result.evidence if e.number in claim.sources]
        pages = {(e.paper_id, e.page) for e in cited}
        rated = []
        for e in result.evidence:
            if e.paper_id in {p for p, _ in pages}:
                pair = Pair(claim.text, e, quote=quote_for(claim.text, e, ""))
                rated.append((support_probability(chat, claim.text, judge_text(pair)) or 0.0, (e.paper_id, e.page) in pages, e))
        own = max((p for p, mine, _ in rated if mine), default=0.0)
        other = max(((p, e) for p, mine, e in rated if not mine), default=None, key=lambda t: t[0])
        better = other is not None and other[0] > own
        lines.append(f"  claim {i}: cited P(yes) {own:.2f}; best other page "
                     + (f"p{other[1].page} {other[0]:.2f}" if other else "none") + (" <- a move would help" if better else ""))
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--library", action="append", required=True, help="the libraries the saved answers were made from")
    ap.add_argument("--no-judge", action="store_true", help="count only; do not read the misses with the judge")
    args = ap.parse_args()

    questions = {q["id"]: q for name in QUESTION_FILES for q in load_questions(REPO / "bench" / "questions" / name)}
    by_file: dict[str, str] = {}
    desk = None
    for lib in args.library:
        desk = Desk(library=lib)
        by_file |= {p.source_file: p.id for p in desk.library.list_papers()}
    chat = None if args.no_judge else desk.chat()
    if chat is not None:
        chat.prefill(judge_beginning())
    counts = dict.fromkeys(("answers", "cited", "model", "evidence", "movable"), 0)
    for path in args.runs:
        for line in path.read_text(encoding="utf-8").splitlines():
            saved = json.loads(line)
            gold = gold_pages(questions[saved["id"]], by_file)
            result = ResearchResult.from_dict(saved["result"])
            model = {i for i, c in enumerate(result.claims) if not c.quoted}
            cited = any((c.paper_id, c.page) in gold for c in result.citations)
            counts["answers"] += 1
            counts["cited"] += cited
            counts["model"] += any((c.paper_id, c.page) in gold for c in result.citations if c.claim in model)
            in_evidence = any((e.paper_id, e.page) in gold for e in result.evidence)
            counts["evidence"] += in_evidence
            if cited or chat is None:
                continue
            lines = misplaced(chat, result)
            counts["movable"] += any("would help" in x for x in lines)
            print(f"{saved['id']}: gold page not cited ({'in' if in_evidence else 'not in'} the evidence)", *lines, sep="\n")
    n = counts["answers"]
    print(f"\n{n} answers: gold page cited {counts['cited']} ({counts['cited'] / max(n, 1):.0%}), by the model's own claims "
          f"{counts['model']}, gold page in the evidence {counts['evidence']}"
          + ("" if chat is None else f"; misses where another page of a cited paper is rated above the cited one: {counts['movable']}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
