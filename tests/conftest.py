"""Shared fixtures: real tiny models, temp libraries, Qt offscreen, thread hygiene."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from tests.support.papers import FACT_PAPERS

# Fixtures that serve several test folders, kept in tests/support/ beside the helpers they go with.
pytest_plugins = ["tests.support.cli", "tests.support.catalog"]

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Process-wide thread pools kept on purpose (idle threads, reused by every search).
KEPT_POOLS = ("retrieval_",)

# Tests use only what the repository carries or builds: no machine paths (tests/support/paths.py
# has the repository's). Checks on the real development corpus live in bench/ (bench/corpus_checks.py).

# The same cache folder `scripts/install.sh --test` provisions into, so the tests
# reuse the converted models instead of converting them again in every run.
TEST_MODELS = Path(
    os.environ.get("RESEARCH_DESK_MODELS_DIR") or Path.home() / ".cache" / "research-desk" / "test-models"
)
os.environ["RESEARCH_DESK_MODELS_DIR"] = str(TEST_MODELS)
# Saved prompt states (models/prefix_store.py) never go to the developer's cache, not even from a
# session-wide fixture's model made before a test's own folder is set (`_isolated_config`).
os.environ["RESEARCH_DESK_PREFIX_STATES_DIR"] = _STATES = tempfile.mkdtemp(prefix="rd-prefix-states-")
atexit.register(shutil.rmtree, _STATES, True)


# A test that asks for these fixtures (itself or through another fixture) runs a real GGUF model
# through llama.cpp (`model`) or needs Qt (`gui`); tests/ui/conftest.py marks every UI test `gui`.
MODEL_FIXTURES = {"tiny_models", "models_dir"}
QT_FIXTURES = {"qtbot", "qapp"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & MODEL_FIXTURES:
            item.add_marker(pytest.mark.model)
        if used & QT_FIXTURES:
            item.add_marker(pytest.mark.gui)


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    """Provisioned model files, shared by the whole test session."""
    return TEST_MODELS


@pytest.fixture(scope="session")
def tiny_models(models_dir) -> dict[str, Path]:
    """Real small models: {"chat": SmolLM2-135M GGUF, "embedding": MiniLM GGUF}."""
    from app.core.models import provision

    return provision.ensure_test_models(models_dir)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    """Never read or write the developer's real settings or library."""
    monkeypatch.setenv("RESEARCH_DESK_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("RESEARCH_DESK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RESEARCH_DESK_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("RESEARCH_DESK_PREFIX_STATES_DIR", str(tmp_path / "prefix-states"))
    monkeypatch.delenv("RESEARCH_DESK_LIBRARY", raising=False)


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    """Fail a test that leaves Python threads running (workers must be joined)."""
    before = set(threading.enumerate())
    yield
    leaked = [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not t.daemon and not t.name.startswith(KEPT_POOLS)
    ]
    for t in leaked:
        t.join(timeout=5)
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"test left threads running: {still}"


@pytest.fixture
def make_desk(tiny_models):
    """Factory: a Desk on a library folder, with the real tiny models configured."""
    from app.core.desk import Desk
    from tests.support.library import tiny_settings

    desks = []

    def factory(library: Path, **settings_changes) -> "Desk":
        desk = Desk(tiny_settings(tiny_models, **settings_changes), library=str(library))
        desks.append(desk)
        return desk

    yield factory
    for desk in desks:
        desk.close()


@pytest.fixture
def fact_pdfs(tmp_path) -> Path:
    """Two small papers whose facts sit on known pages."""
    from tests.support.library import write_papers

    return write_papers(tmp_path / "incoming", FACT_PAPERS)


@pytest.fixture(scope="session")
def fact_library(tmp_path_factory, tiny_models):
    """A Desk on a library holding the two fact papers, built once per test session."""
    from tests.support.library import desk_on, tiny_settings

    with desk_on(tmp_path_factory.mktemp("facts"), FACT_PAPERS, tiny_settings(tiny_models)) as desk:
        yield desk
