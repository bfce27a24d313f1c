"""The settings' "Judge and rating" tab: the judge chosen, calibrated on the worker thread with progress,
a rating cancelled without a trace; the real window and the real tiny model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.rating import labelled
from app.ui.shell.main_window import MainWindow

from tests.support.ui import ui_settings

pytestmark = pytest.mark.slow  # every test here takes more than ~5 s on 2 cores

SHOTS = Path("/tmp/h51-shots")


@pytest.fixture
def window(keep_window, tiny_models, tmp_path, seed_library, monkeypatch):
    rows = labelled.load_rows()[:6]  # a short calibration: six real labelled pairs
    monkeypatch.setattr("app.core.rating.calibrate.load_rows", lambda path=None: rows)
    lib = tmp_path / "library"
    shutil.copytree(seed_library, lib)
    return keep_window(MainWindow(ui_settings(tiny_models, lib), str(lib)))


def test_calibrate_runs_off_the_ui_thread_with_progress_and_keeps_the_cutoffs(window, qtbot):
    from app.core.models import calibrations
    from app.core.settings import Settings

    dialog = window.open_settings("Judge and rating")
    tab = dialog.measure
    assert tab.same.isChecked() and not tab.judge.isVisible()  # the default: the chat model judges
    tab.calibrate.click()
    assert tab.progress.isVisible() and tab.cancel.isVisible() and not tab.rate.isEnabled()
    qtbot.waitUntil(lambda: "agreement" in tab.status.text(), timeout=300_000)
    assert not tab.progress.isVisible() and tab.calibrate.isEnabled()
    assert "kept for this model" in tab.status.text() and "misattributions passed" in tab.status.text() and calibrations.store_path().is_file()
    SHOTS.mkdir(exist_ok=True)
    qtbot.wait(50)  # the layout settles
    dialog.grab().save(str(SHOTS / "calibrated.png"))
    # A rating's table (the records a rating keeps; its run is tested in tests/core/rating/test_calibrate_and_rate.py).
    from app.core.rating.rate import JudgeRating, ModelRating, RatingReport

    report = RatingReport([ModelRating("qwen2.5-coder-1.5b", "llamacpp", 61.2, 9.8, 1210, JudgeRating(0.71, 2, 41, {"supported": 0.65, "partial": 0.5}), 30, 17, 21.4),
                           ModelRating("big.gguf", "llamacpp", error="GGUF file not found")], "qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b", 30)
    tab._show_report(report, "Rated")
    assert tab.table.rowCount() == 2 and tab.table.item(0, 7).text() == "17/30" and "not rated" in tab.table.item(1, 7).text()
    assert "Recommended on this machine: chat model qwen2.5-coder-1.5b" in tab.status.text()
    qtbot.wait(50)
    dialog.grab().save(str(SHOTS / "rated.png"))
    # A judge apart from the chat model is saved with the settings.
    tab.same.setChecked(False)
    assert tab.judge.isVisible()
    qtbot.wait(50)
    dialog.grab().save(str(SHOTS / "judge.png"))
    dialog.accept()
    assert Settings.load().judge.backend == "llamacpp"


def test_a_rating_cancelled_leaves_nothing_and_the_buttons_return(window, qtbot):
    dialog = window.open_settings("Judge and rating")
    tab = dialog.measure
    tab.rate.click()
    qtbot.waitUntil(lambda: tab.status.text().startswith(("Rating", "Loading")) or "labelled" in tab.progress.format(), timeout=60_000)
    tab.cancel.click()
    qtbot.waitUntil(lambda: tab.status.text().startswith("Cancelled"), timeout=300_000)
    assert tab.calibrate.isEnabled() and tab.rate.isEnabled() and not tab.cancel.isVisible()
    assert not tab.table.isVisible()  # no report was kept
    dialog.reject()


def test_a_judge_without_cutoffs_of_its_own_is_offered_calibration(window, qtbot):
    """The tiny model has no cut-offs of its own: the window offers to calibrate it, and the offer
    runs the calibration in the judge's tab, with progress and Cancel."""
    banner = window.research_pane.banner
    qtbot.waitUntil(lambda: banner.isVisible() and "calibrate-judge" in banner.actions, timeout=60_000)
    assert banner.kind == "info" and "not calibrated" in banner.message.text()
    SHOTS.mkdir(exist_ok=True)
    window.grab().save(str(SHOTS / "offer.png"))
    banner.action_requested.emit("calibrate-judge")  # its "Calibrate now…" button
    tab = window.settings_dialog.measure
    assert not banner.isVisible() and tab.progress.isVisible() and tab.cancel.isVisible()
    qtbot.waitUntil(lambda: "agreement" in tab.status.text(), timeout=300_000)
    assert "kept for this model" in tab.status.text()
    window.settings_dialog.reject()
