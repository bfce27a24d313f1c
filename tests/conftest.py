"""Shared fixtures: real tiny models, temp libraries, Qt offscreen, thread hygiene."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.support.papers import FACT_PAPERS

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
    from app.core.settings import ModelConfig, Settings

    desks = []

    def factory(library: Path, **settings_changes) -> "Desk":
        settings = Settings(
            chat=ModelConfig(path=str(tiny_models["chat"]), context_length=2048),
            embedding=ModelConfig(path=str(tiny_models["embedding"]), context_length=512),
        )
        for key, value in settings_changes.items():
            setattr(settings, key, value)
        desk = Desk(settings, library=str(library))
        desks.append(desk)
        return desk

    yield factory
    for desk in desks:
        desk.close()


@pytest.fixture
def fact_pdfs(tmp_path) -> Path:
    """Two small papers whose facts sit on known pages."""
    from tests.support.pdf_factory import make_paper

    folder = tmp_path / "incoming"
    folder.mkdir()
    for name, (title, authors, pages) in FACT_PAPERS.items():
        make_paper(folder / name, title, authors, pages)
    return folder


@pytest.fixture(scope="session")
def fact_library(tmp_path_factory, tiny_models):
    """A Desk on a library holding the two fact papers, built once per test session."""
    from app.core.desk import Desk
    from app.core.settings import ModelConfig, Settings
    from tests.support.pdf_factory import make_paper

    root = tmp_path_factory.mktemp("facts")
    (root / "in").mkdir()
    for name, (title, authors, pages) in FACT_PAPERS.items():
        make_paper(root / "in" / name, title, authors, pages)
    settings = Settings(
        chat=ModelConfig(path=str(tiny_models["chat"]), context_length=2048),
        embedding=ModelConfig(path=str(tiny_models["embedding"]), context_length=512),
    )
    desk = Desk(settings, library=str(root / "lib"))
    assert desk.add([root / "in"]).ok
    yield desk
    desk.close()


@pytest.fixture(scope="session")
def seed_library(tmp_path_factory, tiny_models) -> Path:
    """A library with the three UI test papers (tests/support/ui.py), imported once through the core."""
    from app.core.desk import Desk
    from tests.support.ui import make_corpus, ui_settings

    root = tmp_path_factory.mktemp("seed")
    papers = make_corpus(root / "papers")
    library = root / "library"
    desk = Desk(ui_settings(tiny_models, library), str(library))
    try:
        report = desk.add([papers])
        assert report.count("added") == 3, report.outcomes
    finally:
        desk.close()
    return library


@pytest.fixture
def keep_window(qtbot, qapp):
    """Adopts real main windows (offscreen, light theme): sized, their library loaded; shut down
    after the test, with their worker threads joined."""
    from app.ui.common import theme

    windows = []
    theme.apply_theme(qapp, "light")

    def adopt(window):
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        qtbot.waitUntil(lambda: window.library.location != "", timeout=30_000)
        windows.append(window)
        return window

    yield adopt
    for window in windows:
        window.shutdown()
        assert not window.host._thread.isRunning()
        assert not window.aux._thread.isRunning()
