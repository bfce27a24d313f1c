"""Running the command line as a user does: `python -m app.cli` in a subprocess, with a settings
file on the real tiny models. A plugin of the root conftest.py (pytest_plugins): its fixture
`cli_env` serves every test folder."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO


def run_cli(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """`research-desk ARGS` run to its end in the repository; `env`: variables set over this process's."""
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, **(env or {})}, timeout=timeout)


KILL_PAPERS = {  # file: (title, topic) — twelve pages each, so a kill lands mid-import
    "zoo-quickref.pdf": ("Zoo: ordered indexed observations", "irregular time series indexed by dates"),
    "rcpp-quickref.pdf": ("Rcpp quick reference", "seamless integration of R and C++ code"),
    "maxtest.pdf": ("A maximum test for structural change", "tests for parameter instability"),
}


def start_long_import(tmp_path, env: dict) -> tuple[subprocess.Popen, "os.PathLike", "os.PathLike"]:
    """`research-desk add` of three twelve-page papers, started in a subprocess (to be killed):
    (the process, its library folder, its papers folder)."""
    from tests.support.pdf_factory import make_paper

    papers = tmp_path / "papers"
    papers.mkdir()
    for name, (title, topic) in KILL_PAPERS.items():
        body = [f"# Section {i}\n\n" + " ".join(f"Paragraph {i}.{j} of this paper discusses {topic} in detail, "
                                                  f"with example {j} and a remark on page {i}." for j in range(12))
                for i in range(1, 13)]
        make_paper(papers / name, title, ["A. Author"], body)
    lib = tmp_path / "lib"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "--library", str(lib), "add", str(papers)],
                            cwd=REPO, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, lib, papers


@pytest.fixture
def cli_env(tmp_path, tiny_models) -> dict[str, str]:
    """Settings file for CLI subprocesses, pointing at the tiny models: the variables to set over
    this process's environment."""
    from tests.support.library import tiny_settings

    config = tmp_path / "cli-config"
    tiny_settings(tiny_models).save(config / "settings.json")
    return {"RESEARCH_DESK_CONFIG_DIR": str(config)}
