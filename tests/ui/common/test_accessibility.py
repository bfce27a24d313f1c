"""Accessibility: every control of the window has an accessible name, and the main flows — add a
paper, ask, open a citation, check a draft — work from the keyboard alone (QTest key events only;
a file dialog, which the desktop draws, is answered by a stub).

A real library (real LanceDB, PDFs made with PyMuPDF, the real MiniLM); the ask and check flows
put a scripted chat model into the worker's Desk, for citations that are known in advance.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QToolButton, QWidget

from app.ui.common.accessibility import controls, unnamed
from app.ui.shell.main_window import MainWindow

from tests.support.pdf_factory import make_paper
from tests.support.ui import ui_chat, ui_settings, use_chat, wait_for_handle


@pytest.fixture
def window(keep_window, seed_library, tiny_models, tmp_path):
    def make(seed: bool = True) -> MainWindow:
        lib = tmp_path / "library"
        if seed:
            shutil.copytree(seed_library, lib)
        win = keep_window(MainWindow(ui_settings(tiny_models, lib), str(lib), check_models=False))
        win.activateWindow()
        return win

    return make


def _describe(widget: QWidget) -> str:
    path, w = [], widget
    while w is not None and len(path) < 4:
        path.append(type(w).__name__ + (f"#{w.objectName()}" if w.objectName() else ""))
        w = w.parentWidget()
    return " < ".join(path)


def _press(widget: QWidget, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(widget, key, modifier)


def _tab_to(qtbot, window: QWidget, target: QWidget, limit: int = 120) -> int:
    """Press Tab (where the focus is) until `target` has the focus; the number of presses."""
    qtbot.waitUntil(window.isActiveWindow)
    for presses in range(limit):
        if target.hasFocus():
            return presses
        _press(QApplication.focusWidget() or window, Qt.Key.Key_Tab)
    raise AssertionError(f"{_describe(target)} not reached with {limit} Tab presses; at {_describe(QApplication.focusWidget())}")


# -- names ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_control_of_the_window_has_an_accessible_name(window, qtbot, qapp):
    win = window()
    qtbot.waitUntil(lambda: len(win.library_pane.papers()) == 3, timeout=30_000)
    paper = win.library_pane.papers()[0]
    assert win.open_pdf(paper.id, 1)  # the viewer and its find bar, shown
    win.pdf_viewer.find_bar.open_bar()
    qtbot.waitUntil(lambda: not unnamed(win), timeout=5_000)  # names are given once the window is built
    found = controls(win)
    assert len(found) > 60, len(found)  # the walk sees the panes' controls, not just a few
    assert not [_describe(w) for w in unnamed(win)]
    # What the names say: from the icon buttons' tooltips, the fields' labels or placeholders, or set by the pane.
    viewer = win.pdf_viewer
    assert viewer.fit_button.accessibleName() == "Fit width" and viewer.close_button.accessibleName() == "Close the viewer"
    assert viewer.find_bar.edit.accessibleName() == "Find in the PDF"
    assert win.library_pane.table.accessibleName() == "Papers in the library"
    assert win.library_pane.filter.accessibleName() == "Filter papers or search their text"
    assert win.research_pane.question.accessibleName() == "Ask a question about your papers…"
    assert "Enter runs the question" in win.research_pane.question.accessibleDescription()
    assert win.answer_view.browser.accessibleDescription().startswith("Tab moves from citation to citation")
    # A control without text, label or tooltip is caught by the walk.
    bare = QToolButton(win.library_pane)
    assert unnamed(win) == [bare]
    bare.deleteLater()


@pytest.mark.slow
def test_dialogs_are_named_when_they_take_the_focus(window, qtbot):
    from app.ui.library.labels_dialog import LabelsDialog

    win = window()
    qtbot.waitUntil(lambda: len(win.library_pane.papers()) == 3, timeout=30_000)
    labels = LabelsDialog(win.library_pane.papers()[:1], win)  # the library's tags and collections
    labels.open()
    for dialog in (win.open_settings(), win.menus.show_about(), labels):
        qtbot.waitUntil(dialog.isVisible)
        dialog.activateWindow()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is not None and QApplication.focusWidget().window() is dialog,
                        timeout=5_000)
        qtbot.waitUntil(lambda: not unnamed(dialog), timeout=5_000)
        assert len(controls(dialog)) >= 2 and not [_describe(w) for w in unnamed(dialog)]
        dialog.reject()
        qtbot.waitUntil(lambda: not dialog.isVisible())


# -- the main flows, keyboard only ---------------------------------------------------------------


def test_add_a_paper_by_keyboard(window, qtbot, tmp_path, monkeypatch):
    win = window(seed=False)
    pdf = make_paper(tmp_path / "owls.pdf", "Barn Owl Hunting at Night", ["R. Night"],
                     ["# Abstract\n\nBarn owls locate prey by sound alone in complete darkness."])
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(pdf)], ""))
    qtbot.waitUntil(win.isActiveWindow)
    _press(win, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)  # Ctrl+O: Add papers…
    qtbot.waitUntil(lambda: [p.status for p in win.library_pane.papers()] == ["indexed"], timeout=120_000)
    assert win.library_pane.papers()[0].title == "Barn Owl Hunting at Night"
    # The list is reached by Tab, and Enter on the paper opens its PDF.
    table = win.library_pane.table
    _tab_to(qtbot, win, table)
    _press(table, Qt.Key.Key_Down)
    _press(table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.reader.isVisible() and win.pdf_viewer.current_page == 1, timeout=10_000)


@pytest.mark.slow
def test_ask_then_open_a_citation_by_keyboard(window, qtbot):
    win = window()
    use_chat(qtbot, win, ui_chat())
    qtbot.waitUntil(win.isActiveWindow)
    _press(win, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)  # Ctrl+L: to the question
    question = win.research_pane.question
    assert question.hasFocus()
    QTest.keyClicks(question, "How was glacier retreat measured?")
    _press(question, Qt.Key.Key_Return)
    handle = win.research.current
    assert handle is not None
    kind, result = wait_for_handle(qtbot, handle, 300_000)
    assert kind == "finished", result
    assert result.citations, result.answer
    first = sorted(result.citations, key=lambda c: c.start)[0]
    # Tab to the answer, then Tab selects its first citation and Enter opens the cited page.
    browser = win.answer_view.browser
    _tab_to(qtbot, win, browser)
    for _ in range(10):
        if browser.textCursor().charFormat().isAnchor() and browser.textCursor().hasSelection():
            break
        _press(browser, Qt.Key.Key_Tab)
    assert browser.textCursor().hasSelection() and browser.textCursor().charFormat().anchorHref().startswith("cite:")
    _press(browser, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.reader.isVisible() and win.pdf_viewer.path is not None, timeout=10_000)
    assert win.pdf_viewer.paper.id == first.paper_id and win.pdf_viewer.current_page == (first.page or 1)


@pytest.mark.slow
def test_check_a_draft_by_keyboard(window, qtbot, tmp_path, monkeypatch):
    win = window()
    use_chat(qtbot, win, ui_chat(verdicts=["supported"]))
    holm = next(p for p in win.library_pane.papers() if p.title.startswith("Alpine Glacier"))
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{holm2021, title={" + holm.title + "}, author={Holm, Ingrid and Bernasconi, Marco}, year={2021}}\n")
    draft = tmp_path / "draft.md"
    draft.write_text("Glacier tongues retreated by 31 metres per year on average [@holm2021].\n")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(draft), ""))
    qtbot.waitUntil(win.isActiveWindow)
    _press(win, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)  # Ctrl+3: the Check tab
    tab = win.checker.tab
    assert win.work_tabs.currentWidget() is tab
    _tab_to(qtbot, win, tab.draft_browse)
    _press(tab.draft_browse, Qt.Key.Key_Space)  # Choose… (the stub answers the file dialog)
    qtbot.waitUntil(lambda: "31 metres" in win.checker.view.source, timeout=10_000)
    _tab_to(qtbot, win, tab.bib_edit)  # the .bib, typed
    _press(tab.bib_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(tab.bib_edit, str(bib))
    _tab_to(qtbot, win, tab.check_button)
    _press(tab.check_button, Qt.Key.Key_Space)
    kind, report = wait_for_handle(qtbot, win.checker.current, 180_000)
    assert kind == "finished", report
    view = win.checker.view
    assert view.spans, "no citation marked"
    _tab_to(qtbot, win, view)
    for _ in range(10):
        if view.textCursor().hasSelection() and view.textCursor().charFormat().anchorHref().startswith("cite:"):
            break
        _press(view, Qt.Key.Key_Tab)
    _press(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.reader.isVisible() and win.pdf_viewer.path is not None, timeout=10_000)
    assert win.pdf_viewer.paper.id == holm.id
