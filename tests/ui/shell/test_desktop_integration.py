"""Desktop integration: About, "Open with" a PDF, the menu bar and its shortcuts, recent
libraries, Copy diagnostics without secrets, and the error dialog (--version and the PDF
arguments: tests/cli/; the log file and masking: tests/core/desk/test_diagnostics.py).

Windows are real (offscreen) with the real tiny models and a real temp library; the PDFs are
made with PyMuPDF (tests/support/pdf_factory.py).
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import QMenu

from app.about import app_version
from app.core.desk import LibraryLayout, last_errors, log_file
from app.ui.shell.main_window import MainWindow
from app.ui.shell.menus import menu_shortcuts
from app.ui.shell.recent_libraries import MAX_RECENT, RecentLibraries

from tests.support.paths import REPO
from tests.support.pdf_factory import make_paper
from tests.support.ui import ui_settings, wait_for_handle

PAGES = ["# Abstract\n\nSea ice thinned by 1.2 metres per decade in the Beaufort Sea.",
         "# Results\n\nThe thinning was fastest in late summer, when open water absorbed more heat."]


@pytest.fixture
def window_on(keep_window, tiny_models, tmp_path):
    """Factory: a real window on a library folder (settings saved as the app would load them)."""
    def make(library: Path | None = None, files: list[str] | None = None) -> MainWindow:
        from app.ui.main import open_window

        lib = library or tmp_path / "library"
        ui_settings(tiny_models, lib).save()
        return keep_window(open_window(str(lib), files))

    return make


# -- About -------------------------------------------------------------------------------------


def test_about_dialog_lists_versions_and_models(window_on, qtbot):
    window = window_on()
    dialog = window.menus.show_about()
    qtbot.waitUntil(dialog.isVisible)
    text = dialog.text()
    assert f"Research Desk: {app_version()}" in text
    assert "Chat model: llama.cpp:" in text and "Embedding model: llama.cpp:" in text
    for name in ("PySide6", "llama-cpp-python", "LanceDB", "PyMuPDF", "Python"):
        assert f"\n{name}: " in text
    dialog.copy()
    assert QGuiApplication.clipboard().text() == text
    dialog.close()


# -- Open with Research Desk ---------------------------------------------------------------


def test_open_with_imports_the_pdfs_and_shows_the_first(window_on, qtbot, tmp_path):
    incoming = tmp_path / "Downloads"
    incoming.mkdir()
    first = make_paper(incoming / "sea-ice.pdf", "Sea Ice Thinning in the Beaufort Sea", ["Ada Lovelace"], PAGES)
    second = make_paper(incoming / "kelp.pdf", "Kelp Forests After Marine Heatwaves", ["Alan Turing"],
                        ["# Abstract\n\nKelp canopy cover fell by half after the 2014 marine heatwave."])
    window = window_on(files=[str(first), str(second)])
    qtbot.waitUntil(lambda: window.reader.isVisible() and window.pdf_viewer.path is not None, timeout=120_000)
    papers = {p.source_file: p for p in window.library_pane.papers()}
    assert set(papers) == {"sea-ice.pdf", "kelp.pdf"} and {p.status for p in papers.values()} == {"indexed"}
    shown = papers["sea-ice.pdf"].id
    layout = LibraryLayout(window.library.location)
    assert window.pdf_viewer.path == layout.pdf_path(shown)
    assert window.library_pane.selected_ids() == [shown]
    assert "2 papers added" in window.library_pane.banner.message.text()
    assert Path(window.library.location) == tmp_path / "library"

    # Opening a file already in the library shows it again, without a second copy.
    from app.ui.shell.open_files import import_and_show

    window.reader.hide()
    kind, report = wait_for_handle(qtbot, import_and_show(window, [str(second)]))
    assert report.outcomes[0].status == "duplicate"
    qtbot.waitUntil(lambda: window.reader.isVisible(), timeout=10_000)
    assert window.pdf_viewer.path == layout.pdf_path(report.outcomes[0].paper_id)
    assert len(window.library_pane.papers()) == 2


# -- menu bar --------------------------------------------------------------------------------


def _keys(action_or_shortcut) -> list[str]:
    seqs = action_or_shortcut.keys() if isinstance(action_or_shortcut, QShortcut) else action_or_shortcut.shortcuts()
    return [s.toString(QKeySequence.SequenceFormat.PortableText) for s in seqs if not s.isEmpty()]


def test_menu_bar_lists_every_shortcut_of_the_window(window_on):
    window = window_on()
    bar = window.menuBar()
    assert [a.text().replace("&", "") for a in bar.actions()] == ["File", "Edit", "View", "Library", "Research", "Help"]
    listed = menu_shortcuts(bar)
    defined = {key: obj for obj in window.findChildren(QAction) + window.findChildren(QShortcut) for key in _keys(obj)}
    assert defined, "the window defines no shortcut at all?"
    missing = {key: getattr(obj, "text", lambda: type(obj).__name__)() for key, obj in defined.items() if key not in listed}
    assert not missing, f"shortcuts not listed in any menu: {missing}"
    for key in ("Ctrl+O", "Ctrl+L", "PgDown", "Ctrl+Return", "Del", "Ctrl+Shift+O", "Ctrl+Q"):
        assert key in listed, (key, sorted(listed))
    # The window's own actions are reused, not copied: one action per shortcut.
    file_menu = bar.actions()[0].menu()
    assert window.add_action in file_menu.actions() and window.results_action in file_menu.actions()
    # No key is claimed twice in the window's context (Qt would then ignore both).
    window_wide = [k for a in window.findChildren(QAction)
                   if a.shortcutContext() in (a.shortcutContext().WindowShortcut, a.shortcutContext().ApplicationShortcut)
                   for k in _keys(a)]
    assert len(window_wide) == len(set(window_wide)), sorted(window_wide)
    # Every action in the menus has a readable name.
    for action in bar.actions():
        for item in action.menu().actions():
            assert item.isSeparator() or item.text().strip(), item


def test_menu_actions_reach_the_window(window_on, qtbot):
    window = window_on()
    menus = window.menus
    menus.actions["tab_draft"].trigger()
    assert window.work_tabs.currentWidget() is window.draft_pane
    menus.actions["ask"].trigger()
    assert window.work_tabs.currentIndex() == 0
    menus.menus["Research"].aboutToShow.emit()
    assert not menus.actions["cancel"].isEnabled()
    menus.actions["mode_deep"].trigger()
    assert window.research_pane.mode == "deep"
    window.library_pane.filter.show()
    menus.actions["filter"].trigger()


# -- recent libraries ----------------------------------------------------------------------


def test_recent_libraries_most_recent_first_capped_and_missing_disabled(qapp, tmp_path):
    store = RecentLibraries(lambda: QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat))
    folders = []
    for n in range(MAX_RECENT + 2):
        folders.append(tmp_path / f"lib{n}")
        folders[-1].mkdir()
        store.add(str(folders[-1]))
    entries = store.entries()
    assert len(entries) == MAX_RECENT and entries[0] == str(folders[-1])
    store.add(str(folders[5]) + "/")  # opened again: moves to the top, not listed twice
    store.add("s3://lab-bucket/papers/")
    entries = store.entries()
    assert entries[:2] == ["s3://lab-bucket/papers", str(folders[5])] and len(set(entries)) == len(entries)
    folders[5].rmdir()
    menu = QMenu()
    opened = []
    store.fill(menu, opened.append)
    items = {a.data(): a for a in menu.actions() if a.data()}
    assert items["s3://lab-bucket/papers"].isEnabled()
    assert not items[str(folders[5])].isEnabled() and "not found" in items[str(folders[5])].text()
    items["s3://lab-bucket/papers"].trigger()
    assert opened == ["s3://lab-bucket/papers"]
    # Persisted: a new reader of the same file sees the same list.
    again = RecentLibraries(lambda: QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat))
    assert again.entries() == store.entries()


def test_window_remembers_libraries_and_reopens_one(window_on, qtbot, tmp_path):
    first = tmp_path / "first"
    window = window_on(first)
    assert window.menus.recent.entries()[0] == str(first)
    second = tmp_path / "second"
    window.menus.open_library(str(second))
    qtbot.waitUntil(lambda: window.library.location == str(second), timeout=30_000)
    assert window.menus.recent.entries()[:2] == [str(second), str(first)]
    window.menus.fill_recent()
    texts = [a.text() for a in window.menus.recent_menu.actions()]
    assert any(str(first) in t for t in texts) and texts[-1] == "Clear recent libraries"
    assert f"Library: {second}" in window.library_label.text()


# -- diagnostics -------------------------------------------------------------------------------


def test_copy_diagnostics_has_versions_settings_and_errors_without_secrets(window_on, qtbot, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "topsecretvalue99")
    window = window_on()
    window.settings.chat.api_key = "sk-verysecretkey12345678"
    window.settings.chat.base_url = "http://me:pa55word@gpu-box:8080/v1"
    logging.getLogger("app.test").error("could not reach http://me:pa55word@gpu-box:8080/v1")
    text = window.menus.copy_diagnostics()
    assert QGuiApplication.clipboard().text() == text
    for part in ("## Versions", "PySide6", "## System", "## Models", "## Settings", "## Last errors", "could not reach"):
        assert part in text, part
    assert f"Research Desk {app_version()}" in text
    for secret in ("sk-verysecret", "pa55word", "topsecretvalue99"):
        assert secret not in text
    assert "AWS_SECRET_ACCESS_KEY=••••" in text


# -- unexpected errors ----------------------------------------------------------------------------


def test_a_job_that_fails_unexpectedly_shows_a_dialog_with_its_details(window_on, qtbot):
    window = window_on()

    def broken(ctx):
        raise ZeroDivisionError("division by zero in a job")

    handle = window.host.submit("broken", broken)
    kind, exc = wait_for_handle(qtbot, handle)
    assert kind == "failed"
    qtbot.waitUntil(lambda: window.error_reporter.dialog is not None and window.error_reporter.dialog.isVisible())
    dialog = window.error_reporter.dialog
    assert "ZeroDivisionError" in dialog.message.text() and "broken" in dialog.message.text()
    dialog.copy_details()
    copied = QGuiApplication.clipboard().text()
    assert "Traceback" in copied and "division by zero in a job" in copied and app_version() in copied
    assert any("division by zero in a job" in e for e in last_errors())
    # A second failure joins the open dialog instead of stacking another window.
    kind, _ = wait_for_handle(qtbot, window.host.submit("broken", broken))
    qtbot.waitUntil(lambda: dialog.count == 2)
    assert window.error_reporter.dialog is dialog
    dialog.close()


@pytest.mark.qt_no_exception_capture
def test_an_uncaught_exception_in_the_window_shows_the_dialog(window_on, qtbot):
    window = window_on()
    try:
        raise KeyError("no such paper")
    except KeyError:
        sys.excepthook(*sys.exc_info())
    dialog = window.error_reporter.dialog
    assert dialog is not None and dialog.isVisible()
    assert "KeyError" in dialog.message.text()
    assert "no such paper" in dialog.details.toPlainText()
    dialog.close()
    window.shutdown()
    assert sys.excepthook is sys.__excepthook__ or "error_dialog" not in getattr(sys.excepthook, "__module__", "")


def _second_start(qtbot, files: list[str], library: str = "") -> str:
    """`hand_over` in another process, as a second `research-desk paper.pdf` runs it; its answer."""
    code = ("import sys; from app.ui.shell.single_instance import hand_over; "
            "print(hand_over(sys.argv[2:], sys.argv[1] or None))")
    proc = subprocess.Popen([sys.executable, "-c", code, library, *files], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=60_000)  # the window answers meanwhile
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    return out.strip()


def test_a_second_start_hands_its_pdfs_to_the_running_window(window_on, qtbot, tmp_path):
    """`research-desk paper.pdf` while a window runs: that window imports and shows it."""
    window = window_on()
    pdf = make_paper(tmp_path / "later.pdf", "Permafrost Carbon Release", ["Grace Hopper"], PAGES)
    assert _second_start(qtbot, [str(pdf)]) == "True"
    qtbot.waitUntil(lambda: window.reader.isVisible() and window.pdf_viewer.path is not None, timeout=120_000)
    assert [p.source_file for p in window.library_pane.papers()] == ["later.pdf"]
    # A start for another library is not handed over: it opens its own window.
    assert _second_start(qtbot, [str(pdf)], str(tmp_path / "elsewhere")) == "False"


@pytest.mark.slow
def test_the_desktop_entrys_command_opens_a_pdf_and_quits_cleanly_on_sigterm(tiny_models, tmp_path):
    """What a file manager runs (`research-desk /path/paper.pdf`), as a process, offscreen."""
    import os
    import signal
    import time

    lib = tmp_path / "library"
    ui_settings(tiny_models, lib).save()
    pdf = make_paper(tmp_path / "paper.pdf", "Sea Ice Thinning in the Beaufort Sea", ["Ada Lovelace"], PAGES)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", str(pdf)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log_path = log_file()
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if log_path.is_file() and "showing " in log_path.read_text(encoding="utf-8"):
                break
            time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        assert "showing " in log_path.read_text(encoding="utf-8")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log_path.read_text(encoding="utf-8")
    assert "Research Desk closed" in text and " ERROR " not in text and " CRITICAL " not in text
    assert (lib / "pdfs").is_dir() and len(list((lib / "pdfs").glob("*.pdf"))) == 1


def test_file_open_events_import_and_show(window_on, qtbot, qapp, tmp_path):
    """macOS "Open with" sends the running app a file-open event per file, not argv."""
    from PySide6.QtGui import QFileOpenEvent

    window = window_on()
    pdf = make_paper(tmp_path / "dock.pdf", "Coral Bleaching Thresholds", ["Rachel Carson"], PAGES)
    qapp.sendEvent(qapp, QFileOpenEvent(str(pdf)))
    assert window.file_open_events.pending == [str(pdf)]
    qtbot.waitUntil(lambda: window.reader.isVisible() and window.pdf_viewer.path is not None, timeout=120_000)
    assert [p.source_file for p in window.library_pane.papers()] == ["dock.pdf"]
