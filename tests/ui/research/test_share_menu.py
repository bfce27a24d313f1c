"""Sharing from the window (issue 81): the research pane's and the History tab's export menus offer
the web page, the evidence bundle and annotated PDFs; the export runs on the worker thread and a
failure is said in the pane's banner. A real window (offscreen) on a copy of the fact library."""

from __future__ import annotations

import copy
import shutil
import threading
import zipfile
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from app.core.desk import Desk
from app.core.records import ResearchResult
from app.ui.shell.main_window import MainWindow
from tests.support.shared_answer import CLAIMS, cited_answer

SHARE_ITEMS = ["Share as web page…", "Share as evidence bundle (.zip, verifiable)…", "Share as annotated PDFs (folder)…"]


@pytest.fixture
def window(keep_window, fact_library, tmp_path) -> MainWindow:
    lib = tmp_path / "lib"
    shutil.copytree(fact_library.location, lib)
    settings = copy.deepcopy(fact_library.settings)
    settings.library, settings.theme = str(lib), "light"
    return keep_window(MainWindow(settings, str(lib), check_models=False))


@pytest.fixture
def answer(window) -> ResearchResult:
    """The kestrel and glacier claims, bound to the window's library's evidence (a Desk of the test's own)."""
    desk = Desk(window.settings, library=window.library.location)
    try:
        result = cited_answer(desk, CLAIMS[:3])
        result.extra["history"] = desk.record_answer(result).number
    finally:
        desk.close()
    return result


def wait(qtbot, handle, timeout: int = 60_000):
    box: dict = {}
    handle.finished.connect(lambda r: box.update(kind="finished", payload=r))
    handle.failed.connect(lambda e: box.update(kind="failed", payload=e))
    qtbot.waitUntil(lambda: "kind" in box or handle.outcome is not None, timeout=timeout)
    return handle.outcome or (box["kind"], box["payload"])


def labels(button) -> list[str]:
    return [a.text() for a in button.menu().actions() if not a.isSeparator()]


def test_the_answers_export_menu_shares_as_page_bundle_and_annotated_pdfs(window, answer, qtbot, tmp_path, monkeypatch):
    av = window.answer_view
    window.research.set_result(answer)
    assert labels(av.export_button)[2:] == SHARE_ITEMS
    assert window.menus.actions["export_html"].text() == "Share as web page…"

    # "Share as web page…": the save dialog, then the work on the worker thread, then the banner.
    threads: list[threading.Thread] = []
    share = Desk._share
    monkeypatch.setattr(Desk, "_share", lambda self, *a, **k: (threads.append(threading.current_thread()), share(self, *a, **k))[1])
    page = tmp_path / "shared.html"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(page), ""))
    next(a for a in av.export_button.menu().actions() if a.text() == SHARE_ITEMS[0]).trigger()
    qtbot.waitUntil(lambda: av.banner.isVisible() and "shared.html" in av.banner.message.text(), timeout=60_000)
    assert threads and threads[0] is not threading.main_thread()
    assert "The median departure date was 14 September." in page.read_text(encoding="utf-8")

    bundle = tmp_path / "shared.zip"
    kind, path = wait(qtbot, window.research.export("bundle", str(bundle)))
    assert kind == "finished" and sorted(zipfile.ZipFile(path).namelist()) == ["manifest.json", "page.html"]
    folder = tmp_path / "annotated"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    kind, path = wait(qtbot, window.research.export("annotated-pdf"))
    assert kind == "finished" and len(list(Path(path).glob("*.pdf"))) == 2


def test_a_failed_share_is_said_in_the_banner(window, answer, qtbot, tmp_path):
    av = window.answer_view
    window.research.set_result(ResearchResult(query=answer.query, answer="The papers do not say."))
    kind, exc = wait(qtbot, window.research.export("html", str(tmp_path / "x.html")))
    assert kind == "failed"
    qtbot.waitUntil(av.banner.isVisible, timeout=10_000)
    assert "cites no page" in av.banner.message.text() and "Markdown" in av.banner.hint.text()

    window.research.set_result(answer)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    kind, exc = wait(qtbot, window.research.export("html", str(blocked / "x.html")))
    assert kind == "failed"
    qtbot.waitUntil(lambda: "could not be written" in av.banner.message.text(), timeout=10_000)
    assert "Unexpected" not in av.banner.message.text()


def test_the_history_tab_shares_any_answer_it_keeps(window, answer, qtbot, tmp_path):
    pane, history = window.history_pane, window.history
    window.work_tabs.setCurrentWidget(pane)
    history.refresh()
    number = answer.extra["history"]
    qtbot.waitUntil(lambda: any(e.number == number for e in pane.model.entries), timeout=30_000)
    pane.select_number(number)
    assert labels(pane.export_button)[2:] == SHARE_ITEMS

    bundle = tmp_path / "from-history.zip"
    kind, path = wait(qtbot, history.export(number, "bundle", str(bundle)))
    assert kind == "finished"
    qtbot.waitUntil(lambda: pane.banner.isVisible() and "from-history.zip" in pane.banner.message.text(), timeout=10_000)
    desk = Desk(window.settings, library=window.library.location)
    try:
        report = desk.verify_bundle(bundle)
    finally:
        desk.close()
    assert report.ok and len(report.findings) == 3, report.lines()
    kind, path = wait(qtbot, history.export(number, "html", str(tmp_path / "from-history.html")))
    assert kind == "finished" and f"answer {number} of the library" in Path(path).read_text(encoding="utf-8")

    kind, exc = wait(qtbot, history.export(number + 100, "html", str(tmp_path / "missing.html")))
    assert kind == "failed"
    qtbot.waitUntil(lambda: pane.banner.kind == "error", timeout=10_000)
    assert str(number + 100) in pane.banner.message.text()
