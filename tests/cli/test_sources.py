"""The CLI's doors to issue 15 and 16 features: `add --bib`, `add` with nothing, and `check DRAFT`."""

from __future__ import annotations

import json

import pytest

from tests.support.papers import FACT_PAPERS
from tests.support.pdf_factory import make_paper
from tests.support.cli import run_cli


@pytest.mark.slow
def test_add_bib_then_check_a_markdown_draft(tmp_path, cli_env):
    folder = tmp_path / "refs"
    folder.mkdir()
    (name, (title, authors, pages)) = next(iter(FACT_PAPERS.items()))
    make_paper(folder / "first.pdf", title, authors, pages)
    bib = folder / "refs.bib"
    bib.write_text(
        "@article{first2021,\n  title = {" + title + "},\n  author = {" + " and ".join(authors) + "},\n"
        "  year = {2021},\n  journal = {Journal of Tests},\n  file = {first.pdf:first.pdf:PDF}\n}\n"
        "@article{absent2019,\n  title = {A paper nobody has},\n  author = {Nobody, N.},\n  year = {2019}\n}\n",
        encoding="utf-8")
    lib = str(tmp_path / "lib")

    added = run_cli("--library", lib, "add", "--bib", str(bib), env=cli_env)
    assert added.returncode == 0, added.stderr
    assert "missing: absent2019" in added.stdout and "1 imported" in added.stdout
    listed = json.loads(run_cli("--library", lib, "list", "--json", env=cli_env).stdout)
    assert [(p["title"], p["venue"], p["source_key"]) for p in listed] == [(title, "Journal of Tests", "bibtex:first2021")]

    draft = tmp_path / "draft.md"
    first_page = pages[0].split("\n\n")[1].split(".")[0]  # a sentence the paper states on its first page
    draft.write_text(f"# Draft\n\n{first_page} [@first2021]. Nobody has measured this before [@absent2019].\n",
                     encoding="utf-8")
    checked = run_cli("--library", lib, "check", str(draft), "--bib", str(bib), "--json",
                   "--out", str(tmp_path / "report.md"), env=cli_env)
    assert checked.returncode == 1, checked.stderr  # a citation is flagged: not in the library
    report = json.loads(checked.stdout)
    verdicts = {c["key"]: c["verdict"] for s in report["sentences"] for c in s["citations"]}
    assert verdicts["absent2019"] == "not-in-library"
    assert verdicts["first2021"] in ("supported", "partial", "not-found")
    assert report["sentences"][0]["location"]["line"] == 3
    assert (tmp_path / "report.md").read_text(encoding="utf-8").startswith("#")


def test_add_with_nothing_to_add_is_one_clear_message(tmp_path, cli_env):
    out = run_cli("--library", str(tmp_path / "lib"), "add", env=cli_env, timeout=120)
    assert out.returncode == 1
    assert "Nothing to add" in out.stderr and "Traceback" not in out.stderr
