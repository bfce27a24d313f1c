"""What writing a faulted claim again buys, by why it was faulted, and what it costs (issue 80).

The check writes a claim of the model again (answer/rewrite.py) where it faults it: it only says
the question back ("echo"), states a figure no cited passage states ("figure"), no cited passage
supports it even in part ("unsupported"), or the papers hold a sentence rated clearly better for
answering the question ("off point"). Each rewrite is a model call (~300 tokens read, one
sentence written) and the new claim's check: 0.4-0.9 unit where it runs.

For each development question this runs the whole answer once (rewrites as shipped) and records
every rewrite: why, seconds, whether the new claim was kept, and the gold fact groups (the
question's `facts`) held by the old and by the new claim. Per answer it compares the model's own
sentences as answered with the same sentences had no claim been written again (each kept
rewrite's old text put back): fact groups gained and lost. The quotes (key passages) are graded
apart and not here: a rewrite never changes them.

    RESEARCH_DESK_MODELS_DIR=<starter + MiniLM> .venv/bin/python bench/rewrite_value.py --library /tmp/rlib \\
        --questions bench/questions/r-papers.jsonl [--questions bench/questions/mixed.jsonl --library2 /tmp/mixlib] \\
        --limit 20 --chat <starter GGUF>

Development questions only (bench/questions/split.json), spread over each set.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from answers import answer_right  # noqa: E402
from latency import development  # noqa: E402
from retrieval import spread_questions  # noqa: E402


def groups_held(text: str, facts: list[list[str]]) -> int:
    """How many of the gold fact groups `text` states (answers.answer_right on each group)."""
    return sum(answer_right(text, [group]) for group in facts)


def run(library: Path, questions: list[dict], chat: Path, work: Path) -> list[dict]:
    """Every question answered once in one process; one row per rewrite and one per answer."""
    from app.core.desk import Desk
    from app.core.research.answer import rewrite
    from app.core.settings import ModelConfig, Settings

    copy = work / library.name
    shutil.copytree(library, copy, ignore=shutil.ignore_patterns("leases"))
    settings = Settings()
    settings.chat = ModelConfig(path=str(chat))
    settings.save(work / "config" / "settings.json")
    os.environ.update({"RESEARCH_DESK_CONFIG_DIR": str(work / "config"), "RESEARCH_DESK_LOG_DIR": str(work / "logs"),
                       "RESEARCH_DESK_PREFIX_STATES_DIR": str(work / "states")})
    attempts: list[dict] = []
    shipped = rewrite._rewrite

    def recorded(claims, i, *args, **kwargs):
        started = time.monotonic()
        new = shipped(claims, i, *args, **kwargs)
        attempts.append({"why": args[5], "old": claims[i].text, "new": None if new is None else new.text,
                         "s": time.monotonic() - started})
        return new

    rewrite._rewrite = recorded
    rows = []
    desk = Desk(library=str(copy))
    try:
        for q in questions:
            attempts.clear()
            started = time.monotonic()
            result = desk.funnel().run(q["question"])
            facts = q.get("facts") or []
            mine = [c.text for c in result.claims if not c.quoted]
            undone = list(mine)
            for a in attempts:
                if a["new"] is not None and a["new"] in undone:
                    undone[undone.index(a["new"])] = a["old"]
            for a in attempts:
                rows.append({"kind": "rewrite", "id": q["id"], **a, "old groups": groups_held(a["old"], facts),
                             "new groups": None if a["new"] is None else groups_held(a["new"], facts)})
            rows.append({"kind": "answer", "id": q["id"], "s": time.monotonic() - started, "facts": len(facts),
                         "groups": groups_held(" ".join(mine), facts), "groups without": groups_held(" ".join(undone), facts),
                         "rewrite s": result.timings.get("check_rewrite_s", 0.0), "check s": result.timings.get("check_s")})
            print(f"  {q['id']}: {rows[-1]['s']:.1f} s, {len(attempts)} rewrite(s): "
                  + "; ".join(f"{a['why']} {a['s']:.1f} s {'kept' if a['new'] else 'not kept'}" for a in attempts), flush=True)
    finally:
        rewrite._rewrite = shipped
        desk.close()
    return rows


def report(rows: list[dict]) -> None:
    tries = [r for r in rows if r["kind"] == "rewrite"]
    answers = [r for r in rows if r["kind"] == "answer"]
    print(f"\n{len(answers)} answers, {len(tries)} rewrites, in {sum(1 for a in answers if a['rewrite s'])} answers")
    print(f"  {'why':<12}{'tried':>6}{'kept':>6}{'s p50':>7}{'s all':>7}{'groups old→new (kept)':>24}{'gained':>8}{'lost':>6}")
    for why in sorted({r["why"] for r in tries}):
        these = [r for r in tries if r["why"] == why]
        kept = [r for r in these if r["new"] is not None]
        gained = sum(max(0, r["new groups"] - r["old groups"]) for r in kept)
        lost = sum(max(0, r["old groups"] - r["new groups"]) for r in kept)
        print(f"  {why:<12}{len(these):>6}{len(kept):>6}{statistics.median(r['s'] for r in these):>7.1f}"
              f"{sum(r['s'] for r in these):>7.1f}{sum(r['old groups'] for r in kept):>16}→{sum(r['new groups'] for r in kept):<7}"
              f"{gained:>8}{lost:>6}")
    held = sum(a["groups"] for a in answers)
    without = sum(a["groups without"] for a in answers)
    facts = sum(a["facts"] for a in answers)
    right = sum(a["groups"] == a["facts"] > 0 for a in answers)
    right_without = sum(a["groups without"] == a["facts"] > 0 for a in answers)
    print(f"  the model's sentences: {held} of {facts} fact groups as answered, {without} had no claim been written again; "
          f"every group {right} vs {right_without} answers")
    print(f"  answer p50 {statistics.median(a['s'] for a in answers):.1f} s; rewrite p50 "
          f"{statistics.median(a['rewrite s'] for a in answers):.1f} s, check p50 "
          f"{statistics.median(a['check s'] or 0 for a in answers):.1f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True, type=Path, help="the library of the first --questions file (copied)")
    ap.add_argument("--questions", type=Path, action="append", required=True, help="a question set (development part)")
    ap.add_argument("--library2", type=Path, help="the library of the second --questions file, where it differs")
    ap.add_argument("--limit", type=int, default=20, help="development questions per set, spread over it")
    ap.add_argument("--chat", required=True, type=Path, help="the chat GGUF")
    ap.add_argument("--save", type=Path, help="every row as JSON")
    args = ap.parse_args()
    from app.core.desk import Desk

    rows: list[dict] = []
    work = Path(tempfile.mkdtemp(prefix="rewrite-value-"))
    try:
        for n, path in enumerate(args.questions):
            library = args.library2 if n and args.library2 else args.library
            desk = Desk(library=str(library))
            by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
            desk.close()
            questions = spread_questions(development(path), by_file, args.limit)
            print(f"{path.name}: {' '.join(q['id'] for q in questions)}; load {os.getloadavg()[0]:.2f}", flush=True)
            rows += run(library, questions, args.chat, work / str(n))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows)
    if args.save:
        args.save.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
