"""Fixtures of the UI tests: a library seeded once with the three UI test papers, real main
windows on it. Every test here needs Qt: marked `gui` below."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    """Every test under tests/ui/ needs Qt: marked `gui` (a hook sees the whole session's items)."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.gui)


@pytest.fixture(scope="session")
def seed_library(tmp_path_factory, tiny_models) -> Path:
    """A library with the three UI test papers (tests/support/ui.py), imported once through the core."""
    from tests.support.library import import_once
    from tests.support.ui import make_corpus, ui_settings

    root = tmp_path_factory.mktemp("seed")
    library = root / "library"
    report = import_once(library, make_corpus(root / "papers"), ui_settings(tiny_models, library))
    assert report.count("added") == 3, report.outcomes
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


@pytest.fixture
def make_window(keep_window, tiny_models, tmp_path):
    """Factory: a real main window (kept by keep_window) on a library folder, or on a copy of `seed`;
    `changes` set settings fields, nested ones by "__" (research__temperature=0.0)."""
    from app.ui.shell.main_window import MainWindow
    from tests.support.ui import ui_settings

    def make(library: Path | None = None, seed: Path | None = None, **changes) -> MainWindow:
        lib = library or tmp_path / "library"
        if seed is not None:
            shutil.copytree(seed, lib)
        settings = ui_settings(tiny_models, lib)
        for key, value in changes.items():
            obj = settings
            *path, last = key.split("__")
            for part in path:
                obj = getattr(obj, part)
            setattr(obj, last, value)
        return keep_window(MainWindow(settings, str(lib)))

    return make
