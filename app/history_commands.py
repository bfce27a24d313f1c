"""`research-desk history`: the answers kept in the library (issue 53), and the scope options of `research`.

    history [--json] [--search TEXT]      newest first
    history show N [--json]               the answer as it was, with its support check
    history delete N
    history export N --format markdown|bibtex|html|bundle|annotated-pdf [--out FILE or folder]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Callable

from .core.desk import Scope
from .core.events import Task

if TYPE_CHECKING:  # the parser imports this module: the Desk's heavy imports wait for a command
    from .core.desk import Desk, HistoryEntry

FORMATS = {"markdown": "md", "md": "md", "bibtex": "bibtex", "html": "html", "bundle": "bundle", "annotated-pdf": "annotated-pdf"}


def add_history_parser(h: argparse.ArgumentParser) -> None:
    h.add_argument("--json", action="store_true", help="print the list as JSON")
    h.add_argument("--search", metavar="TEXT", default="", help="only answers whose question or answer holds every word")
    h.add_argument("--limit", type=int, default=None, help="at most this many (newest first)")
    sub = h.add_subparsers(dest="history_command", metavar="{show,delete,export}")
    show = sub.add_parser("show", help="show answer N as it was", description="Show answer N as it was.")
    show.add_argument("n", type=int)
    show.add_argument("--json", action="store_true", help="print the record as JSON")
    delete = sub.add_parser("delete", help="delete answer N from the history", description="Delete answer N from the history.")
    delete.add_argument("n", type=int)
    export = sub.add_parser("export", help="export answer N", description=(
        "Export answer N as Markdown, its references as BibTeX, a web page with its evidence (html), "
        "an evidence bundle to verify (bundle, a .zip) or annotated copies of the cited PDFs (annotated-pdf, a folder)."))
    export.add_argument("n", type=int)
    export.add_argument("--format", choices=sorted(FORMATS), default="markdown")
    export.add_argument("--out", help="output file, or folder for annotated-pdf (default: results/ in the library)")


def scope_from_args(args) -> Scope | None:
    """`research --papers ID,ID --tag T --collection C` (every one given must hold)."""
    ids = tuple(p.strip() for p in (getattr(args, "papers", None) or "").split(",") if p.strip())
    scope = Scope(ids, getattr(args, "tag", None) or "", getattr(args, "collection", None) or "")
    return None if scope.empty else scope


def run_history(desk: Desk, args, print_result: Callable, task: Task | None = None) -> int:
    command = getattr(args, "history_command", None)
    if command == "show":
        record = desk.history_record(args.n)
        if args.json:
            _out(json.dumps(record.to_dict(), indent=2, default=str))
            return 0
        _out(_header(record.entry))
        print_result(record.result, False)
        return 0
    if command == "delete":
        desk.delete_history(args.n)
        _out(f"deleted answer {args.n}")
        return 0
    if command == "export":
        path = desk.export_history(args.n, FORMATS[args.format], args.out, task)
        _out(f"exported {path}")
        return 0
    entries = desk.history(args.search, args.limit)
    if args.json:
        _out(json.dumps([e.to_dict() for e in entries], indent=2))
        return 0
    if not entries:
        _out("No answers match." if args.search else "No answers yet: ask with `research-desk research \"…\"`.")
        return 0
    for e in entries:
        _out(f"{e.number:>5}  {e.asked_at[:16].replace('T', ' ')}  {_counts(e):<18}  {_clip(e.query, 70)}"
             + (f"  [{e.scope}]" if e.scope != "all papers" else "")
             + (f"  ({len(e.removed)} paper{'s' if len(e.removed) != 1 else ''} removed)" if e.removed else ""))
    return 0


def _header(e: HistoryEntry) -> str:
    lines = [f"# Answer {e.number} · {e.asked_at.replace('T', ' ')} · {e.mode} · {e.model}",
             f"Question: {e.query}", f"Within: {e.scope} · {_counts(e)} · {e.seconds:.1f} s"]
    if e.improves:
        lines.append(f"Revises answer {e.improves}")
    if e.removed:
        lines.append(f"Cited papers removed from the library since: {', '.join(e.removed)} (paper removed)")
    return "\n".join(lines) + "\n"


def _counts(e: HistoryEntry) -> str:
    if not e.claims:
        return f"{len(e.cited)} paper{'s' if len(e.cited) != 1 else ''} cited"
    return f"{e.supported}/{e.claims} supported"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
