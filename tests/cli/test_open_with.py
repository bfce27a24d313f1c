"""PDFs named on the command line ("Open with Research Desk", the desktop entry's `%F`) go to the window."""

from __future__ import annotations

import pytest

from app import cli
from tests.support.paths import REPO
from tests.support.pdf_factory import make_paper

PAGES = ["# Abstract\n\nSea ice thinned by 1.2 metres per decade in the Beaufort Sea.",
         "# Results\n\nThe thinning was fastest in late summer, when open water absorbed more heat."]


def test_pdf_arguments_go_to_the_window(monkeypatch, tmp_path):
    opened = {}
    monkeypatch.setattr("app.ui.main.run_app", lambda **kw: opened.update(kw) or 0)
    one = make_paper(tmp_path / "one.pdf", "One", ["A B"], PAGES)
    two = tmp_path / "Two Words.PDF"
    two.write_bytes(one.read_bytes())
    assert cli.main(["--library", str(tmp_path / "lib"), str(one), str(two)]) == 0
    assert opened == {"library": str(tmp_path / "lib"), "files": [str(one), str(two)]}
    # The desktop entry's Exec line is what a file manager runs: `research-desk %F`.
    entry = (REPO / "packaging" / "research-desk.desktop").read_text(encoding="utf-8")
    exec_line = next(line for line in entry.splitlines() if line.startswith("Exec="))
    assert exec_line == "Exec=research-desk %F"
    assert cli.main([f"file://{one}"]) == 0 and opened["files"] == [str(one)]
    # A subcommand is still a subcommand, and a word that is neither still a usage error.
    assert cli.papers_to_open(["list", "--json"], cli.build_parser().commands) == ([], ["list", "--json"])
    with pytest.raises(SystemExit) as exit_:
        cli.main(["lsit"])
    assert exit_.value.code == 2
