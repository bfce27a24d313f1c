"""The core must never import Qt: it is the headless half of the app."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

CORE = REPO / "app" / "core"
QT_PACKAGES = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "qtpy")


def test_no_qt_import_statement_in_core():
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(CORE)}: {n}" for n in names if n.split(".")[0] in QT_PACKAGES]
    assert not offenders, f"Qt imported in app/core: {offenders}"


@pytest.mark.slow
def test_importing_every_core_module_loads_no_qt():
    modules = sorted(
        "app.core." + ".".join(p.relative_to(CORE).with_suffix("").parts)
        for p in CORE.rglob("*.py")
        if p.name != "__init__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_PACKAGES!r}]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- layers, cycles, module size (issue 17; docs/architecture.md) ----------------------
APP = REPO / "app"
FRONT_END_MAY_IMPORT = {"desk", "records", "events", "errors", "settings", "paths"}
MAX_LINES = 400
LONG_MODULE_MARK = "Long module:"  # in the module docstring, followed by the reason


def test_layer_contracts_hold():
    """import-linter's contracts from pyproject.toml: core without Qt, front ends through the Desk,
    the research stages importing downward only."""
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in proc.stdout


def test_every_core_module_is_behind_the_desk():
    """A new core module must be added to the front-end contract (or be a record type)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["name"].startswith("Front ends"))
    forbidden = {m.removeprefix("app.core.") for m in contract["forbidden_modules"]}
    present = {p.stem for p in CORE.glob("*.py") if p.name != "__init__.py"}
    present |= {p.name for p in CORE.iterdir() if (p / "__init__.py").is_file()}
    assert present - FRONT_END_MAY_IMPORT == forbidden


def test_the_desk_door_loads_what_its_type_checking_imports_name():
    """app.core.desk loads its names on first use from a table; the TYPE_CHECKING imports beside it
    (what type checkers and PyInstaller's scan see) must name the same things from the same places."""
    import app.core.desk as door

    tree = ast.parse((CORE / "desk" / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    imported = {a.asname or a.name: ("." * i.level + (i.module or ""), a.name) for i in block.body for a in i.names}
    assert imported == door._WHERE
    for name in door.__all__:  # each resolves to a real object
        assert getattr(door, name) is not None, name


def test_no_import_cycles_in_app():
    """Any import counts, also one inside a function or under TYPE_CHECKING (grimp reads them all):
    a module that needs another's type only for its annotations is still tied to it (the answer's
    stages take research/context.py's protocol, not the Funnel)."""
    import grimp

    graph = grimp.build_graph("app", exclude_type_checking_imports=False)
    cycles = _strongly_connected(graph)
    assert not cycles, f"import cycles: {cycles}"


def _strongly_connected(graph) -> list[list[str]]:
    """Components of more than one module (Tarjan, iterative: the graph has hundreds of modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle():
    """The finder itself can fail: a two-module cycle and a self-contained module."""

    class Graph:
        modules = {"a", "b", "c"}
        edges = {"a": {"b"}, "b": {"a"}, "c": {"a"}}

        def find_modules_directly_imported_by(self, m):
            return self.edges[m]

    assert _strongly_connected(Graph()) == [["a", "b"]]


def test_no_ui_module_parses_progress_text():
    """The window renders typed events; it never reads meaning out of message text."""
    import re

    parsing = re.compile(r"""startswith\(\(?\s*["'](Stage|Round|Deep|\[)|re\.(match|search)\(r?["']\\\[\(\\d""")
    offenders = [f"{p.name}:{n}" for p in (APP / "ui").glob("*.py")
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if parsing.search(line)]
    assert not offenders, offenders


def test_modules_are_small_or_say_why():
    long_ones = []
    for path in APP.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_LINES and LONG_MODULE_MARK not in (ast.get_docstring(ast.parse(text)) or ""):
            long_ones.append(f"{path.relative_to(REPO)} ({text.count(chr(10))} lines)")
    assert not long_ones, f"over {MAX_LINES} lines without a '{LONG_MODULE_MARK}' reason: {long_ones}"
