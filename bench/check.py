"""How well `check` tells mis-citations from correct citations, and how fast.

`bench/check/` holds four drafts written over the shared corpus — `r-papers.tex` (LaTeX,
natbib/biblatex commands, over ../shared/corpus/r-papers/), `mixed.md` (Pandoc, over
../shared/corpus/mixed/), and two in fields beyond statistics over the mixed papers:
`biomed.md` (Pandoc; evolution software, surgery, heart failure, a hospital survey, an enzyme
inhibitor) and `physics.tex` (natbib; an accelerator cavity, a lattice study, cosmology,
phytochemistry, scheduling), whose sentences are one a source line inside paragraphs and
often open with a lower-case name or symbol in emphasis (`*codeML*`, `\emph{n}-hexane`,
`$q$`) — and two written for issue 78 before its rule changes, the measure of that issue:
`society.md` (Pandoc; mountain development, smart-city engineering, motor learning) and
`chemistry.tex` (natbib; synthesis-action language, an ACE inhibitor, phytochemistry), half of
their citations mis-cited, their correct ones mostly paraphrases in other words (a quarter for
25 %, about two weeks for 15 days) and values given "respectively" — with their .bib files and `labels.jsonl`: one line per
(draft line, key) with its truth (correct / miscited) and the kind of mis-citation
(wrong-paper, number, direction, method-attribution, entity, not-in-library,
missing-from-bib). Correct sentences use the papers' own wording of a fact.

Every labelled line is a citing sentence the parser must find on its own, with the labelled
keys and no other's: "citing sentences found" counts them (a sentence merged with the one
before it is missing, and its citation goes to the wrong sentence).

A citation counts as flagged when its verdict is "not found in the cited paper" or "not
in the library"; "partial" is shown apart (the report asks the user to look). Prints the
share of mis-citations flagged, of correct citations wrongly flagged, and seconds per
citation (the check stage only: parsing and model loading are not counted).

    RESEARCH_DESK_MODELS_DIR=/tmp/mdl/starter .venv/bin/python bench/check.py \\
        --library /tmp/rlib --mixed-library /tmp/mlib [--drafts biomed.md,physics.tex] [--limit N] [--show]

Seconds depend on what else runs on the machine, so it also prints the machine's load and
the model tokens llama.cpp actually evaluated per citation (prompt tokens after its prefix
cache, and generated tokens), which do not, and the seconds those imply at a given
unloaded speed (--read-tps, --write-tps: measured for the starter model on this 2-core
machine). The counts come from wrapping `llama_cpp.Llama.generate`/`eval` in this process
(the first `eval` of a generation is the prompt not found in the cache; each later one is
one generated token).
"""

from __future__ import annotations

import argparse
import json
import os
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
DRAFTS = [("r-papers.tex", "r-papers.bib", "library"), ("mixed.md", "mixed.bib", "mixed_library"),
          ("biomed.md", "biomed.bib", "mixed_library"), ("physics.tex", "physics.bib", "mixed_library"),
          ("society.md", "society.bib", "mixed_library"), ("chemistry.tex", "chemistry.bib", "mixed_library")]


def sentences_found(draft: str, labels: list[dict]) -> tuple[int, int, list[str]]:
    """(labelled citing sentences the parser finds whole, labelled, what went wrong): a labelled
    line must start a sentence that cites exactly its labelled keys."""
    from app.core.check.parse import parse_draft

    want: dict[int, set[str]] = {}
    for r in labels:
        if r["draft"] == draft:
            want.setdefault(r["line"], set()).add(r["key"])
    got: dict[int, list[set[str]]] = {}
    for s in parse_draft(DATA / draft).sentences:
        got.setdefault(s.line, []).append({c.key for c in s.cites})
    found, wrong = 0, []
    for line, keys in sorted(want.items()):
        if keys in got.get(line, []):
            found += 1
        else:
            wrong.append(f"line {line}: want {sorted(keys)}, parsed {got.get(line, 'no sentence')}")
    return found, len(want), wrong


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


class TokenCounter:
    """Tokens llama.cpp evaluates in this process: prompt (after the prefix cache) and generated."""

    def __init__(self) -> None:
        self.prompt = self.generated = self.calls = 0
        self._first = self._generating = False
        try:
            import llama_cpp
        except ImportError:
            return
        counter, generate, evaluate = self, llama_cpp.Llama.generate, llama_cpp.Llama.eval

        def counted_generate(llm, tokens, *args, **kwargs):
            counter.calls += 1
            counter._first = counter._generating = True
            try:
                yield from generate(llm, tokens, *args, **kwargs)
            finally:
                counter._generating = False

        def counted_eval(llm, tokens):
            if not counter._generating:  # a read outside generation: a prefill, or the judge's P(yes)
                counter.calls += 1
                counter.prompt += len(tokens)
            elif counter._first:
                counter.prompt += len(tokens)
                counter._first = False
            else:
                counter.generated += len(tokens)
            return evaluate(llm, tokens)

        llama_cpp.Llama.generate, llama_cpp.Llama.eval = counted_generate, counted_eval


def memoize(path: Path) -> None:
    """Keep the windows of each sentence, the library-wide hits and the model's verdicts in `path`
    (pickled; saved after each new entry), so that a run differing only in its rules reads the model
    only where the rules now leave it a pair no run left it before."""
    import atexit
    import pickle

    from app.core.check import manuscript

    cache = pickle.loads(path.read_bytes()) if path.exists() else {}

    def save() -> None:
        path.write_bytes(pickle.dumps(cache))

    atexit.register(save)

    def kept(kind: str, fn, key_of):
        def wrapper(*args, **kwargs):
            key = (kind, *key_of(*args, **kwargs))
            if key not in cache:
                cache[key] = fn(*args, **kwargs)
            return cache[key]
        return wrapper

    chat_name = os.environ.get("RESEARCH_DESK_MODELS_DIR", "")
    manuscript.best_windows = kept("windows", manuscript.best_windows,
                                   lambda text, qvec, paper, *rest, **kw: (text, paper.paper_id))
    manuscript.retrieval.search = kept("wide", manuscript.retrieval.search,
                                       lambda table, qvec, text, **kw: (text, kw.get("limit")))
    manuscript.model_verdict = kept("model", manuscript.model_verdict,
                                    lambda chat, claim, window, **kw: (chat_name, claim, window.text))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", default="", help="library holding ../shared/corpus/r-papers (its draft is skipped without)")
    ap.add_argument("--mixed-library", default="",
                    help="library holding ../shared/corpus/mixed (at least the papers the other drafts cite)")
    ap.add_argument("--drafts", default="", help="comma-separated draft names to run (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="sentences per draft (0: all)")
    ap.add_argument("--sample", type=int, default=0,
                    help="check only N labelled lines per draft, spread over the draft (correct and mis-cited alike)")
    ap.add_argument("--show", action="store_true", help="print every citation's verdict")
    ap.add_argument("--read-tps", type=float, default=28.0, help="unloaded prompt tokens per second of the chat model")
    ap.add_argument("--write-tps", type=float, default=14.0, help="unloaded generated tokens per second of the chat model")
    ap.add_argument("--without", default="",
                    help="comma-separated rule families switched off for this run (app/core/check/judge.py FAMILIES): "
                         "the ablation of docs/research.md")
    ap.add_argument("--cache", type=Path, default=None,
                    help="a file of the windows each sentence found and each verdict the model gave (kept between "
                         "runs): ablation runs read the model only for pairs no earlier run sent it. Not for timings")
    args = ap.parse_args()
    if args.without:
        from app.core.check import judge

        names = {n for n in args.without.split(",") if n}
        unknown = names - {name for name, _, _ in judge.FAMILIES}
        if unknown:
            ap.error(f"no rule family {', '.join(sorted(unknown))}; the families: {', '.join(n for n, _, _ in judge.FAMILIES)}")
        judge.OFF.update(names)
        print(f"rule families off: {', '.join(sorted(names))}")
    if args.cache:
        memoize(args.cache)
    tokens = TokenCounter()
    loads = [os.getloadavg()[0]]

    labels = [json.loads(line) for line in (DATA / "labels.jsonl").read_text().splitlines() if line.strip()]
    truth = {(r["draft"], r["line"], r["key"]): r for r in labels}
    rows = []  # (draft, label, verdict)
    seconds, citations, non_model_s = 0.0, 0, 0.0
    per_draft: dict[str, list[float]] = {}  # draft -> [seconds, citations]
    found_lines: dict[str, tuple[int, int]] = {}
    chosen = [d for d in args.drafts.split(",") if d]
    for draft, bib, lib_arg in DRAFTS:
        if (chosen and draft not in chosen) or not getattr(args, lib_arg):
            continue
        found, labelled, wrong = sentences_found(draft, labels)
        found_lines[draft] = (found, labelled)
        for w in wrong:
            print(f"  {draft}: citing sentence not found whole: {w}")
        desk = Desk(library=getattr(args, lib_arg))
        desk.embedder()
        desk.chat()  # loaded before the clock starts: the figure is per citation, not per model load
        prompt_before, generated_before = tokens.prompt, tokens.generated
        t = time.monotonic()
        path = sampled(draft, labels, args.sample) if args.sample else DATA / draft
        report = check_manuscript(desk, path, DATA / bib, stop_after(args.limit))
        spent = time.monotonic() - t - report.timings.get("parse_s", 0.0)
        seconds += spent
        per_draft[draft] = [spent, sum(len(x.citations) for x in report.sentences)]
        non_model_s += report.timings.get("check_s", 0.0) - report.timings.get("model_s", 0.0)
        loads.append(os.getloadavg()[0])
        print(f"{draft}: {len(report.sentences)} sentences, counts {report.counts}, {report.timings}, "
              f"model tokens: {tokens.prompt - prompt_before} prompt + {tokens.generated - generated_before} generated, "
              f"load {loads[-1]:.1f}")
        for p in report.problems:
            print(f"  problem: {p}")
        for s in report.sentences:
            for c in s.citations:
                citations += 1
                label = truth.get((draft, s.line, c.key))
                if label is None:
                    print(f"  unlabelled: {draft}:{s.line} {c.key}")
                    continue
                rows.append((draft, label, c.verdict))
                if args.show:
                    mark = "FLAG" if c.verdict in FLAGGED else "ok  "
                    print(f"  {mark} {label['truth']:9} {label['kind'] or '-':18} {c.key:26} {c.verdict:15} p{c.page} "
                          f"{(c.better_source.paper_id if c.better_source else ''):20} | {s.text[:70]} | {c.note[:80]}")
        desk.close()

    print()
    for draft, (found, labelled) in found_lines.items():
        d_mis = [v for d, r, v in rows if d == draft and r["truth"] == "miscited"]
        d_ok = [v for d, r, v in rows if d == draft and r["truth"] == "correct"]
        spent, n = per_draft.get(draft, [0.0, 0])
        print(f"{draft}: citing sentences found {found}/{labelled}; mis-citations flagged "
              f"{sum(v in FLAGGED for v in d_mis)}/{len(d_mis)}; correct flagged {sum(v in FLAGGED for v in d_ok)}/{len(d_ok)}"
              f" (partial {sum(v == Verdict.PARTIAL.value for v in d_ok)}); {spent / max(1, n):.2f} s a citation")
    rows = [(r, v) for _, r, v in rows]
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
    n = max(1, citations)
    implied = tokens.prompt / args.read_tps + tokens.generated / args.write_tps
    print(f"machine load (1-min average) during the run: {min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} cores")
    print(f"model tokens per citation: {tokens.prompt / n:.1f} prompt + {tokens.generated / n:.1f} generated "
          f"({tokens.calls} model calls for {citations} citations); at {args.read_tps:g}/{args.write_tps:g} tok/s unloaded "
          f"that is {implied / n:.2f} s a citation in the model, plus {non_model_s / n:.2f} s measured outside it")
    kinds = sorted({r["kind"] for r, _ in mis})
    print("mis-citations flagged, by kind: " + ", ".join(
        f"{k} {sum(v in FLAGGED for r, v in mis if r['kind'] == k)}/{sum(r['kind'] == k for r, _ in mis)}" for k in kinds))
    missed = Counter(r["kind"] for r, v in mis if v not in FLAGGED)
    if missed:
        print(f"mis-citations passed, by kind: {dict(missed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
