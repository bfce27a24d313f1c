"""Deep research against its time budget, and its evidence against standard mode, in one run.

For each budget (default 1, 2 and 5 minutes) and each question, runs deep research and prints one
row: wall time vs budget (the promise: a budget too small for a research round answers as standard
mode does; a larger one is used to ≥ 80 % and ≤ 110 %), what the plan decided (rounds, or "standard"),
whether the answer is cited (claims with citations, and how many the support check found supported),
and the page-recall of the evidence it gathered (and of the part that reached the answer's prompt).
For the same questions, standard mode's stage-2 evidence page-recall is the baseline; with
`--standard` a full standard answer is timed too (what a too-small budget falls back to). "answer s pred/actual" compares the plan's predicted cost of
the answer (the synthesis reserve) with what writing and checking it took.

    .venv/bin/python bench/deep.py --library /tmp/rlib [--times 1 2 5] [--limit 5] [--standard]
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
from app.core.research.deep.runner import DeepResearch  # noqa: E402


def page_recall(evidence, gold) -> float:
    return len({(e.paper_id, e.page) for e in evidence} & gold) / len(gold)


def cited(result) -> tuple[bool, str]:
    """(a cited answer?, "supported/citations" as the support check judged them)."""
    citations = result.citations
    supported = sum(c.support == "supported" for c in citations)
    return bool(citations), f"{supported}/{len(citations)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--times", type=float, nargs="+", default=[1, 2, 5])
    ap.add_argument("--limit", type=int, default=5, help="questions per budget (spread over the set)")
    ap.add_argument("--loop", action="store_true", help="the 3-round loop (`--time` without `--deep`) instead of deep's 7")
    ap.add_argument("--standard", action="store_true", help="also time a full standard answer per question")
    args = ap.parse_args()

    desk = Desk(library=args.library)
    by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
    questions = spread_questions(Path(args.questions), by_file, args.limit)
    print(f"chat model: {desk.chat_config().describe()}; {len(questions)} questions")
    desk.chat()  # load once, outside the timed runs

    standard, standard_walls, standard_prompt = [], [], []
    for q in questions:
        started = time.monotonic()
        result = desk.funnel().run(q["question"], evidence_only=True)
        standard.append(page_recall(result.evidence, gold_pages(q, by_file)))
        if args.standard:
            started = time.monotonic()
            result = desk.funnel().run(q["question"])
            standard_walls.append(time.monotonic() - started)
            standard_prompt.append(page_recall(result.evidence, gold_pages(q, by_file)))  # what reached its prompt
            ok, support = cited(result)
            print(f"standard  q{len(standard)}: wall {standard_walls[-1]:6.1f} s; cited {'yes' if ok else 'NO'} ({support} supported); "
                  f"recall in prompt {standard_prompt[-1]:.2f}")
    print(f"standard mode: stage-2 evidence page-recall {statistics.mean(standard):.3f}"
          + (f"; in the answer's prompt {statistics.mean(standard_prompt):.3f}; answer wall mean "
             f"{statistics.mean(standard_walls):.1f} s" if standard_walls else ""))

    print()
    print("| budget | q | wall s | wall/budget | plan | answer s pred/actual | rounds | widened | cited | supported | recall gathered | recall in prompt | limits |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for minutes in args.times:
        budget = minutes * 60
        walls, recalls, used, cited_count = [], [], [], 0
        for i, q in enumerate(questions, 1):
            started = time.monotonic()
            deep = DeepResearch(desk.funnel(), desk.settings.deep, deep=not args.loop, time_minutes=minutes, started_at=started)
            try:
                result = deep.run(q["question"])
                recalls.append(page_recall(deep.pool, gold_pages(q, by_file)))  # all it gathered
                used.append(page_recall(result.evidence, gold_pages(q, by_file)))  # what reached the answer's prompt
                m = result.extra["methodology"]
                ok, support = cited(result)
                cited_count += ok
                plan = "standard" if m["answered_as_standard"] else "research"
                actual = result.timings.get("synthesis_s", 0.0) + result.timings.get("check_s", 0.0)
                plan += f" | {m['plan'].get('answer_s', 0):.0f}/{actual:.0f}"
                limits = ",".join(result.extra["limits_hit"]) or m["stop_reason"]
                row = (m["rounds"], len(m["widened"]), "yes" if ok else "NO", support, recalls[-1], used[-1], limits)
            except Exception as exc:  # noqa: BLE001 - report and go on
                recalls.append(0.0)
                used.append(0.0)
                plan, row = "error | -", (0, 0, "NO", "-", 0.0, 0.0, f"{type(exc).__name__}: {exc}")
            walls.append(time.monotonic() - started)
            rounds, widened, ok_text, support, rec, inprompt, limits = row
            print(f"| {minutes:g} min | {i} | {walls[-1]:.1f} | {walls[-1] / budget:.2f} | {plan} | {rounds} | {widened} | "
                  f"{ok_text} | {support} | {rec:.2f} | {inprompt:.2f} | {limits} |", flush=True)
        summary.append(
            f"--time {minutes:g}: wall mean {statistics.mean(walls):.1f} s, min {min(walls):.1f}, max {max(walls):.1f} s "
            f"(budget {budget:.0f} s; wall/budget {min(walls) / budget:.2f}–{max(walls) / budget:.2f}); cited answers "
            f"{cited_count}/{len(questions)}; gathered evidence page-recall {statistics.mean(recalls):.3f} vs standard "
            f"{statistics.mean(standard):.3f} (in the answer's prompt: {statistics.mean(used):.3f})")
    print()
    print("\n".join(summary))
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
