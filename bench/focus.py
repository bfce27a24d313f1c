"""Does focusing keep the answer page? Evidence size and gold-page hit before and after focusing.

For every question of a set (no chat model needed), runs stages 1–2 and then focuses the
evidence as synthesis does (`focus_tokens`, default 640). Prints the share of questions whose
gold page is in the stage-2 passages and in the focused evidence, and whose gold facts (every
fact group of the question, as the answer bench checks answers) are in that text: a page can
be there without the sentence that answers. Then the same for the passages of the first turn
(`first_claim_tokens`; each `--first` budget re-focuses the passages, since it also sizes the best
passage's window), the evidence tokens sent to the model (~4 characters a token), and the
time to the focused evidence on screen.

    .venv/bin/python bench/focus.py --library /tmp/rlib [--questions bench/questions/r-papers.jsonl] [--budget 640]
        [--split development] [--set "merge_neighbours=section"]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from answers import _norm  # noqa: E402
from retrieval import gold_pages, load_questions, split_questions, variant  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.research.evidence.not_evidence import entry_spans, is_axis_ticks, is_reference_list  # noqa: E402
from app.core.research.answer.prompt import format_passage  # noqa: E402
from app.core.research.answer.synthesis import focus_into  # noqa: E402


def facts_in(text: str, facts: list[list[str]]) -> bool:
    """Every fact group of the question has one accepted spelling in the text (as answers.py checks answers)."""
    body = _norm(text)
    return bool(facts) and all(any(_norm(alt) in body for alt in group) for group in facts)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--budget", type=int, help="focus_tokens (default: the setting)")
    ap.add_argument("--first", type=int, nargs="+", help="first-turn budgets to compare (default: the setting)")
    ap.add_argument("--split", choices=["development", "held-out"], help="that part of bench/questions/split.json")
    ap.add_argument("--each", action="store_true", help="a line per question: gold facts focused, in each first turn")
    ap.add_argument("--set", default="", help='ResearchParams for this run: "key=value,…" (as bench/retrieval.py --variant)')
    args = ap.parse_args()

    desk = Desk(library=args.library)
    by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
    questions = load_questions(Path(args.questions))
    questions = [q for q in (split_questions(questions, args.split) if args.split else questions) if gold_pages(q, by_file)]
    overrides = {**({"focus_tokens": args.budget} if args.budget else {}), **variant(f"set:{args.set}")[1]}
    budgets = args.first or [desk.settings.research.first_claim_tokens]
    hit_first: dict[int, list[float]] = {b: [] for b in budgets}
    facts_first: dict[int, list[float]] = {b: [] for b in budgets}
    hit_before, hit_after, tokens_before, tokens_after, seconds = [], [], [], [], []
    facts_before, facts_after = [], []
    listed, entries, ticks = [], [], []  # reference lists in stage 2; reference entries, axis ticks focused
    for q in questions:
        gold = gold_pages(q, by_file)
        funnel = desk.funnel(overrides=overrides)
        started = time.monotonic()
        result = funnel.run(q["question"], evidence_only=True)
        hit_before.append(float(any((e.paper_id, e.page) in gold for e in result.evidence)))
        tokens_before.append(sum(len(e.text) for e in result.evidence) / 4)
        facts = q.get("facts") or []
        facts_before.append(float(facts_in("\n".join(e.text for e in result.evidence), facts)))
        stage2 = list(result.evidence)
        listed.append(float(any(is_reference_list(e.text) for e in stage2)))
        focus_into(funnel, result)
        entries.append(float(any(entry_spans(e.focus_text) for e in result.evidence)))
        ticks.append(float(any(is_axis_ticks(s.text) for e in result.evidence for s in e.sentences)))
        seconds.append(time.monotonic() - started)
        hit_after.append(float(any((e.paper_id, e.page) in gold for e in result.evidence)))
        tokens_after.append(sum(len(format_passage(e, q["question"])) for e in result.evidence) / 4)
        facts_after.append(float(facts_in("\n".join(e.focus_text for e in result.evidence), facts)))
        for budget in budgets:
            # The first window is sized by first_claim_tokens: re-focus the stage-2 passages with this budget.
            evidence = result.evidence
            if budget != desk.settings.research.first_claim_tokens:
                again = desk.funnel(overrides={**overrides, "first_claim_tokens": budget})
                trial = replace(result, evidence=list(stage2))
                focus_into(again, trial)
                evidence = trial.evidence
            spent, first = 0, []
            for e in evidence:
                cost = len(format_passage(e, q["question"])) / 4 + 2  # as the prompt shows it
                if first and spent + cost > budget:
                    break
                first.append(e)
                spent += cost
            hit_first[budget].append(float(any((e.paper_id, e.page) in gold for e in first)))
            facts_first[budget].append(float(facts_in("\n".join(e.focus_text for e in first), facts)))
        if args.each:
            print(f"{q['id']} facts focused {facts_after[-1]:.0f} first turn "
                  + " ".join(f"{facts_first[b][-1]:.0f}" for b in budgets), flush=True)
    print(f"{len(questions)} questions from {Path(args.questions).name}; focus_tokens {args.budget or desk.settings.research.focus_tokens}; "
          f"{args.split or 'all'} questions; {overrides or 'the settings'}")
    print("| | gold page in evidence | gold facts in evidence | evidence tokens p50 |")
    print("|---|---|---|---|")
    print(f"| stage-2 passages (whole) | {statistics.mean(hit_before):.1%} | {statistics.mean(facts_before):.1%} | {pct(tokens_before, .5):.0f} |")
    print(f"| focused sentences (all sent) | {statistics.mean(hit_after):.1%} | {statistics.mean(facts_after):.1%} | {pct(tokens_after, .5):.0f} |")
    for budget, hits in hit_first.items():
        print(f"| first turn only ({budget} tokens) | {statistics.mean(hits):.1%} | {statistics.mean(facts_first[budget]):.1%} | — |")
    print(f"questions with a reference list among the stage-2 passages: {statistics.mean(listed):.1%}; "
          f"with reference entries in the focused evidence: {statistics.mean(entries):.1%}; "
          f"with a figure's axis ticks in it: {statistics.mean(ticks):.1%}")
    print(f"time to focused evidence (stages 1-2 + focus): p50 {pct(seconds, .5):.2f} s, p95 {pct(seconds, .95):.2f} s")
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
