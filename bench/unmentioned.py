"""Questions the library cannot answer: does the answer say so? (research/answer/unmentioned.py)

Asks every bench question of its own library (answerable) and of the other one (not: the
r-papers questions of the mixed-fields library, and the other way round), stages 1-2 only (no
chat model), and prints for each: how many stop at "no paper matches", how many go on with a
question word no paper contains, and how many get the caution above the answer. An answerable
question with a caution is a false alarm; an unanswerable one answered without it is a miss.

    .venv/bin/python bench/unmentioned.py --library /tmp/rlib --mixed-library /tmp/mlib
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.desk import Desk  # noqa: E402
from app.core.errors import NoRelevantPapers  # noqa: E402


def ask(library: str, questions: Path, show: bool) -> dict[str, int]:
    desk = Desk(library=library)
    funnel = desk.funnel()
    counts = {"questions": 0, "no paper matches": 0, "a word no paper has": 0, "cautioned": 0}
    try:
        for line in questions.read_text().splitlines():
            q = json.loads(line)
            counts["questions"] += 1
            try:
                result = funnel.run(q["question"], evidence_only=True)
            except NoRelevantPapers:
                counts["no paper matches"] += 1
                continue
            counts["a word no paper has"] += bool(result.unmentioned)
            counts["cautioned"] += bool(result.caution)
            if show and result.unmentioned:
                best = max((e.score for e in result.evidence), default=0.0)
                print(f"  {q['id']}: {result.unmentioned} best cosine {best:.2f}{' caution' if result.caution else ''}")
    finally:
        desk.close()
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True, help="a library of ../shared/corpus/r-papers")
    ap.add_argument("--mixed-library", required=True, help="a library of ../shared/corpus/mixed")
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--mixed-questions", default=str(REPO / "bench" / "questions" / "mixed.jsonl"))
    ap.add_argument("--show", action="store_true", help="print each question with a word no paper has")
    args = ap.parse_args()
    runs = [("answerable", "r-papers questions, r-papers library", args.library, args.questions),
            ("answerable", "mixed questions, mixed library", args.mixed_library, args.mixed_questions),
            ("not answerable", "r-papers questions, mixed library", args.mixed_library, args.questions),
            ("not answerable", "mixed questions, r-papers library", args.library, args.mixed_questions)]
    print("| questions | kind | asked | no paper matches | answered with a word no paper has | answered with the caution |")
    print("|---|---|---|---|---|---|")
    for kind, name, library, questions in runs:
        if args.show:
            print(f"{name}:")
        c = ask(library, Path(questions), args.show)
        print(f"| {name} | {kind} | {c['questions']} | {c['no paper matches']} | {c['a word no paper has']} | {c['cautioned']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
