"""`research-desk --version`: the app and its key libraries, quick, with no window."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app import cli
from app.about import app_version, version_text
from tests.support.paths import REPO


def test_version_names_the_app_and_its_key_libraries(capsys):
    assert cli.main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"research-desk {app_version()}\n")
    for name in ("PySide6 ", "llama-cpp-python 0.3", "LanceDB ", "PyMuPDF "):
        assert name in out, out
    assert "(Qt 6." in out and "(MuPDF 1." in out
    assert "not installed" not in out
    assert out.strip() == version_text()
    with pytest.raises(SystemExit) as exit_:  # after other options, argparse's action answers
        cli.main(["--library", "somewhere", "--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == version_text()


def test_version_from_a_fresh_process_is_quick_and_opens_no_window():
    proc = subprocess.run([sys.executable, "-m", "app.cli", "--version"], capture_output=True, text=True,
                          cwd=REPO, timeout=60, env={"PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"research-desk {app_version()}"
