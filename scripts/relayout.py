"""One-off: move app/core and app/ui modules into packages by what they handle, then rewrite
every import and dotted name that points at them (issue 77). Kept in history, not in the tree."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CORE = {
    # pdf/: reading a PDF as printed
    "pdf_extract": "pdf.extract", "pdf_layout": "pdf.layout", "pdf_rows": "pdf.rows",
    "pdf_bombs": "pdf.bombs", "mupdf_guard": "pdf.mupdf_guard", "ocr": "pdf.ocr",
    "page_furniture": "pdf.page_furniture", "accents": "pdf.accents",
    "superscripts": "pdf.superscripts", "letter_spacing": "pdf.letter_spacing",
    "metadata": "pdf.metadata",
    # pdf/tables/: the tables printed in papers
    "tables": "pdf.tables.chunks", "table_page": "pdf.tables.page",
    "table_captions": "pdf.tables.captions", "table_groups": "pdf.tables.groups",
    "table_text": "pdf.tables.text", "table_rows": "pdf.tables.rows",
    "table_abbreviations": "pdf.tables.abbreviations",
    # library/: the store
    "library": "library.store", "library_layout": "library.layout",
    "library_schema": "library.schema", "storage": "library.storage",
    "storage_config": "library.storage_config", "atomic_files": "library.atomic_files",
    "leases": "library.leases", "writers": "library.writers",
    "table_creation": "library.table_creation", "table_reader": "library.table_reader",
    "sql_filter": "library.sql_filter", "corrections": "library.corrections",
    "text_search": "library.text_search",
    # ingest/: import
    "ingest": "ingest.pipeline", "import_files": "ingest.sources",
    "paper_write": "ingest.paper_write", "paper_id": "ingest.paper_id",
    "chunking": "ingest.chunking", "summarize": "ingest.summarize",
    "summary_index": "ingest.summary_index", "rebuild": "ingest.rebuild",
    "validate": "ingest.validate",
    # text/: plain-text helpers every layer uses
    "sentences": "text.sentences", "acronyms": "text.acronyms",
    "line_breaks": "text.line_breaks", "wording": "text.wording",
    # desk/
    "diagnostics": "desk.diagnostics",
    # file names that repeated their folder
    "research.deep.deep": "research.deep.runner",
    "research.deep.deep_budget": "research.deep.budget",
    "research.deep.deep_loop": "research.deep.loop",
    "research.deep.deep_plan": "research.deep.plan",
    "research.deep.deep_progress": "research.deep.progress",
    "research.deep.deep_report": "research.deep.report",
    "research.deep.deep_search": "research.deep.search",
    "research.answer.answer_check": "research.answer.check",
    "research.answer.answer_prompt": "research.answer.prompt",
    "research.evidence.evidence_size": "research.evidence.size",
}
UI = {
    # shell/: the window's frame
    "main_window": "shell.main_window", "menus": "shell.menus",
    "about_dialog": "shell.about_dialog", "single_instance": "shell.single_instance",
    "recent_libraries": "shell.recent_libraries", "open_files": "shell.open_files",
    "drop_overlay": "shell.drop_overlay", "error_dialog": "shell.error_dialog",
    "heap": "shell.heap", "window_models": "shell.window_models",
    "settings_dialog": "shell.settings_dialog",
    # common/: parts every pane uses
    "theme": "common.theme", "banners": "common.banners", "list_table": "common.list_table",
    "accessibility": "common.accessibility", "worker": "common.worker",
    "answer_render": "common.answer_render", "time_left_bar": "common.time_left_bar",
    "jobs": "common.jobs",
    # library/
    "library_controller": "library.controller", "library_model": "library.model",
    "library_pane": "library.pane", "import_panel": "library.import_panel",
    "paper_details": "library.paper_details", "paper_panel": "library.paper_panel",
    "labels_dialog": "library.labels_dialog",
    # research/
    "research_controller": "research.controller", "research_pane": "research.pane",
    "answer_view": "research.answer_view", "question_box": "research.question_box",
    "deep_rounds": "research.deep_rounds", "deep_round_widgets": "research.deep_round_widgets",
    "scope_bar": "research.scope_bar",
    # reader/: the PDF viewer
    "pdf_viewer": "reader.viewer", "page_canvas": "reader.page_canvas",
    "pdf_find": "reader.find", "pdf_highlight": "reader.highlight",
    "pdf_search": "reader.search", "reading_position": "reader.reading_position",
    "reader_wiring": "reader.wiring", "viewer_keys": "reader.keys",
    "text_search_panel": "reader.text_search_panel",
    # draft/
    "draft_controller": "draft.controller", "draft_form": "draft.form",
    "draft_jobs": "draft.jobs", "draft_pane": "draft.pane", "draft_progress": "draft.progress",
    "draft_render": "draft.render", "draft_view": "draft.view",
    # check/
    "check_controller": "check.controller", "check_jobs": "check.jobs", "check_tab": "check.tab",
    # history/
    "history_controller": "history.controller", "history_pane": "history.pane",
    # models/
    "model_editor": "models.editor", "model_jobs": "models.jobs",
    "models_measure": "models.measure", "first_run": "models.first_run",
}
PACKAGE_DOCS = {
    "app/core/pdf": "Reading a PDF as printed: text, layout, OCR, page furniture, metadata and tables.",
    "app/core/pdf/tables": "The tables printed in papers, read as caption and row units.",
    "app/core/library": "The library's store: files, LanceDB tables, object storage, leases.",
    "app/core/ingest": "Import: from a PDF to a paper that is listed, searchable and answerable.",
    "app/core/text": "Plain-text helpers every layer reads with: sentences, acronyms, line breaks, wording.",
    "app/ui/shell": "The window's frame: main window, menus, dialogs that belong to no pane.",
    "app/ui/common": "Parts every pane uses: theme, banners, the worker thread, answer rendering.",
    "app/ui/library": "The library pane: the paper list, import, a paper's details and labels.",
    "app/ui/research": "The research pane: the question, the answer, deep rounds, scope.",
    "app/ui/reader": "The PDF reader: pages, highlights, find, full-text search.",
    "app/ui/draft": "The drafting pane.",
    "app/ui/check": "The manuscript check tab.",
    "app/ui/history": "The history pane.",
    "app/ui/models": "Choosing, setting up and measuring models.",
}

MOVES: dict[str, str] = {}  # old dotted module -> new dotted module (packages included)
for old, new in CORE.items():
    MOVES[f"app.core.{old}"] = f"app.core.{new}"
for old, new in UI.items():
    MOVES[f"app.ui.{old}"] = f"app.ui.{new}"


def module_path(dotted: str) -> Path | None:
    p = ROOT / Path(*dotted.split("."))
    if (p / "__init__.py").exists():
        return p / "__init__.py"
    if p.with_suffix(".py").exists():
        return p.with_suffix(".py")
    return None


# Every module under app/ before the move, so that "from pkg import name" can tell a module
# from an attribute.
OLD_MODULES: set[str] = set()
for p in (ROOT / "app").rglob("*.py"):
    parts = list(p.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    OLD_MODULES.add(".".join(parts))


def new_name(dotted: str) -> str:
    """The module's name after the move (a package's submodules follow it)."""
    best = ""
    for old in MOVES:
        if (dotted == old or dotted.startswith(old + ".")) and len(old) > len(best):
            best = old
    return MOVES[best] + dotted[len(best):] if best else dotted


def file_module(path: Path) -> tuple[str, bool] | None:
    rel = path.relative_to(ROOT)
    if rel.parts[0] != "app":
        return None
    parts = list(rel.with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def absolute(node: ast.ImportFrom, mod: str | None, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    assert mod is not None
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def relative(target: str, importer: str, importer_is_pkg: bool) -> str:
    """`target` written relative to the importer's package: ".x", "..y.z"."""
    pkg = importer.split(".") if importer_is_pkg else importer.split(".")[:-1]
    tgt = target.split(".")
    common = 0
    while common < min(len(pkg), len(tgt)) and pkg[common] == tgt[common]:
        common += 1
    dots = "." * (len(pkg) - common + 1)
    return dots + ".".join(tgt[common:])


def alias(a: ast.alias) -> str:
    return a.name + (f" as {a.asname}" if a.asname else "")


def render_from(base: str, names: list[str], comment: str, indent: str) -> str:
    line = f"{indent}from {base} import {', '.join(names)}"
    if len(line) + len(comment) + 2 <= 110:
        return line + (f"  {comment}" if comment else "")
    body = "".join(f"{indent}    {n},\n" for n in names)
    return f"{indent}from {base} import ({'  ' + comment if comment else ''}\n{body}{indent})"


def rewrite_imports(path: Path, old_mod: str | None, old_is_pkg: bool,
                    new_mod: str | None, new_is_pkg: bool) -> str:
    src = path.read_text()
    lines = src.splitlines(keepends=True)
    tree = ast.parse(src)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if not node.level and not (node.module or "").startswith("app"):
                continue
            if node.level and old_mod is None:  # a relative import outside app/ (tests/)
                continue
            base_old = absolute(node, old_mod, old_is_pkg)
            if not base_old.startswith("app"):
                continue
            groups: dict[str, list[str]] = {}
            order: list[str] = []
            for a in node.names:
                sub = f"{base_old}.{a.name}"
                if sub in OLD_MODULES and new_name(sub) != f"{new_name(base_old)}.{a.name}":
                    moved = new_name(sub)
                    parent, leaf = moved.rsplit(".", 1)
                    local = a.asname or a.name
                    text = leaf if leaf == local else f"{leaf} as {local}"
                else:
                    parent, text = new_name(base_old), alias(a)
                if parent not in groups:
                    groups[parent] = []
                    order.append(parent)
                groups[parent].append(text)
            moved_here = new_mod != old_mod
            if not moved_here and order == [base_old] and new_name(base_old) == base_old:
                continue
            seg = "".join(lines[node.lineno - 1: node.end_lineno])
            comment = " ".join(c.strip() for c in re.findall(r"#[^\n]*", seg))
            indent = re.match(r"\s*", lines[node.lineno - 1]).group()
            out = []
            for i, parent in enumerate(order):
                base = relative(parent, new_mod, new_is_pkg) if node.level else parent
                out.append(render_from(base, groups[parent], comment if i == 0 else "", indent))
            edits.append((node.lineno, node.end_lineno, "\n".join(out) + "\n"))
        elif isinstance(node, ast.Import):
            if not any(a.name.startswith("app.") for a in node.names):
                continue
            new = [ast.alias(new_name(a.name), a.asname) for a in node.names]
            if all(n.name == a.name for n, a in zip(new, node.names)):
                continue
            seg = "".join(lines[node.lineno - 1: node.end_lineno])
            comment = " ".join(c.strip() for c in re.findall(r"#[^\n]*", seg))
            indent = re.match(r"\s*", lines[node.lineno - 1]).group()
            text = f"{indent}import {', '.join(alias(a) for a in new)}" + (f"  {comment}" if comment else "")
            edits.append((node.lineno, node.end_lineno, text + "\n"))
    for start, end, text in sorted(edits, reverse=True):
        lines[start - 1: end] = [text]
    return "".join(lines)


DOTTED = sorted(MOVES, key=len, reverse=True)
DOTTED_RE = re.compile(r"\b(" + "|".join(re.escape(d) for d in DOTTED) + r")(?![\w])")
PATHS = {d.replace(".", "/"): MOVES[d].replace(".", "/") for d in MOVES}
PATH_RE = re.compile(r"\b(" + "|".join(re.escape(p) for p in sorted(PATHS, key=len, reverse=True)) + r")(\.py|/)")


def rewrite_names(text: str) -> str:
    text = DOTTED_RE.sub(lambda m: MOVES[m.group(1)], text)

    def path_sub(m: re.Match) -> str:
        new = PATHS[m.group(1)]
        if m.group(2) == "/" and not (ROOT / m.group(1)).is_dir():
            return m.group(0)
        return new + m.group(2)

    return _undo_double(PATH_RE.sub(path_sub, text))


# Two old modules are prefixes of their packages' new names (library -> library.store, ingest ->
# ingest.pipeline): a name the import rewrite already wrote ("app.core.library.schema") must not
# be mapped again by the textual pass.
_LIBRARY = "layout|schema|storage|storage_config|atomic_files|leases|writers|table_creation|table_reader|sql_filter|corrections|text_search|store"
_INGEST = "chunking|sources|paper_write|paper_id|summarize|summary_index|rebuild|validate|pipeline"


def _undo_double(text: str) -> str:
    text = re.sub(rf"app\.core\.library\.store\.({_LIBRARY})\b", r"app.core.library.\1", text)
    text = re.sub(rf"app\.core\.ingest\.pipeline\.({_INGEST})\b", r"app.core.ingest.\1", text)
    text = re.sub(rf"from app\.core\.library\.store import ((?:(?:{_LIBRARY})(?: as \w+)?(?:, )?)+)$",
                  r"from app.core.library import \1", text, flags=re.M)
    text = re.sub(rf"from app\.core\.ingest\.pipeline import ((?:(?:{_INGEST})(?: as \w+)?(?:, )?)+)$",
                  r"from app.core.ingest import \1", text, flags=re.M)
    return text.replace("app/core/library/store/", "app/core/library/").replace("app/core/ingest/pipeline/", "app/core/ingest/")


def git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def main() -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    texts = [ROOT / t for t in tracked if t.endswith((".py", ".md", ".toml", ".spec", ".sh", ".cfg", ".ini", ".txt", ".json", ".yaml", ".in"))
             or t.startswith(".ci/")]
    texts = [p for p in texts if p.is_file() and p.name != "relayout.py" and "docs/lab" not in str(p)]
    # 1. New content of every file, computed against the old layout.
    new_text: dict[Path, str] = {}
    for path in texts:
        fm = file_module(path) if path.suffix == ".py" else None
        text = path.read_text()
        if path.suffix == ".py":
            old_mod, is_pkg = fm if fm else (None, False)
            nm = new_name(old_mod) if old_mod else None
            text = rewrite_imports(path, old_mod, is_pkg, nm, is_pkg)
        new_text[path] = rewrite_names(text)
    # 2. Moves (git mv keeps history), then write the new content at the new place.
    for old, new in MOVES.items():
        src = module_path(old)
        if src is None:
            sys.exit(f"missing: {old}")
        if src.name == "__init__.py":
            src_dir, dst = src.parent, ROOT / Path(*new.split("."))
        else:
            src_dir, dst = src, ROOT / Path(*new.split(".")).with_suffix(".py")
        dst.parent.mkdir(parents=True, exist_ok=True)
        for pkg in [dst.parent, *dst.parent.parents]:
            if pkg == ROOT / "app":
                break
            init = pkg / "__init__.py"
            if not init.exists():
                rel = str(pkg.relative_to(ROOT))
                init.write_text(f'"""{PACKAGE_DOCS[rel]}"""\n')
                git("add", str(init))
        git("mv", str(src_dir), str(dst))
        moved = {}
        for p, t in new_text.items():
            if p == src_dir or src_dir in p.parents:
                moved[dst / p.relative_to(src_dir) if p != src_dir else dst] = t
            else:
                moved[p] = t
        new_text = moved
    for p, t in new_text.items():
        if p.read_text() != t:
            p.write_text(t)


if __name__ == "__main__":
    main()
