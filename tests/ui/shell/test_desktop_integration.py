"""Desktop integration: --version and About, "Open with" a PDF, the menu bar and its shortcuts,
recent libraries, the log file, Copy diagnostics without secrets, and the error dialog.

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

from app import cli
from app.about import app_version, version_text
from app.core import paths
from app.core.desk import LibraryLayout, last_errors, log_file, mask_secrets, mask_text, setup_logging
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


# -- --version and About -----------------------------------------------------------------


def test_version_names_the_app_and_its_key_libraries(capsys):
    assert cli.main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"research-desk {app_version()}\n")
    for name in ("PySide6 ", "llama-cpp-python 0.3", "LanceDB ", "PyMuPDF "):
        assert name in out, out
    assert "(Qt 6." in out and "(MuPDF 1." in out
    assert "not installed" not in out
    assert out.strip() == version_text()
    with pytest.raises(SystemExit) as exit_:  # after other options, argparse's action answers
        cli.main(["--library", "somewhere", "--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == version_text()


def test_version_from_a_fresh_process_is_quick_and_opens_no_window():
    proc = subprocess.run([sys.executable, "-m", "app.cli", "--version"], capture_output=True, text=True,
                          cwd=REPO, timeout=60, env={"PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"research-desk {app_version()}"


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


# -- logging and diagnostics -----------------------------------------------------------------


def test_log_file_is_set_up_once_in_the_log_folder_and_reads_back_errors(tmp_path):
    path = setup_logging()
    assert path == log_file() == paths.log_dir() / "research-desk.log"
    assert str(path).startswith(str(tmp_path))  # RESEARCH_DESK_LOG_DIR (conftest) points here
    setup_logging()
    handlers = [h for h in logging.getLogger().handlers if getattr(h, "baseFilename", "") == str(path)]
    assert len(handlers) == 1
    log = logging.getLogger("app.test")
    log.info("an ordinary line")
    try:
        raise ValueError("the cause")
    except ValueError:
        log.exception("it failed with api_key=sk-abcdefghijklmnopqrstu")
    for h in handlers:
        h.flush()
    errors = last_errors()
    assert len(errors) == 1
    assert "it failed" in errors[0] and "ValueError: the cause" in errors[0] and "Traceback" in errors[0]
    assert "sk-abcdefghijklmnop" not in errors[0]


def test_masking_hides_keys_tokens_and_uri_credentials():
    masked = mask_secrets({
        "chat": {"api_key": "sk-live-123456789012345", "base_url": "https://alice:hunter2@llm.lab/v1", "model": "qwen"},
        "embedding": {"api_key": "not-needed"},
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "AWS_SESSION_TOKEN": "FQoGZXIvYXdz", "library": "s3://bucket/papers",
        "research": {"first_claim_tokens": 300, "keywords": ["a"]},
    })
    text = repr(masked)
    for secret in ("sk-live", "hunter2", "alice", "wJalr", "FQoG"):
        assert secret not in text
    assert masked["embedding"]["api_key"] == "not-needed"
    assert masked["chat"]["model"] == "qwen" and masked["library"] == "s3://bucket/papers"
    assert masked["research"]["first_claim_tokens"] == 300
    assert "hunter2" not in mask_text("GET https://bob:hunter2@minio:9000/x?X-Amz-Signature=abcdef123456789 Bearer eyJhbGciOiJIUz")
    assert "abcdef123456789" not in mask_text("url?X-Amz-Signature=abcdef123456789&x=1")


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


# -- packaging --------------------------------------------------------------------------------------


def test_bundle_recipe_collects_every_runtime_dependency():
    """Each dependency in pyproject.toml is collected by the PyInstaller spec or left to a hook
    PyInstaller ships; none that the project dropped is still listed."""
    import ast
    import re
    import tomllib
    from importlib.metadata import packages_distributions

    spec = ast.parse((REPO / "packaging" / "research-desk.spec").read_text(encoding="utf-8"))
    lists = {node.targets[0].id: ast.literal_eval(node.value) for node in spec.body
             if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("COLLECTED", "HOOKED")}
    bundled = set(lists["COLLECTED"]) | set(lists["HOOKED"])
    modules_of: dict[str, set[str]] = {}
    for module, dists in packages_distributions().items():
        for dist in dists:
            modules_of.setdefault(re.sub(r"[-_.]+", "-", dist).lower(), set()).add(module)
    deps = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    needed = {}
    for dep in deps:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", dep).group(0)).lower()
        needed[name] = modules_of.get(name, set()) - {"_yaml", "__editable__"}
    missing = {name: sorted(mods) for name, mods in needed.items() if mods and not mods & bundled}
    assert not missing, f"pyproject dependencies the bundle does not collect: {missing}"
    known = set().union(*needed.values()) | {"llama_cpp", "lance", "docx", "yaml"}
    stale = sorted(m for m in bundled if m not in known)
    assert not stale, f"the spec collects packages the project no longer uses: {stale}"


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
