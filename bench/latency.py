"""Where an answer's time goes, cold and warm, per stage, in seconds and in units (issue 80).

A unit is the time the chat model takes, on this machine and in this run, to read 1,000 tokens
and write 100 (`answers.model_speed`): an answer's time in units says how far the program is
from the model's own speed, whatever the machine.

- **warm**: one process (as the window runs): the model loaded once, the questions asked in turn.
- **cold**: a fresh `research-desk ask --json` process per question (as a script or the
  command line runs it): Python's start, the library, the models' load included.
  `--cold-states none` runs it without the saved prompt states (models/prefix_store.py), `fresh`
  with a folder that starts empty (the first process saves, the next load), `both` runs the
  two in turn for each question, so that their ratio is measured under the same load.

Stages, from the answer's own timings: evidence (stages 1-2), first words (from the question,
or for cold from the process's start), synthesis (the model writing claims; key passages not
included), key passages (rating the papers' sentences), check (the support check of the claims)
and the whole answer; the check also per claim and in judge reads. A cold answer's start is the
process's wall time less the answer's own total.

    nice -n 10 .venv/bin/python bench/latency.py --library /tmp/rlib --limit 5 [--modes warm cold] [--chat GGUF]

The library is copied first (the command line writes its history); the questions are those of
split.json's development part, spread over r-papers.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval import gold_pages, load_questions, spread_questions  # noqa: E402

QUESTIONS = REPO / "bench" / "questions"
STAGES = ["start", "evidence", "first words", "synthesis", "key passages", "check", "total"]


def development(path: Path) -> list[dict]:
    ids = set(json.loads((QUESTIONS / "split.json").read_text())["development"])
    return [q for q in load_questions(path) if q["id"] in ids]


def starter_or_test_chat() -> Path:
    """The starter chat model where it is provisioned, else the test one (said so in the output)."""
    from app.core import paths

    folder = paths.models_dir()
    for pattern in ("qwen2.5-coder-1.5b*.gguf", "*qwen*1.5b*.gguf", "smollm2-135m*.gguf"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    raise SystemExit(f"no chat GGUF in {folder}: pass --chat")


def stages(timings: dict, wall: float, start: float = 0.0) -> dict[str, float | None]:
    """One answer's stages in seconds (None: not recorded by this version of the code)."""
    key = timings.get("key_passages_s")
    synthesis = timings.get("synthesis_s")
    if synthesis is not None and key is not None:
        synthesis -= key
    evidence = timings.get("evidence_s", (timings.get("stage1_s") or 0) + (timings.get("stage2_s") or 0))
    first = timings.get("first_words_s", timings.get("first_claim_s"))
    return {"start": start, "evidence": evidence, "first words": None if first is None else start + first,
            "synthesis": synthesis, "key passages": key, "check": timings.get("check_s"), "total": wall,
            "check/claim": timings.get("check_per_claim_s"), "check reads": timings.get("check_reads"),
            "check: judge": timings.get("check_judge_s"), "check: re-cite": timings.get("check_recite_s"),
            "check: rewrite": timings.get("check_rewrite_s", 0.0 if "check_judge_s" in timings else None),
            "check: answers": timings.get("check_answers_s")}


def quality(result: dict, q: dict, by_file: dict[str, str]) -> dict[str, float]:
    """The model's sentences right (every gold fact group in them) and the gold page cited."""
    from answers import answer_right

    claims = result.get("claims") or []
    mine = " ".join(c.get("text", "") for c in claims if not c.get("quoted"))
    gold = gold_pages(q, by_file)
    cited = any((c.get("paper_id"), c.get("page")) in gold for c in result.get("citations") or [])
    return {"right (model)": float(answer_right(mine, q.get("facts") or [])), "gold page": float(cited)}


def run_warm(library: Path, questions: list[dict], by_file: dict[str, str], env: dict[str, str]) -> tuple[list[dict], float]:
    """The questions asked in this process, one after another; (per answer, unit in seconds)."""
    os.environ.update(env)
    from answers import model_speed

    from app.core.desk import Desk

    desk = Desk(library=str(library))
    try:
        read, write = model_speed(desk)
        print(f"unit: read 1,000 tokens {read:.2f} s + write 100 {write:.2f} s = {read + write:.2f} s", flush=True)
        rows = []
        for q in questions:
            started = time.monotonic()
            result = desk.funnel().run(q["question"])
            wall = time.monotonic() - started
            data = result.to_dict()
            data["claims"] = result.claims_view()
            rows.append({"id": q["id"], **stages(result.timings, wall), **quality(data, q, by_file)})
            print(f"  warm {q['id']}: {wall:.1f} s", flush=True)
        return rows, read + write
    finally:
        desk.close()


def run_cold(library: Path, q: dict, by_file: dict[str, str], env: dict[str, str], repo: Path = REPO) -> dict:
    """One question in a fresh `research-desk research --json` process (of the code in `repo`)."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "app.cli", "--library", str(library), "research", q["question"], "--json"],
                          capture_output=True, text=True, cwd=repo, env={**os.environ, **env}, timeout=3600)
    wall = time.monotonic() - started
    if proc.returncode != 0 or "{" not in proc.stdout:
        raise RuntimeError(f"{q['id']} ({repo}): exit {proc.returncode}, no JSON: {proc.stderr[-800:]}")
    data = json.loads(proc.stdout[proc.stdout.index("{"):])
    timings = data.get("timings", {})
    start = max(0.0, wall - float(timings.get("total_s") or 0.0))
    return {"id": q["id"], **stages(timings, wall, start), **quality(data, q, by_file)}


def p50(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def table(name: str, rows: list[dict], unit: float) -> None:
    print(f"\n{name}: {len(rows)} answers, p50 per stage (unit = {unit:.2f} s)")
    print(f"  {'stage':<14}{'seconds':>9}{'units':>8}")
    for stage in STAGES + ["check/claim", "check: judge", "check: re-cite", "check: rewrite", "check: answers"]:
        v = p50([r[stage] for r in rows])
        print(f"  {stage:<14}" + ("        –       –" if v is None else f"{v:9.2f}{v / unit:8.3f}"))
    reads = p50([r["check reads"] for r in rows])
    print(f"  check reads p50: {'–' if reads is None else f'{reads:.0f}'}; model's sentences right "
          f"{sum(r['right (model)'] for r in rows):.0f}/{len(rows)}, gold page cited {sum(r['gold page'] for r in rows):.0f}/{len(rows)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True, type=Path, help="a library of ../shared/corpus/r-papers (copied, not written)")
    ap.add_argument("--limit", type=int, default=5, help="development questions, spread over the set")
    ap.add_argument("--modes", nargs="+", choices=["warm", "cold"], default=["warm", "cold"])
    ap.add_argument("--cold-states", choices=["fresh", "none", "both"], default="fresh",
                    help="saved prompt states for the cold runs: a folder that starts empty, none, or both in turn")
    ap.add_argument("--chat", type=Path, help="chat GGUF (default: the starter model where provisioned, else SmolLM2-135M)")
    ap.add_argument("--save", type=Path, help="write every row as JSON here")
    ap.add_argument("--threads", type=int, default=0, help="the chat model's threads (0: the settings' default, every core)")
    ap.add_argument("--base", type=Path, help="another checkout (e.g. `git archive` of an older commit): its cold "
                                              "answers run in turn with this one's, a before/after under the same load")
    args = ap.parse_args()

    from app.core.settings import ModelConfig, Settings

    work = Path(tempfile.mkdtemp(prefix="latency-bench-"))
    try:
        library = work / "library"
        shutil.copytree(args.library, library, ignore=shutil.ignore_patterns("leases"))
        chat = args.chat or starter_or_test_chat()
        settings = Settings()
        settings.chat = ModelConfig(path=str(chat), threads=args.threads)
        settings.save(work / "config" / "settings.json")
        env = {"RESEARCH_DESK_CONFIG_DIR": str(work / "config"), "RESEARCH_DESK_LOG_DIR": str(work / "logs"),
               "RESEARCH_DESK_PREFIX_STATES_DIR": str(work / "states")}
        os.environ.update(env)
        print(f"chat model: {chat.name}; load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)

        from app.core.desk import Desk

        desk = Desk(library=str(library))
        by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
        desk.close()
        questions = spread_questions(development(QUESTIONS / "r-papers.jsonl"), by_file, args.limit)
        print("questions:", " ".join(q["id"] for q in questions), flush=True)

        results: dict[str, list[dict]] = {}
        unit = 0.0
        if "warm" in args.modes:
            results["warm"], unit = run_warm(library, questions, by_file, env)
        if "cold" in args.modes:
            variants = {"fresh": ["cold"], "none": ["cold, no saved states"], "both": ["cold", "cold, no saved states"]}[args.cold_states]
            if args.base:
                variants = variants + ["cold, base checkout"]
            for n, q in enumerate(questions):
                for name in (variants if n % 2 == 0 else variants[::-1]):  # alternate which goes first
                    cold_env = {**env, "RESEARCH_DESK_PREFIX_STATES_DIR": "" if "no saved" in name else env["RESEARCH_DESK_PREFIX_STATES_DIR"]}
                    row = run_cold(library, q, by_file, cold_env, args.base if "base" in name else REPO)
                    results.setdefault(name, []).append(row)
                    print(f"  {name} {q['id']}: {row['total']:.1f} s (start {row['start']:.1f} s)", flush=True)
            if not unit:
                from answers import model_speed

                os.environ.update(env)
                desk = Desk(library=str(library))
                read, write = model_speed(desk)
                desk.close()
                unit = read + write
        print(f"\nload after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
        for name, rows in results.items():
            table(name, rows, unit)
        if args.save:
            args.save.write_text(json.dumps({"unit_s": unit, "chat": chat.name, "rows": results}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
