"""The CLI's `models calibrate`, `models rate` and `models judge`: thin wrappers over the Desk that print."""

from __future__ import annotations

import json
import sys


def add_rating_parsers(msub, command) -> None:
    """Add the subcommands to `models`' subparsers (`command`: cli._command, for the help's example)."""
    mc = command(msub, "calibrate", "set a judge's cut-offs on the labelled pairs shipped with the app; prints agreement",
                 "research-desk models calibrate ~/models/qwen2.5-7b-instruct-q4_k_m.gguf")
    mc.add_argument("model", nargs="?", help="catalog id, GGUF path or a server's model (default: the judge, else the chat model)")
    mr = command(msub, "rate", "measure every available model on this machine and library; recommend a chat model and a judge",
                 "research-desk models rate --json > ratings.json")
    mr.add_argument("models", nargs="*", help="only these (catalog ids, GGUF paths, a server's models)")
    mr.add_argument("--json", action="store_true")
    mr.add_argument("--questions", type=int, default=30, help="questions made from the library that each model answers (default 30)")
    mj = command(msub, "judge", "choose the support check's judge (kept as it was if the model does not load)",
                 "research-desk models judge qwen2.5-coder-1.5b-instruct-q4_k_m")
    mj.add_argument("model", help="catalog id, GGUF path, a server's model, or 'same' (the chat model judges)")


def run_rating(desk, args, run, out, table) -> int | None:
    """Run one of the subcommands above; None where `args` names another."""
    if args.models_command == "calibrate":
        cal = desk.calibrate_judge(args.model, run.task)
        run.done()
        for line in cal.lines():
            out(line)
        return 0
    if args.models_command == "rate":
        report = desk.rate_models(args.models or None, run.task, questions=args.questions)
        run.done()
        if args.json:
            out(json.dumps(report.to_dict(), indent=2))
        else:
            table(report.rows(), right={2, 3, 4, 8})
            out(f"\n{report.questions} questions made from the library's sentences; {report.seconds / 60:.1f} min.")
            out(report.recommendation())
        failed = [m for m in report.models if m.error]
        for m in failed:
            print(f"{m.name}: not rated: {m.error}", file=sys.stderr)
        return 1 if failed and len(failed) == len(report.models) else 0
    if args.models_command == "judge":
        out(desk.choose_judge(args.model))
        return 0
    return None
