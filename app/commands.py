"""The CLI's subcommands: thin wrappers that call the Desk and print.

Each `cmd_<name>(desk, args, run)` gets the Desk, the parsed arguments and a
`Run` (the task whose events the terminal renders, and when the command started).
Exit codes: 0 done, 1 failed or problems found, 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from .core.desk import FLAGGED_VERDICTS, Desk
from .core.errors import ResearchDeskError
from .core.events import Task
from .core.records import ResearchResult
from .history_commands import run_history, scope_from_args
from .terminal import TerminalRenderer


@dataclass
class Run:
    """What a command needs besides the Desk: its task, the renderer, its start time."""

    task: Task
    renderer: TerminalRenderer
    started_at: float

    def done(self) -> None:
        self.renderer.done()


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


# -- library ---------------------------------------------------------------------
def cmd_add(desk: Desk, args, run: Run) -> int:
    sources = [("zotero", args.zotero), ("bib", args.bib), ("ris", args.ris)]
    sources = [(kind, value) for kind, value in sources if value is not None]
    if not args.paths and not sources:
        raise ResearchDeskError("Nothing to add.", "Give PDF files or folders, or --zotero / --bib FILE / --ris FILE.")
    failed = False
    for kind, value in sources:
        if kind == "zotero":
            source = desk.import_zotero(value or None, run.task)
        else:
            source = desk.import_bibliography(value, run.task, kind=kind)
        run.done()
        for o in source.outcomes:
            if o.status in ("imported", "updated", "missing", "failed"):
                stream = sys.stderr if o.status == "failed" else sys.stdout
                print(f"{o.status}: {o.label}" + (f" — {o.message}" if o.message else ""), file=stream)
        _out(source.summary())
        failed = failed or not source.ok
    if not args.paths:
        return 1 if failed else 0
    report = desk.add(args.paths, run.task)
    run.done()
    for o in report.outcomes:
        prefix = {"added": "added", "duplicate": "already in library", "failed": "FAILED", "cancelled": "cancelled"}[o.status]
        stream = sys.stderr if o.status == "failed" else sys.stdout
        print(f"{prefix}: {o.message}", file=stream)
    rate = report.pages / report.seconds if report.seconds else 0.0
    _out(
        f"{report.count('added')} added, {report.count('duplicate')} already in library, "
        f"{report.count('failed')} failed — {report.pages} pages, {report.chunks} chunks in {report.seconds:.1f}s ({rate:.1f} pages/s); "
        f"searchable by their words after {report.words_seconds:.1f}s"
    )
    if report.vectors_left:
        _out(f"{len(report.vectors_left)} papers are searchable by their words only: another process is computing their vectors.")
    return 0 if report.ok and not failed else 1


def _status(p) -> str:
    if p.status == "failed":
        return f"failed: {p.status_reason}"
    return p.status + (" +summary" if p.summarized else "")


def cmd_list(desk: Desk, args, run: Run) -> int:
    papers = desk.papers()
    if args.json:
        _out(json.dumps([p.to_dict() for p in papers], indent=2))
        return 0
    if not papers:
        _out("The library is empty. Add papers with `research-desk add PATH`.")
        return 0
    rows = [("ID", "TITLE", "AUTHORS", "YEAR", "PAGES", "STATUS")]
    for p in papers:
        authors = p.authors[0] + (" et al." if len(p.authors) > 1 else "") if p.authors else ""
        rows.append((p.id, _clip(p.title, 48), _clip(authors, 24), p.year, str(p.page_count), _status(p)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        _out("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


def cmd_search(desk: Desk, args, run: Run) -> int:
    hits = desk.search_text(args.text, limit=max(1, args.limit))
    if args.json:
        _out(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        _out(f"No paper prints “{args.text}”.")
        return 0
    for h in hits:
        page = f"p. {h.page}" + (f" (printed {h.page_label})" if h.page_label and h.page_label != str(h.page) else "")
        _out(f"{h.paper_id}  {page}{'' if h.exact else '  (words apart)'}\n    {h.snippet}")
    return 0


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def cmd_show(desk: Desk, args, run: Run) -> int:
    paper = desk.paper(args.id)
    d = paper.to_dict()
    labels = d.pop("page_labels")
    for k, v in d.items():
        _out(f"{k:14} {', '.join(v) if isinstance(v, list) else v}")
    if labels and labels != [str(i) for i in range(1, len(labels) + 1)]:
        _out(f"{'page_labels':14} {', '.join(labels[:12])}{' …' if len(labels) > 12 else ''}")
    files = desk.paper_files(paper.id)
    for what, path in (("pdf", files.pdf), ("text", files.text), ("summary", files.summary), ("notes", files.notes)):
        _out(f"{what + ' file':14} {path if path.exists() else '(none)'}")
    return 0


def cmd_remove(desk: Desk, args, run: Run) -> int:
    paper = desk.paper(args.id)
    if not args.yes:
        if not sys.stdin.isatty():
            raise ResearchDeskError("Refusing to remove without confirmation.", "Pass --yes to remove without asking.")
        answer = input(f"Remove {paper.id} ({paper.title}) and its files? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            _out("Nothing removed.")
            return 1
    desk.remove_papers([paper.id])
    _out(f"removed {paper.id}")
    return 0


def cmd_rebuild_index(desk: Desk, args, run: Run) -> int:
    n = desk.rebuild_index(run.task)
    run.done()
    _out(f"index rebuilt: {n} papers")
    return 0


def cmd_validate(desk: Desk, args, run: Run) -> int:
    report = desk.validate()
    bad = [c for c in report.checks if not c.ok]
    for c in report.checks:
        _out(f"{'ok ' if c.ok else 'BAD'} {c.paper_id}" + ("" if c.ok else ": " + "; ".join(c.problems)))
    if report.stale_reason:
        _out(f"BAD index: {report.stale_reason}")
    _out(f"{len(report.checks) - len(bad)} ok, {len(bad)} with problems")
    return 0 if report.ok else 1


def cmd_summarize(desk: Desk, args, run: Run) -> int:
    ids = [p.id for p in desk.papers() if p.complete] if args.all else [desk.paper(args.id).id]
    report = desk.summarize(ids, run.task)
    run.done()
    for pid in report.done:
        _out(f"summarized {pid} → {desk.paper_files(pid).summary}")
    for pid, reason in report.failed.items():
        print(f"FAILED {pid}: {reason}", file=sys.stderr)
    return 1 if report.failed else 0


# -- models -----------------------------------------------------------------------
def cmd_models(desk: Desk, args, run: Run) -> int:
    if args.models_command == "setup":
        paths = desk.setup_models(args.ids or None, run.task, test=args.test)
        run.done()
        for key, path in paths.items():
            _out(f"ready: {key} → {path}")
        return 0
    if args.models_command == "list":
        if args.json:
            _out(json.dumps([vars(r) for r in desk.models()], indent=2))
            return 0
        rows = [("ROLE", "NAME", "SIZE", "INSTALLED", "ACTIVE")]
        for r in desk.models():
            rows.append((r.role, r.name, _size(r.size_bytes), "yes" if r.installed else "no", "*" if r.active else ""))
        _table(rows, right={2})
        state = desk.model_state()
        if not state.ready and state.problem is not None:
            _out(f"\n{state.problem.message}" + (f"\n  hint: {state.problem.hint}" if state.problem.hint else ""))
        return 0
    if args.models_command == "use":
        _out(desk.use_model(args.role, args.target, backend=args.backend, host=args.host, base_url=args.base_url))
        return 0
    from .model_commands import run_rating

    code = run_rating(desk, args, run, _out, _table)
    return 2 if code is None else code


def _size(n: int | None) -> str:
    if not n:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit in ("B", "KB") else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _table(rows: list[tuple[str, ...]], right: set[int] = frozenset()) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        _out("  ".join(cells).rstrip())


# -- research ---------------------------------------------------------------------
def _print_result(result: ResearchResult, as_json: bool) -> None:
    if as_json:
        data = result.to_dict()
        data["claims"] = result.claims_view()
        data["key_passages"] = result.key_passages_view()
        data["counts"] = result.claim_counts()
        _out(json.dumps(data, indent=2, default=str))
        return
    if not result.answer and result.evidence:  # --evidence-only: the passages are the result
        for e in result.evidence:
            page = f"page {e.page}" + (f" (printed {e.page_label})" if e.page_label and e.page_label != str(e.page) else "")
            _out(f"[{e.number}] {e.paper_id}, {page} — {' '.join(e.text.split())[:240]}")
        _out()
    else:
        _out(Desk.answer_markdown(result))
    # The model's claims only: a key passage is the paper's own sentence, supported by construction.
    checked = result.model_citations()
    if checked:
        # Every verdict, not only the flagged ones: the reader sees what each claim rests on.
        counts = result.claim_counts()
        _out(f"## Support check: {counts['claims']} claim{'s' if counts['claims'] != 1 else ''} · {counts['supported']} supported"
             + (f" · {counts['off_point']} supported, not the answer" if counts["off_point"] else "") + "\n"
             if result.claims else "## Support check\n")
        marks = {"verified": "✓ supported", "partial": "~ partial", "unsupported": "✗ unsupported"}
        for c in checked:
            verdict = marks.get(c.status, f"✗ {c.status}")
            quote = f' — "{c.quote[:160]}{"…" if len(c.quote) > 160 else ""}"' if c.quote else ""
            note = f" ({c.note})" if c.note and c.status != "verified" else ""
            claim = result.claims[c.claim] if c.claim is not None and c.claim < len(result.claims) else None
            if claim is not None and claim.off_point and c.status == "verified":  # never the mark of a right answer
                verdict, note = "✓≠ supported, but not the answer", f" ({claim.off_point})"
            _out(f"- {c.raw} {verdict}{note}{quote}")
        _out()
    for m in result.messages:
        print(f"note: {m}", file=sys.stderr)


def cmd_research(desk: Desk, args, run: Run) -> int:
    stream = not args.json and not args.evidence_only and sys.stdout.isatty()
    if stream:
        run.renderer.on_token = lambda t: (sys.stdout.write(t), sys.stdout.flush())
    scope = scope_from_args(args)
    if scope is not None and not args.json:
        _out(f"Within {scope.describe()}\n")
    if args.deep or args.time is not None:
        result = desk.deep_research(args.question, run.task, time_budget=args.time, started_at=run.started_at, scope=scope)
    else:
        overrides = dict(
            k_summaries=args.k1, k_evidence=args.k2, cutoff_summaries=args.cutoff1, cutoff_evidence=args.cutoff2,
            mmr_lambda_summaries=args.lambda1, mmr_lambda_evidence=args.lambda2, answer_max_tokens=args.max_tokens,
            hybrid=False if args.no_hybrid else None, citation_style=args.citation_style,
        )
        result = desk.research(args.question, run.task, overrides=overrides, evidence_only=args.evidence_only, scope=scope)
    run.done()
    if stream:
        _out("\n")
    _print_result(result, args.json)
    return 0


def cmd_improve(desk: Desk, args, run: Run) -> int:
    previous = desk.history_record(args.from_answer).result if args.from_answer else None
    result = desk.improve(args.feedback, run.task, previous=previous)
    run.done()
    _print_result(result, args.json)
    return 0


def cmd_history(desk: Desk, args, run: Run) -> int:
    return run_history(desk, args, _print_result, run.task)


def cmd_save(desk: Desk, args, run: Run) -> int:
    _out(f"saved {desk.save_result()}")
    return 0


def cmd_export(desk: Desk, args, run: Run) -> int:
    path = desk.export(args.format, args.out, task=run.task)
    run.done()
    _out(f"exported {path}")
    return 0


def cmd_verify(desk: Desk, args, run: Run) -> int:
    """Every quote of an evidence bundle against its PDF's page; exit 1 when any does not hold."""
    report = desk.verify_bundle(args.bundle, pdfs=args.pdfs)
    stream = sys.stdout
    if report.question:
        _out(f"Verifying “{report.question}” ({len(report.findings)} citations)")
    for line in report.lines():
        stream.write(line + "\n")
    _out(f"checked in {report.seconds:.2f} s")
    return 0 if report.ok else 1


def cmd_summary(desk: Desk, args, run: Run) -> int:
    pid = desk.cited_paper(args.n)
    texts = desk.paper_texts(pid)
    if texts.summary:
        _out(texts.summary)
    else:
        paper = texts.paper
        _out(f"# {paper.title}\n\n(no LLM summary yet — `research-desk summarize {pid}`)\n\n{paper.abstract}")
    return 0


def cmd_open(desk: Desk, args, run: Run) -> int:
    import subprocess

    path = desk.paper_files(desk.cited_paper(args.n)).pdf
    opener = {"darwin": "open", "win32": "start"}.get(sys.platform, "xdg-open")
    try:
        subprocess.Popen([opener, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        pass  # no desktop opener (a server, a container): the path printed below is the answer
    _out(str(path))
    return 0


# -- manuscript check --------------------------------------------------------------
def cmd_check(desk: Desk, args, run: Run) -> int:
    """Every citation of a draft against the library; exit 1 when any is flagged."""
    report = desk.check(args.draft, args.bib, run.task)
    run.done()
    text = report.to_json() if args.json else report.to_markdown()
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report.to_json() if out.suffix.lower() == ".json" else report.to_markdown(), encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    _out(text)
    flagged = [c for c in report.citations() if c.verdict in FLAGGED_VERDICTS]  # they make `check` exit 1
    return 1 if flagged else 0


# -- drafting ---------------------------------------------------------------------
def cmd_draft(desk: Desk, args, run: Run) -> int:
    """Draft one section of the user's paper; writes .md, .tex, .bib and the ledger."""
    context = desk.load_draft_context(args.context)
    result = desk.draft(args.section, context, run.task, time_budget=args.time, started_at=run.started_at)
    run.done()
    files = desk.write_draft(result, args.out)
    _out(result.markdown)
    for path in files.values():
        _out(f"wrote {path}")
    for message in result.warnings + result.notes:
        print(f"note: {message}", file=sys.stderr)
    return 0
