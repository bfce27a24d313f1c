"""What each evidence rule family earns: the focused evidence with each family switched off in turn.

Issue 78's ablation for the families that decide what of the stage-2 passages reaches the model
(no chat model needed). Stages 1–2 run once per question; then focusing runs once per variant on
a copy of the same passages, so the variants differ only by the family switched off. A family
that decides stage 2 itself (reference lists and back matter dropped before ranking) is run with
stage 2 again (`--stage2`, slower). Per variant it prints, over every development question whose
gold page is in its library: gold page in the focused evidence, gold facts in it, gold facts in
the first turn (cut as the prompt shows the passages), evidence tokens, and the questions whose
focused evidence holds reference entries or a figure's axis ticks (what the "not evidence"
families are there to keep out). Each line's change against "all on" counts questions, so a
difference of one question out of ~100 is the smallest step; bench/focus.py is deterministic, so
there is no run-to-run noise beyond the load's effect on the timings (not compared here).

    .venv/bin/python bench/ablate_evidence.py --pair /tmp/rlib:bench/questions/r-papers.jsonl \
        --pair /tmp/mixlib:bench/questions/mixed.jsonl --pair /tmp/mixlib:bench/questions/fresh.jsonl [--stage2]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from focus import facts_in  # noqa: E402
from retrieval import gold_pages, load_questions, split_questions  # noqa: E402

from app.core import research  # noqa: E402,F401 - the funnel's modules, patched by name below
from app.core.desk import Desk  # noqa: E402
from app.core.research import funnel as funnel_module  # noqa: E402
from app.core.research.answer import synthesis  # noqa: E402
from app.core.research.answer.prompt import format_passage  # noqa: E402
from app.core.research.evidence import focus  # noqa: E402
from app.core.research.evidence.not_evidence import entry_spans, is_axis_ticks  # noqa: E402


def _plain_window(units, room, count, named):
    """A table passage read as prose: the window around its best line (table_window off)."""
    return focus._window(units, max(units, key=lambda u: u.score), room, count)


# name -> (module, attribute, value while off); several patches make one family
FAMILIES: dict[str, list[tuple[object, str, object]]] = {
    "axis ticks": [(focus, "is_axis_ticks", lambda text: False)],
    "front and back matter (focus)": [(focus, "is_paper_matter", lambda text, kind: False),
                                      (focus, "is_back_matter_section", lambda section: False),
                                      (focus, "opens_availability", lambda text: False)],
    "reference entries (focus)": [(focus, "entry_marks", lambda text, units: [False] * len(units))],
    "table window": [(focus, "table_window", _plain_window)],
    "sentence runs": [(focus, "leans_back", lambda text: False), (focus, "run_on_into", lambda units, k: []),
                      (focus, "through_displays", lambda units, text: units)],
    "page breaks mended": [(synthesis, "mend_page_breaks", lambda evidence, pages: evidence)],
    "figure caption weight": [(focus, "FIGURE_CAPTION_WEIGHT", 1.0)],
    "title term weight": [(focus, "TITLE_TERM_WEIGHT", 1.0)],
    "heading term weight": [(focus, "HEADING_TERM_WEIGHT", 0.0)],
    "first-turn row": [(focus, "_first_turn_row", lambda *a, **k: None)],
    "asked figure bonus": [(focus, "ASKED_FIGURE_BONUS", 0.0)],
    "ask scoring": [(focus, "ASK_SCORING", False)],
}
STAGE2_FAMILIES: dict[str, list[tuple[object, str, object]]] = {
    "reference lists (stage 2)": [(funnel_module, "is_reference_list", lambda text, section="": False)],
    "back matter (stage 2)": [(funnel_module, "is_back_matter_passage", lambda section, text: False)],
}


@contextmanager
def switched_off(patches):
    with ExitStack() as stack:
        for module, name, value in patches:
            stack.enter_context(mock.patch.object(module, name, value))
        yield


def first_turn(evidence, question: str, budget: int):
    first, spent = [], 0.0
    for e in evidence:
        cost = len(format_passage(e, question)) / 4 + 2
        if first and spent + cost > budget:
            break
        first.append(e)
        spent += cost
    return first


def measure(desk: Desk, questions: list[dict], stage2: dict[str, object], by_file: dict[str, str],
            rerun_stage2: bool) -> list[tuple[float, ...]]:
    """Per question: (gold page focused, facts focused, facts in the first turn, tokens, entries, ticks)."""
    rows = []
    for q in questions:
        funnel = desk.funnel()
        result = funnel.run(q["question"], evidence_only=True) if rerun_stage2 else copy.deepcopy(stage2[q["id"]])
        synthesis.focus_into(funnel, result)
        gold, facts = gold_pages(q, by_file), q.get("facts") or []
        first = first_turn(result.evidence, q["question"], desk.settings.research.first_claim_tokens)
        rows.append((float(any((e.paper_id, e.page) in gold for e in result.evidence)),
                     float(facts_in("\n".join(e.focus_text for e in result.evidence), facts)),
                     float(facts_in("\n".join(e.focus_text for e in first), facts)),
                     sum(len(format_passage(e, q["question"])) for e in result.evidence) / 4,
                     float(any(entry_spans(e.focus_text) for e in result.evidence)),
                     float(any(is_axis_ticks(s.text) for e in result.evidence for s in e.sentences))))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pair", action="append", required=True, help="LIBRARY:QUESTIONS (development questions only)")
    ap.add_argument("--stage2", action="store_true", help="also the families that decide stage 2 (reruns it)")
    ap.add_argument("--only", nargs="*", default=None, help="these families alone (\"all on\" alone: none switched off)")
    ap.add_argument("--limit", type=int, default=0, help="the first N questions of each pair (a smoke run)")
    args = ap.parse_args()

    variants = {**FAMILIES, **(STAGE2_FAMILIES if args.stage2 else {})}
    if args.only:
        variants = {k: v for k, v in variants.items() if k in args.only}
    totals: dict[str, list[tuple[float, ...]]] = {"all on": [], **{name: [] for name in variants}}
    for pair in args.pair:
        library, questions_file = pair.split(":", 1)
        desk = Desk(library=library)
        by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
        questions = [q for q in split_questions(load_questions(Path(questions_file)), "development")
                     if gold_pages(q, by_file)][:args.limit or None]
        stage2 = {q["id"]: desk.funnel().run(q["question"], evidence_only=True) for q in questions}
        totals["all on"] += measure(desk, questions, stage2, by_file, False)
        for name, patches in variants.items():
            with switched_off(patches):
                totals[name] += measure(desk, questions, stage2, by_file, name in STAGE2_FAMILIES)
        print(f"{library}: {len(questions)} development questions of {Path(questions_file).name}", flush=True)
        desk.close()

    base = totals["all on"]
    n = len(base)
    print(f"\n{n} questions. Each family switched off in turn; in brackets, questions gained (+) or lost (-) against all on.")
    print("| switched off | gold page focused | gold facts focused | gold facts, first turn | tokens p50 | reference entries | axis ticks |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in totals.items():
        cells = []
        for k in range(6):
            if k == 3:
                cells.append(f"{statistics.median(r[3] for r in rows):.0f}")
                continue
            count = int(sum(r[k] for r in rows))
            delta = count - int(sum(r[k] for r in base))
            cells.append(f"{count}/{n}" + (f" ({delta:+d})" if name != "all on" and delta else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
