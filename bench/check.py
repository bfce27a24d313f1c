"""How well `check` tells mis-citations from correct citations, and how fast.

`bench/check/` holds two drafts written over the shared corpus — `r-papers.tex` (LaTeX,
natbib/biblatex commands, over ../shared/corpus/r-papers/) and `mixed.md` (Pandoc, over
../shared/corpus/mixed/) — with their .bib files and `labels.jsonl`: one line per
(draft line, key) with its truth (correct / miscited) and the kind of mis-citation
(wrong-paper, number, direction, method-attribution, entity, not-in-library,
missing-from-bib). Correct sentences use the papers' own wording of a fact.

A citation counts as flagged when its verdict is "not found in the cited paper" or "not
in the library"; "partial" is shown apart (the report asks the user to look). Prints the
share of mis-citations flagged, of correct citations wrongly flagged, and seconds per
citation (the check stage only: parsing and model loading are not counted).

    RESEARCH_DESK_MODELS_DIR=/tmp/mdl/starter .venv/bin/python bench/check.py \\
        --library /tmp/rlib --mixed-library /tmp/mlib [--limit N] [--show]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core import events  # noqa: E402
from app.core.check import check_manuscript  # noqa: E402
from app.core.check.report import FLAGGED, Verdict  # noqa: E402
from app.core.desk import Desk  # noqa: E402

DATA = REPO / "bench" / "check"
DRAFTS = [("r-papers.tex", "r-papers.bib", "library"), ("mixed.md", "mixed.bib", "mixed_library")]


def stop_after(limit: int) -> events.Task:
    """A task that cancels itself once `limit` sentences are checked (a short bench run)."""
    task = events.Task()

    def sink(event: events.Event) -> None:
        if limit and isinstance(event, events.Progress) and event.done >= limit:
            task.token.cancel()

    task.sink = sink
    return task


def sampled(draft: str, labels: list[dict], n: int) -> Path:
    """A copy of the draft keeping n of its labelled lines (the others blanked, so line numbers hold)."""
    import tempfile

    lines = (DATA / draft).read_text().split("\n")
    labelled = sorted({r["line"] for r in labels if r["draft"] == draft})
    step = max(1, len(labelled) / max(1, n))
    keep = {labelled[int(i * step)] for i in range(min(n, len(labelled)))}
    for line in labelled:
        if line not in keep:
            lines[line - 1] = ""
    out = Path(tempfile.mkdtemp(prefix="check-bench-")) / draft
    out.write_text("\n".join(lines))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True, help="library holding ../shared/corpus/r-papers")
    ap.add_argument("--mixed-library", required=True, help="library holding ../shared/corpus/mixed")
    ap.add_argument("--limit", type=int, default=0, help="sentences per draft (0: all)")
    ap.add_argument("--sample", type=int, default=0,
                    help="check only N labelled lines per draft, spread over the draft (correct and mis-cited alike)")
    ap.add_argument("--show", action="store_true", help="print every citation's verdict")
    args = ap.parse_args()

    labels = [json.loads(line) for line in (DATA / "labels.jsonl").read_text().splitlines() if line.strip()]
    truth = {(r["draft"], r["line"], r["key"]): r for r in labels}
    rows = []  # (label, verdict)
    seconds, citations = 0.0, 0
    for draft, bib, lib_arg in DRAFTS:
        desk = Desk(library=getattr(args, lib_arg))
        desk.embedder()
        desk.chat()  # loaded before the clock starts: the figure is per citation, not per model load
        t = time.monotonic()
        path = sampled(draft, labels, args.sample) if args.sample else DATA / draft
        report = check_manuscript(desk, path, DATA / bib, stop_after(args.limit))
        seconds += time.monotonic() - t - report.timings.get("parse_s", 0.0)
        print(f"{draft}: {len(report.sentences)} sentences, counts {report.counts}, {report.timings}")
        for p in report.problems:
            print(f"  problem: {p}")
        for s in report.sentences:
            for c in s.citations:
                citations += 1
                label = truth.get((draft, s.line, c.key))
                if label is None:
                    print(f"  unlabelled: {draft}:{s.line} {c.key}")
                    continue
                rows.append((label, c.verdict))
                if args.show:
                    mark = "FLAG" if c.verdict in FLAGGED else "ok  "
                    print(f"  {mark} {label['truth']:9} {label['kind'] or '-':18} {c.key:26} {c.verdict:15} p{c.page} "
                          f"{(c.better_source.paper_id if c.better_source else ''):20} | {s.text[:70]} | {c.note[:80]}")
        desk.close()

    mis = [(r, v) for r, v in rows if r["truth"] == "miscited"]
    ok = [(r, v) for r, v in rows if r["truth"] == "correct"]
    flagged_mis = sum(v in FLAGGED for _, v in mis)
    flagged_ok = sum(v in FLAGGED for _, v in ok)
    partial_ok = sum(v == Verdict.PARTIAL.value for _, v in ok)
    print()
    print(f"mis-citations flagged: {flagged_mis}/{len(mis)} = {flagged_mis / max(1, len(mis)):.0%}  (target ≥ 90 %)")
    print(f"correct citations wrongly flagged: {flagged_ok}/{len(ok)} = {flagged_ok / max(1, len(ok)):.0%}  (target ≤ 10 %);"
          f" marked partial: {partial_ok}")
    print(f"seconds per citation: {seconds / max(1, citations):.2f}  ({citations} citations, {seconds:.1f} s; target ≤ 5 s)")
    missed = Counter(r["kind"] for r, v in mis if v not in FLAGGED)
    if missed:
        print(f"mis-citations passed, by kind: {dict(missed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
