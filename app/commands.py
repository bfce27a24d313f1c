"""The CLI's subcommands: thin wrappers that call the core and print."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from .core.desk import Desk
from .core.errors import ResearchDeskError
from .core.records import ResearchResult

STATE_KEY = "last_result"


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


# -- library ---------------------------------------------------------------------
def cmd_add(desk: Desk, args, progress) -> int:
    report = desk.add(args.paths, progress=progress)
    progress.done()
    for o in report.outcomes:
        prefix = {"added": "added", "duplicate": "already in library", "failed": "FAILED", "cancelled": "cancelled"}[o.status]
        stream = sys.stderr if o.status == "failed" else sys.stdout
        print(f"{prefix}: {o.message}", file=stream)
    rate = report.pages / report.seconds if report.seconds else 0.0
    _out(
        f"{report.count('added')} added, {report.count('duplicate')} already in library, "
        f"{report.count('failed')} failed — {report.pages} pages, {report.chunks} chunks in {report.seconds:.1f}s ({rate:.1f} pages/s)"
    )
    return 0 if report.ok else 1


def _status(p) -> str:
    if p.status == "failed":
        return f"failed: {p.status_reason}"
    return p.status + (" +summary" if p.summarized else "")


def cmd_list(desk: Desk, args, progress) -> int:
    papers = desk.library.list_papers()
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


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def cmd_show(desk: Desk, args, progress) -> int:
    paper = desk.library.get_paper(args.id)
    if paper is None:
        raise ResearchDeskError(f"No paper with id {args.id!r} in the library.", "See `research-desk list`.")
    d = paper.to_dict()
    labels = d.pop("page_labels")
    for k, v in d.items():
        _out(f"{k:14} {', '.join(v) if isinstance(v, list) else v}")
    if labels and labels != [str(i) for i in range(1, len(labels) + 1)]:
        _out(f"{'page_labels':14} {', '.join(labels[:12])}{' …' if len(labels) > 12 else ''}")
    for what, path in (("pdf", desk.library.pdf_path(paper.id)), ("text", desk.library.text_path(paper.id)),
                       ("summary", desk.library.summary_path(paper.id)), ("notes", desk.library.notes_path(paper.id))):
        _out(f"{what + ' file':14} {path if path.exists() else '(none)'}")
    return 0


def cmd_remove(desk: Desk, args, progress) -> int:
    paper = desk.library.get_paper(args.id)
    if paper is None:
        raise ResearchDeskError(f"No paper with id {args.id!r} in the library.", "See `research-desk list`.")
    if not args.yes:
        if not sys.stdin.isatty():
            raise ResearchDeskError("Refusing to remove without confirmation.", "Pass --yes to remove without asking.")
        answer = input(f"Remove {paper.id} ({paper.title}) and its files? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            _out("Nothing removed.")
            return 1
    desk.library.remove_paper(paper.id)
    _out(f"removed {paper.id}")
    return 0


def cmd_rebuild_index(desk: Desk, args, progress) -> int:
    from .core.rebuild import rebuild_index

    n = rebuild_index(desk, progress=progress)
    progress.done()
    _out(f"index rebuilt: {n} papers")
    return 0


def cmd_validate(desk: Desk, args, progress) -> int:
    from .core.validate import validate_library

    checks = validate_library(desk.library)
    bad = [c for c in checks if not c.ok]
    for c in checks:
        _out(f"{'ok ' if c.ok else 'BAD'} {c.paper_id}" + ("" if c.ok else ": " + "; ".join(c.problems)))
    stale = desk.stale_reason()
    if stale:
        _out(f"BAD index: {stale}")
    _out(f"{len(checks) - len(bad)} ok, {len(bad)} with problems")
    return 1 if bad or stale else 0


def cmd_summarize(desk: Desk, args, progress) -> int:
    from .core.summarize import summarize_paper

    papers = [p for p in desk.library.list_papers() if p.complete] if args.all else [desk.library.get_paper(args.id)]
    if not args.all and papers[0] is None:
        raise ResearchDeskError(f"No paper with id {args.id!r} in the library.", "See `research-desk list`.")
    failed = 0
    for i, paper in enumerate(papers, 1):
        try:
            summarize_paper(desk.library, desk.chat(), desk.embedder(), paper,
                            progress=lambda f, m: progress((i - 1 + f) / len(papers), f"[{i}/{len(papers)}] {m}"))
            _out(f"summarized {paper.id} → {desk.library.summary_path(paper.id)}")
        except ResearchDeskError as exc:
            if exc.action in ("choose-model", "start-lmstudio"):
                raise
            failed += 1
            print(f"FAILED {paper.id}: {exc.message}", file=sys.stderr)
    progress.done()
    return 1 if failed else 0


# -- models -----------------------------------------------------------------------
def cmd_models(desk: Desk, args, progress) -> int:
    from .core.models import catalog, provision

    if args.models_command == "setup":
        ids = args.ids or None
        if args.test:
            ids = catalog.test_ids()
        paths = provision.setup(ids, progress=progress)
        progress.done()
        for key, path in paths.items():
            _out(f"ready: {key} → {path}")
        return 0
    if args.models_command == "list":
        s = desk.settings
        _out("Configured:")
        _out(f"  chat:      {s.chat.describe()}")
        _out(f"  embedding: {s.embedding.describe()}")
        try:
            _out(f"  in use:    chat {desk.chat_config().describe()}; embedding {desk.embedding_config().describe()}")
        except ResearchDeskError as exc:
            _out(f"  in use:    {exc.message}")
        _out("Catalog:")
        for row in provision.list_available():
            _out("  " + str(row))
        return 0
    if args.models_command == "use":
        return _use_model(desk, args)
    return 2


def _use_model(desk: Desk, args) -> int:
    from .core.models import catalog

    cfg = getattr(desk.settings, args.role)
    old_identity = desk.embedding_identity() if args.role == "embedding" else ""
    entry = next((e for e in catalog.entries() if e.id == args.target), None)
    if args.backend:
        cfg.backend = args.backend
    if entry is not None:
        from .core.models import provision

        path = provision.model_path(entry.id)
        if not provision.is_provisioned(entry):
            raise ResearchDeskError(f"{entry.id} is not provisioned yet.", f"Run `research-desk models setup {entry.id}`.")
        cfg.backend, cfg.path, cfg.catalog_id, cfg.context_length = "llamacpp", str(path), entry.id, entry.context_length
    elif cfg.backend == "llamacpp":
        path = Path(args.target).expanduser()
        if not path.is_file():
            raise ResearchDeskError(f"GGUF file not found: {path}", "Give the path of a .gguf file or a catalog id (`research-desk models list`).")
        cfg.path, cfg.catalog_id = str(path.resolve()), ""
    else:
        cfg.model = args.target
    if args.host:
        cfg.host = args.host
    if args.base_url:
        cfg.base_url = args.base_url
    desk.settings.save()
    _out(f"{args.role} model: {cfg.describe()}")
    if args.role == "embedding" and desk.library.meta().get("embedding") and desk.embedding_identity() != old_identity:
        _out("The embedding model changed: the index is now stale. Run `research-desk rebuild-index`.")
    return 0


# -- research ---------------------------------------------------------------------
def _funnel(desk: Desk, progress, *, on_token=None, overrides=None):
    return desk.funnel(progress=progress, on_token=on_token, overrides=overrides)


def _run_deep(desk: Desk, args, progress) -> ResearchResult:
    from .core.research.deep import DeepResearch, parse_time

    try:
        minutes = parse_time(args.time)
    except ValueError as exc:
        raise ResearchDeskError(f"Bad --time value {args.time!r}: {exc}.", "Give minutes (e.g. --time 2) or --time unlimited.") from exc
    from .cli import STARTED

    deep = DeepResearch(_funnel(desk, progress), desk.settings.deep, deep=args.deep, time_minutes=minutes, started_at=STARTED)
    return deep.run(args.question)


def _print_result(result: ResearchResult, as_json: bool) -> None:
    from .core.research.funnel import answer_with_references

    if as_json:
        data = result.to_dict()
        data["claims"] = result.claims_view()
        _out(json.dumps(data, indent=2, default=str))
        return
    _out(answer_with_references(result))
    if result.citations:
        # Every verdict, not only the flagged ones: the reader sees what each claim rests on.
        _out("## Support check\n")
        marks = {"verified": "✓ supported", "partial": "~ partial", "unsupported": "✗ unsupported"}
        for c in result.citations:
            verdict = marks.get(c.status, f"✗ {c.status}")
            quote = f' — "{c.quote[:160]}{"…" if len(c.quote) > 160 else ""}"' if c.quote else ""
            note = f" ({c.note})" if c.note and c.status != "verified" else ""
            _out(f"- {c.raw} {verdict}{note}{quote}")
        _out()
    for m in result.messages:
        print(f"note: {m}", file=sys.stderr)


def cmd_research(desk: Desk, args, progress) -> int:
    if args.deep or args.time is not None:
        result = _run_deep(desk, args, progress)
    else:
        overrides = dict(
            k_summaries=args.k1, k_evidence=args.k2, cutoff_summaries=args.cutoff1, cutoff_evidence=args.cutoff2,
            mmr_lambda_summaries=args.lambda1, mmr_lambda_evidence=args.lambda2, answer_max_tokens=args.max_tokens,
            hybrid=False if args.no_hybrid else None, citation_style=args.citation_style,
        )
        stream = not args.json and not args.evidence_only and sys.stdout.isatty()
        funnel = _funnel(desk, progress, overrides=overrides, on_token=(lambda t: (sys.stdout.write(t), sys.stdout.flush())) if stream else None)
        result = funnel.run(args.question, evidence_only=args.evidence_only)
        if stream:
            _out("\n")
    progress.done()
    if not args.evidence_only:
        desk.library.save_state({STATE_KEY: result.to_dict()})
    _print_result(result, args.json)
    return 0


def _last_result(desk: Desk) -> ResearchResult:
    state = desk.library.load_state().get(STATE_KEY)
    if not state:
        raise ResearchDeskError("There is no previous answer in this library.", 'Ask a question first: research-desk research "…"')
    return ResearchResult.from_dict(state)


def cmd_improve(desk: Desk, args, progress) -> int:
    from .core.research.followups import improve

    previous = _last_result(desk)
    result = improve(_funnel(desk, progress), previous, args.feedback)
    progress.done()
    desk.library.save_state({STATE_KEY: result.to_dict()})
    _print_result(result, args.json)
    return 0


def cmd_save(desk: Desk, args, progress) -> int:
    from .core.research.followups import save_result

    path = save_result(desk.library, _last_result(desk), model=desk.settings.chat.describe())
    _out(f"saved {path}")
    return 0


def cmd_export(desk: Desk, args, progress) -> int:
    from .core.research.followups import export_bibtex, export_markdown, slugify

    result = _last_result(desk)
    suffix = ".bib" if args.format == "bibtex" else ".md"
    out = Path(args.out) if args.out else desk.library.results_dir / f"{slugify(result.query)}{suffix}"
    if args.format == "bibtex":
        export_bibtex(desk.library, result, out)
    else:
        export_markdown(result, out, model=desk.settings.chat.describe())
    _out(f"exported {out}")
    return 0


def cmd_summary(desk: Desk, args, progress) -> int:
    from .core.research.followups import reference

    try:
        pid = reference(_last_result(desk), args.n)
    except IndexError as exc:
        raise ResearchDeskError(str(exc)) from exc
    path = desk.library.summary_path(pid)
    if path.exists():
        _out(path.read_text(encoding="utf-8"))
    else:
        paper = desk.library.get_paper(pid)
        _out(f"# {paper.title}\n\n(no LLM summary yet — `research-desk summarize {pid}`)\n\n{paper.abstract}")
    return 0


def cmd_open(desk: Desk, args, progress) -> int:
    import subprocess

    from .core.research.followups import reference

    try:
        pid = reference(_last_result(desk), args.n)
    except IndexError as exc:
        raise ResearchDeskError(str(exc)) from exc
    path = desk.library.pdf_path(pid)
    opener = {"darwin": "open", "win32": "start"}.get(sys.platform, "xdg-open")
    try:
        subprocess.Popen([opener, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        pass
    _out(str(path))
    return 0


# -- drafting ---------------------------------------------------------------------
def cmd_draft(desk: Desk, args, progress) -> int:
    """Draft one section of the user's paper; writes .md, .tex, .bib and the ledger."""
    from .cli import STARTED
    from .core.drafting import draft_section, load_context, write_outputs
    from .core.research.deep import parse_time

    try:
        minutes = parse_time(args.time)
    except ValueError as exc:
        raise ResearchDeskError(f"Bad --time value {args.time!r}: {exc}.", "Give minutes (e.g. --time 2) or --time unlimited.") from exc
    context = load_context(args.context)
    result = draft_section(desk, args.section, context, time_minutes=minutes, progress=progress, started_at=STARTED)
    progress.done()
    out = Path(args.out) if args.out else desk.library.results_dir / "drafts"
    files = write_outputs(result, out)
    _out(result.markdown)
    for path in files.values():
        _out(f"wrote {path}")
    for message in result.warnings + result.notes:
        print(f"note: {message}", file=sys.stderr)
    return 0
