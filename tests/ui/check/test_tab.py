"""The Check tab in the real window: a manuscript checked sentence by sentence, its citations
coloured by verdict, a click to the cited page, cancel keeping what is done, the exports.

The library is built through the core with two small papers (tests/support/papers.py FACT_PAPERS);
the main flow runs the real tiny GGUF models, the UI-state tests put a scripted chat model
into the worker's Desk for deterministic verdicts and slow checks.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QHelpEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QToolTip

from app.core.errors import Cancelled
from app.core.events import SentenceChecked
from app.ui.common import theme
from app.ui.check.controller import find_citation, sentence_offset
from app.ui.check.tab import VERDICT_COLOR
from app.ui.shell.main_window import MainWindow

from tests.support.chat import ScriptedChat
from tests.support.library import import_once, write_papers
from tests.support.papers import FACT_PAPERS
from tests.support.ui import ui_chat, ui_settings, use_chat, wait_for_handle

BIB = """
@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria and Berg, Tomas}, year={2019}}
@article{gupta2021, title={Glacier Retreat Measured by Drone Photogrammetry}, author={Gupta, Anil}, year={2021}}
@article{white1980, title={A Heteroskedasticity-Consistent Covariance Matrix Estimator}, author={White, Halbert}, year={1980}}
"""
DRAFT = (
    "---\ntitle: Results\n---\n"
    "The glacier front retreated 38 metres per year between 2015 and 2021 [@gupta2021].\n\n"
    "Robust covariance estimators were proposed long ago [@white1980].\n\n"
    "Young kestrels departed 9 days later than adults [@lindqvist2019; @nokey2000].\n"
)


@pytest.fixture(scope="module")
def check_library(tmp_path_factory, tiny_models) -> Path:
    """The two fact papers imported once through the core (copied for each window)."""
    root = tmp_path_factory.mktemp("check-seed")
    library = root / "library"
    report = import_once(library, write_papers(root / "in", FACT_PAPERS), ui_settings(tiny_models, library))
    assert report.count("added") == 2
    return library


@pytest.fixture
def window(keep_window, tiny_models, tmp_path, check_library):
    lib = tmp_path / "library"
    shutil.copytree(check_library, lib)
    return keep_window(MainWindow(ui_settings(tiny_models, lib), str(lib), check_models=False))


def _files(tmp_path: Path, text: str = DRAFT, name: str = "draft.md") -> tuple[Path, Path]:
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB)
    draft = tmp_path / name
    draft.write_text(text)
    return draft, bib


def _start(qtbot, window: MainWindow, draft: Path, bib: Path | None):
    """Open the tab, choose the files, press Check; the check's job handle."""
    tab = window.checker.tab
    window.work_tabs.setCurrentWidget(tab)
    tab.set_draft(str(draft), str(bib) if bib else "")
    qtbot.waitUntil(lambda: tab.view.source != "", timeout=10_000)
    assert "[@gupta2021]" in tab.view.toPlainText() or "gupta" in tab.view.toPlainText().lower()
    qtbot.mouseClick(tab.check_button, Qt.MouseButton.LeftButton)
    handle = window.checker.current
    assert handle is not None and tab.check_button.text() == "Cancel"
    return handle


def _marked(window: MainWindow, key: str):
    """(citation, its text span, the char format there) of the first mark of `key`."""
    controller, view = window.checker, window.checker.view
    index = next(i for i, c in enumerate(controller.citations) if c.key == key)
    start, end = view.spans[index]
    cursor = view.textCursor()
    cursor.setPosition(start + 1)
    return controller.citations[index], view.source[start:end], cursor.charFormat(), index


def _is_colour_of(fmt, verdict: str) -> bool:
    want = QColor(theme.colors()[VERDICT_COLOR[verdict]])
    got = fmt.background().color()
    return (got.red(), got.green(), got.blue()) == (want.red(), want.green(), want.blue()) and got.alpha() < 255


@pytest.mark.slow
def test_check_tab_real_model_colours_opens_and_exports(window, qtbot, tmp_path, monkeypatch):
    draft, bib = _files(tmp_path)
    arrived: list[int] = []
    handle = _start(qtbot, window, draft, bib)
    handle.event.connect(lambda e: arrived.append(len(window.checker.view.spans)) if isinstance(e, SentenceChecked) else None)
    kind, report = wait_for_handle(qtbot, handle, 300_000)
    assert kind == "finished", report
    tab, view = window.checker.tab, window.checker.view
    assert arrived and arrived[0] >= 1  # the first sentence was coloured as it arrived, before the end
    assert tab.check_button.text() == "Check" and not report.partial
    assert tab.progress_label.text() == "sentence 3 of 3" and tab.progress.value() == 3

    # A key for a paper not in the library: grey, said so on hover.
    white, text, fmt, white_index = _marked(window, "white1980")
    assert text == "white1980" and white.verdict == "not-in-library"
    assert fmt.isAnchor() and _is_colour_of(fmt, "not-in-library")
    assert "not in the library" in fmt.toolTip() and "matches no paper" in fmt.toolTip()
    # A resolvable key: the glacier paper, supported or partial (the tiny model may hedge), its page 3.
    gupta, text, fmt, gupta_index = _marked(window, "gupta2021")
    assert text == "gupta2021" and gupta.paper_id.startswith("glacier")
    assert gupta.verdict in ("supported", "partial") and gupta.page == 3 and "38 metres" in gupta.quote
    assert _is_colour_of(fmt, gupta.verdict) and "38 metres" in fmt.toolTip()
    assert not _is_colour_of(fmt, "not-in-library")
    nokey = _marked(window, "nokey2000")[0]
    assert nokey.verdict == "not-in-library"
    # The legend counts what the report counts; the problem lines are listed.
    assert "not in library <b>2</b>" in tab.legend["not-in-library"].text()
    problems = [tab.problems.item(i).text() for i in range(tab.problems.count())]
    assert any("white1980" in p for p in problems) and any("nokey2000" in p for p in problems)
    assert tab.problems_box.isVisible()

    # Hovering a citation shows its verdict.
    view.viewport().setFocus()
    point = view.citation_point(white_index)
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, point, view.viewport().mapToGlobal(point)))
    qtbot.waitUntil(lambda: "not in the library" in QToolTip.text(), timeout=3_000)

    # Clicking the resolvable citation opens its paper at the page, the quote to highlight.
    opened: list[tuple] = []
    window.checker.citation_requested.connect(lambda *a: opened.append(a))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.citation_point(gupta_index))
    assert opened == [(gupta.paper_id, 3, gupta.quote)]
    viewer = window.pdf_viewer
    assert window.reader.isVisible() and viewer.current_page == 3
    assert viewer._passage is not None and viewer._passage.text == gupta.quote
    qtbot.waitUntil(lambda: viewer.highlight is not None, timeout=15_000)
    assert viewer.highlight.found and viewer.highlight.page == 3

    # Export both forms through the buttons (the save dialog answered here).
    for fmt_name, button in (("md", tab.export_md_button), ("json", tab.export_json_button)):
        target = tmp_path / f"report.{fmt_name}"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, t=target, **k: (str(t), ""))
        exported: list[str] = []
        window.checker.exported.connect(exported.append)
        assert button.isEnabled()
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: exported != [], timeout=10_000)
        assert exported == [str(target)]
    md = (tmp_path / "report.md").read_text()
    assert "not in the library" in md and "gupta2021" in md
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["counts"]["not-in-library"] == 2 and len(data["sentences"]) == 3 and data["partial"] is False


class SlowVerdicts(ScriptedChat):
    """The scripted model, taking `seconds` over each verdict (and stopping when cancelled)."""

    def __init__(self, seconds: float, **kw) -> None:
        super().__init__(**kw)
        self.seconds = seconds

    def chat(self, messages, *, cancelled=None, **kw):
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            if cancelled is not None and cancelled():
                raise Cancelled()
            time.sleep(0.02)
        return super().chat(messages, cancelled=cancelled, **kw)


@pytest.mark.slow
def test_cancel_keeps_the_sentences_done(window, qtbot, tmp_path):
    text = "".join(f"The glacier front retreated 38 metres per year, study {n} [@gupta2021].\n\n" for n in range(1, 7))
    draft, bib = _files(tmp_path, text)
    use_chat(qtbot, window, ui_chat(SlowVerdicts, seconds=0.6, verdicts=["supported"]))
    handle = _start(qtbot, window, draft, bib)
    tab = window.checker.tab
    qtbot.waitUntil(lambda: len(window.checker.sentences) >= 1, timeout=60_000)
    qtbot.mouseClick(tab.check_button, Qt.MouseButton.LeftButton)  # now "Cancel"
    kind, report = wait_for_handle(qtbot, handle, 60_000)
    assert kind == "finished" and report.partial  # the core's loop keeps what is done
    done = len(report.sentences)
    assert 1 <= done < 6 and report.total_sentences == 6
    assert len(window.checker.view.spans) == done  # the coloured ones stay
    first, _text, fmt, _ = _marked(window, "gupta2021")
    assert first.paper_id and _is_colour_of(fmt, first.verdict), (first, fmt.background().color().name())
    assert tab.status.text().startswith(f"Stopped early: {done} of 6")
    assert tab.check_button.text() == "Check" and tab.export_json_button.isEnabled()
    out = tmp_path / "partial.json"
    kind, _ = wait_for_handle(qtbot, window.checker.export("json", str(out)))
    assert kind == "finished"
    assert json.loads(out.read_text())["partial"] is True


@pytest.mark.slow
def test_latex_and_docx_citations_found_in_the_text(window, qtbot, qapp, tmp_path):
    """Scripted verdicts (not found → red); citations located in LaTeX and in a .docx's text citations."""
    import docx

    use_chat(qtbot, window, ui_chat(verdicts=["unsupported"]))
    tex, bib = _files(tmp_path, "\\section{Results}\nGlaciers advanced quickly in the Alps \\citep[p.~3]{gupta2021}.\n",
                      "draft.tex")
    handle = _start(qtbot, window, tex, bib)
    kind, report = wait_for_handle(qtbot, handle, 120_000)
    assert kind == "finished", report
    cite, text, fmt, _ = _marked(window, "gupta2021")
    assert text == "gupta2021" and cite.verdict == "not-found" and _is_colour_of(fmt, "not-found")
    assert "not found in the cited paper" in fmt.toolTip()
    assert "not found <b>1</b>" in window.checker.tab.legend["not-found"].text()

    document = docx.Document()
    document.add_heading("Results", level=1)
    document.add_paragraph("Glacier fronts retreated fast in the Alps (Gupta, 2021). Nothing cited here.")
    path = tmp_path / "draft.docx"
    document.save(path)
    tab = window.checker.tab
    tab.set_draft(str(path))  # the same .bib: its first author and year resolve the text citation
    qtbot.waitUntil(lambda: "Gupta, 2021" in window.checker.view.source, timeout=10_000)
    assert window.checker.report is None and not tab.export_md_button.isEnabled()  # a new draft forgets the last report
    qtbot.mouseClick(tab.check_button, Qt.MouseButton.LeftButton)
    kind, report = wait_for_handle(qtbot, window.checker.current, 120_000)
    assert kind == "finished", report
    cite, text, fmt, _ = _marked(window, "Gupta 2021")
    assert text == "Gupta, 2021" and cite.paper_id.startswith("glacier") and fmt.isAnchor()

    # A switch to the dark theme draws the verdict colours again, in the dark palette's shades.
    theme.apply_theme(qapp, "dark")
    try:
        qtbot.waitUntil(lambda: _is_colour_of(_marked(window, "Gupta 2021")[2], cite.verdict), timeout=5_000)
        assert theme.colors()["bad"] in window.checker.tab.legend["not-found"].text()
    finally:
        theme.apply_theme(qapp, "light")


def test_citation_locations_in_the_text():
    text = "Intro line.\nAs \\citet{ab} and \\cite{a, ab2} show. Also @a.\n"
    start = sentence_offset(text, 2, 1)
    assert text[start:].startswith("As ")
    assert sentence_offset(text, 9, 1) == len(text) and sentence_offset(text, 2, 999) == text.index("\n", 12)
    s, e = find_citation(text, "a", start, len(text))
    assert text[s - 1 : e + 1] == "{a,"  # not the "a" of "ab", nor a word of the prose
    s, e = find_citation(text, "ab2", start, len(text))
    assert text[s:e] == "ab2"
    assert find_citation(text, "zz", start, len(text)) is None
    prose = "Fronts retreated (Gupta et al., 2021, p. 4) while Smith (2019) disagreed."
    s, e = find_citation(prose, "Smith 2019", 0, len(prose))
    assert prose[s:e] == "Smith (2019"
    s, e = find_citation(prose, "Gupta 2021", 0, len(prose))
    assert prose[s:e] == "Gupta et al., 2021"


@pytest.mark.slow
def test_bad_input_is_a_problem_line_and_nothing_is_lost(window, qtbot, tmp_path):
    tab, view = window.checker.tab, window.checker.view
    pdf = tmp_path / "notes.pdf"
    pdf.write_bytes(b"%PDF-1.4 not a manuscript")
    window.work_tabs.setCurrentWidget(tab)
    tab.set_draft(str(pdf), str(tmp_path / "missing.bib"))
    qtbot.waitUntil(lambda: "cannot be shown" in view.toPlainText(), timeout=10_000)
    assert "notes.pdf is not a manuscript" in view.toPlainText() and view.source == ""
    qtbot.mouseClick(tab.check_button, Qt.MouseButton.LeftButton)
    kind, report = wait_for_handle(qtbot, window.checker.current, 60_000)
    assert kind == "finished" and report.sentences == []
    problems = [tab.problems.item(i).text() for i in range(tab.problems.count())]
    assert any("notes.pdf: not a manuscript" in p for p in problems), problems
    assert tab.status.text().startswith("0 citing sentences checked") and tab.export_md_button.isEnabled()
