"""Grade answers saved by `bench/answers.py --save`, again and more finely, without asking a model.

Per saved run (one file, or one pipeline in it): answers right by the model's own sentences, by the
quotes, and whole (as answers.py grades them); and the gold fact groups the model's own sentences
state, of all the questions' groups. The last is the finer grade: a tiny model rarely states every
fact of an answer, yet one that states some of them reads better than one that states none. It is
how the hand-labelled answers rank chat models beside `models rate`'s generated questions
(docs/lab/, "Models measured").

    .venv/bin/python bench/grade_saved.py RUN.jsonl [RUN.jsonl …] [--pipeline "claims (new)"]

Development questions only: answers.py saves no held-out answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from answers import answer_parts, answer_right  # noqa: E402

from app.core.records import ResearchResult  # noqa: E402


def grade(path: Path, pipeline: str) -> dict[str, int]:
    counts = dict.fromkeys(("questions", "model", "quotes", "whole", "groups", "groups_model"), 0)
    for line in path.read_text(encoding="utf-8").splitlines():
        saved = json.loads(line)
        if saved["pipeline"] != pipeline:
            continue
        result, facts = ResearchResult.from_dict(saved["result"]), saved["facts"]
        mine, quotes = answer_parts(result)
        counts["questions"] += 1
        counts["model"] += answer_right(mine, facts)
        counts["quotes"] += answer_right(quotes, facts)
        counts["whole"] += answer_right(result.answer, facts)
        counts["groups"] += len(facts)
        counts["groups_model"] += sum(answer_right(mine, [group]) for group in facts)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--pipeline", default="claims (new)", help="the pipeline's name in the saved lines")
    args = ap.parse_args()
    print("| run | questions | right by the model's sentences | by the quotes | whole | fact groups in the model's sentences |")
    print("|---|---|---|---|---|---|")
    for path in args.runs:
        c = grade(path, args.pipeline)
        print(f"| {path.name} | {c['questions']} | {c['model']} | {c['quotes']} | {c['whole']} | {c['groups_model']}/{c['groups']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
