"""Deep research against its time budget, and its evidence against standard mode, in one run.

For each budget (default 1, 2 and 5 minutes) and each question, runs deep research and prints
wall time vs budget (target ≤ budget + 10 %) and the page-recall of the evidence it gathered (and of the part that fit the answer); for the
same questions, standard mode's stage-2 evidence page-recall, as the baseline.

    .venv/bin/python bench/deep.py --library /tmp/rlib [--times 1 2 5] [--limit 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval import gold_pages, spread_questions  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.research.deep import DeepResearch  # noqa: E402


def page_recall(evidence, gold) -> float:
    return len({(e.paper_id, e.page) for e in evidence} & gold) / len(gold)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--times", type=float, nargs="+", default=[1, 2, 5])
    ap.add_argument("--limit", type=int, default=5, help="questions per budget (spread over the set)")
    ap.add_argument("--deep", action="store_true", default=True)
    args = ap.parse_args()

    desk = Desk(library=args.library)
    by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
    questions = spread_questions(Path(args.questions), by_file, args.limit)
    print(f"chat model: {desk.chat_config().describe()}; {len(questions)} questions")
    desk.chat()  # load once, outside the timed runs

    standard = []
    for q in questions:
        result = desk.funnel().run(q["question"], evidence_only=True)
        standard.append(page_recall(result.evidence, gold_pages(q, by_file)))
    print(f"standard mode: stage-2 evidence page-recall {statistics.mean(standard):.3f}")

    for minutes in args.times:
        walls, recalls, used, limits = [], [], [], []
        for q in questions:
            started = time.monotonic()
            deep = DeepResearch(desk.funnel(), desk.settings.deep, deep=args.deep, time_minutes=minutes, started_at=started)
            try:
                result = deep.run(q["question"])
                recalls.append(page_recall(deep.pool, gold_pages(q, by_file)))  # all it gathered
                used.append(page_recall(result.evidence, gold_pages(q, by_file)))  # what fit the answer's time

                limits.append(",".join(result.extra["limits_hit"]) or result.extra["methodology"]["stop_reason"])
            except Exception as exc:  # noqa: BLE001 - report and go on
                recalls.append(0.0)
                used.append(0.0)
                limits.append(f"error: {exc}")
            walls.append(time.monotonic() - started)
        budget = minutes * 60
        worst = max(walls)
        print(f"--time {minutes:g}: wall mean {statistics.mean(walls):.1f} s, max {worst:.1f} s "
              f"(budget {budget:.0f} s, max/budget {worst / budget:.2f}, target ≤ 1.10); "
              f"gathered evidence page-recall {statistics.mean(recalls):.3f} vs standard {statistics.mean(standard):.3f} "
              f"(in the answer's prompt: {statistics.mean(used):.3f}); "
              f"limits: {sorted(set(limits))}")
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
