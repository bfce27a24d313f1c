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


@pytest.fixture
def cli_env(tmp_path, tiny_models) -> dict[str, str]:
    """Settings file for CLI subprocesses, pointing at the tiny models: the variables to set over
    this process's environment."""
    from tests.support.library import tiny_settings

    config = tmp_path / "cli-config"
    tiny_settings(tiny_models).save(config / "settings.json")
    return {"RESEARCH_DESK_CONFIG_DIR": str(config)}
