"""The core must never import Qt: it is the headless half of the app."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "app" / "core"
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
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=CORE.parents[1])
    assert proc.returncode == 0, proc.stdout + proc.stderr
