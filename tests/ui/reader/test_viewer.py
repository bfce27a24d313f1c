"""The PDF viewer's keyboard: find (Ctrl+F bar, Enter/F3, Shift+Enter/Shift+F3, "n of m", Esc),
zoom and page keys, and the reading position kept per paper across viewers (a restart).

Real PDFs made with PyMuPDF, a real viewer offscreen; the find runs on the viewer's pool thread.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.ui.reader.search import PdfWords, find_hits
from app.ui.reader.viewer import PdfViewer

from tests.support.kerned_pdfs import Paper, make_kerned_paper
from tests.support.pdf_factory import make_paper

PAGES = [
    "# Abstract\n\nThe kestrel counts rose. Kestrel nests were checked twice.",
    "# Methods\n\nNo birds are named on this page at all.",
    "# Results\n\nA kestrel was seen at dawn. The confidence interval of the count was wide.",
    "# Discussion\n\nKestrels return each spring; the last kestrel left in October.",
]


@pytest.fixture
def pdf(tmp_path) -> Path:
    return make_paper(tmp_path / "kestrel.pdf", "Kestrel Counts", ["A. Author"], PAGES)


@pytest.fixture
def viewer(qtbot, qapp):
    made: list[PdfViewer] = []

    def make() -> PdfViewer:
        v = PdfViewer()
        qtbot.addWidget(v)
        v.resize(700, 800)
        v.show()
        qtbot.waitExposed(v)
        v.activateWindow()  # keys and focus as in a window the user works in
        qtbot.waitUntil(v.isActiveWindow)
        made.append(v)
        return v

    yield make
    for v in made:
        v.shutdown()


def _open_find(qtbot, v: PdfViewer, text: str) -> None:
    v.find_bar.open_bar()
    assert v.find_bar.isVisible() and v.find_bar.edit.hasFocus()
    QTest.keyClicks(v.find_bar.edit, text)
    qtbot.waitUntil(lambda: "of" in v.find_bar.count.text() or "No" in v.find_bar.count.text(), timeout=10_000)


def test_words_are_found_through_ligatures_and_line_breaks(tmp_path):
    path = tmp_path / "lig.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="lig", fontbuffer=pymupdf.Font("cjk").buffer)  # PyMuPDF's own font with an "ﬁ" glyph
    page.insert_text((72, 100), "the con\ufb01dence", fontsize=11, fontname="lig")  # "ﬁ" as TeX prints it
    page.insert_text((72, 116), "interval was wide", fontsize=11, fontname="lig")
    doc.save(path)
    pages = PdfWords().pages(path)
    hits = find_hits(pages, "confidence interval")
    assert len(hits) == 1 and hits[0].page == 1 and len(hits[0].rects) == 2  # one rectangle a line
    assert find_hits(pages, "Interval") and find_hits(pages, "dence inter")
    assert find_hits(pages, "interval wide") == [] and find_hits(pages, "  ") == []


def test_words_are_found_where_a_kerned_paper_draws_spaces_inside_them(tmp_path):
    # The NAR papers draw a space glyph at each kerned pair: MuPDF reads "kno wn f or", "se v eral".
    path = make_kerned_paper(tmp_path / "kerned.pdf", Paper(
        title_lines=["A title"], author_line="Ann Author",
        abstract_lines=["DNA intercalators are mainly kno|wn f|or their capacity to kill cells. R|ecently, se|v|eral",
                        "others ha|v|e attracted interest."],
        body_lines=["We have known for a long time that several intercalators bind DNA, and recently the"] * 2))
    pages = PdfWords().pages(path)
    known = find_hits(pages, "known for")
    assert len(known) == 3 and len(find_hits(pages, "several")) == 3 and len(find_hits(pages, "have")) == 3
    assert find_hits(pages, "kno wn") == []  # the pieces are no words of the page
    # The hit in the abstract covers the glyphs of "kno" through "or", as MuPDF places them.
    with pymupdf.open(path) as doc:
        raw = [w for w in doc[0].get_text("words") if w[4] in ("kno", "or")][:2]
    box = min(known, key=lambda h: h.bounds()[1]).bounds()
    assert abs(box[0] - raw[0][0]) < 0.5 and abs(box[2] - raw[1][2]) < 0.5 and abs(box[1] - raw[0][1]) < 0.5


def test_find_bar_counts_steps_wraps_and_closes(viewer, qtbot, pdf):
    v = viewer()
    assert v.open_document(pdf, page=1)
    v.scroll.setFocus()
    _open_find(qtbot, v, "kestrel")
    bar = v.find_bar
    # "Kestrel" in the title, two on page 1's text, one on page 3, two on page 4 ("Kestrels" too).
    assert bar.count.text() == "1 of 6" and v.current_page == 1
    assert v.canvas.found_current and len(v.canvas.found) == 2  # the others on the page, marked lighter
    QTest.keyClick(bar.edit, Qt.Key.Key_Return)
    QTest.keyClick(bar.edit, Qt.Key.Key_Return)
    QTest.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count.text() == "4 of 6" and v.current_page == 3
    assert len(v.canvas.found_current) == 1 and v.canvas.found == []
    QTest.keyClick(bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count.text() == "3 of 6" and v.current_page == 1
    QTest.keyClick(v.scroll, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    QTest.keyClick(v.scroll, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    QTest.keyClick(v.scroll, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count.text() == "6 of 6" and v.current_page == 4  # wrapped round
    QTest.keyClick(v.scroll, Qt.Key.Key_F3)
    assert bar.count.text() == "1 of 6"
    # A new query is searched on Enter without waiting for the typing pause.
    bar.edit.setFocus()
    bar.edit.selectAll()
    QTest.keyClicks(bar.edit, "confidence interval")
    QTest.keyClick(bar.edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bar.count.text() == "1 of 1", timeout=10_000)
    assert v.current_page == 3
    bar.edit.selectAll()
    QTest.keyClicks(bar.edit, "osprey")
    qtbot.waitUntil(lambda: bar.count.text() == "No matches", timeout=10_000)
    assert v.canvas.found == v.canvas.found_current == []
    # Home and End stay the line edit's (the viewer's first/last page keys do not take them there).
    page = v.current_page
    QTest.keyClick(bar.edit, Qt.Key.Key_Home)
    assert bar.edit.cursorPosition() == 0 and v.current_page == page
    QTest.keyClick(bar.edit, Qt.Key.Key_End)
    assert bar.edit.cursorPosition() == len("osprey") and v.current_page == page
    QTest.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible() and v.scroll.hasFocus()


def test_page_keys_and_zoom(viewer, qtbot, pdf):
    v = viewer()
    v.open_document(pdf, page=1)
    v.scroll.setFocus()
    QTest.keyClick(v.scroll, Qt.Key.Key_PageDown)
    assert v.current_page == 2
    QTest.keyClick(v.scroll, Qt.Key.Key_End)
    assert v.current_page == 4
    QTest.keyClick(v.scroll, Qt.Key.Key_PageUp)
    assert v.current_page == 3
    QTest.keyClick(v.scroll, Qt.Key.Key_Home)
    assert v.current_page == 1
    QTest.keyClick(v.scroll, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert v.page_box.hasFocus()
    QTest.keyClicks(v.page_box, "3")
    QTest.keyClick(v.page_box, Qt.Key.Key_Return)
    assert v.current_page == 3
    width = v.canvas.width()
    v.zoom_by(1.2)
    assert v.canvas.width() > width and not v._fit_width
    v.fit_width()
    assert v.canvas.width() == width


def test_reading_position_is_kept_per_paper_and_across_restarts(viewer, qtbot, pdf, tmp_path):
    other = make_paper(tmp_path / "other.pdf", "Other", ["B. Author"], PAGES[:2])
    v = viewer()
    v.positions.set_library(str(tmp_path / "lib"))
    v.open_document(pdf)  # never read: the first page
    assert v.current_page == 1
    v.go_to(3)
    v.zoom_by(1.2 * 1.2)
    qtbot.waitUntil(lambda: v.scroll.verticalScrollBar().maximum() > 0)
    v.scroll.verticalScrollBar().setValue(v.scroll.verticalScrollBar().maximum() // 2)
    scale = v._scale
    v.open_document(other)
    assert v.current_page == 1
    v.open_document(pdf)  # back: page 3, zoomed, half way down
    assert v.current_page == 3 and v._scale == pytest.approx(scale, abs=1e-3) and not v._fit_width
    qtbot.waitUntil(lambda: v.scroll.verticalScrollBar().value() > 0)
    v.go_to(4)
    v.fit_width()
    v.shutdown()  # what closing the window does
    again = viewer()  # a new viewer, as after a restart (same config folder)
    again.positions.set_library(str(tmp_path / "lib"))
    again.open_document(pdf)
    assert again.current_page == 4 and again._fit_width
    elsewhere = viewer()
    elsewhere.positions.set_library(str(tmp_path / "another-lib"))  # the same file in another library
    elsewhere.open_document(pdf)
    assert elsewhere.current_page == 1
    assert elsewhere.open_document(pdf, page=2) and elsewhere.current_page == 2  # a citation's page wins


# -- the library pane's text search, through the real window ----------------------------------


@pytest.mark.slow
def test_library_text_search_lists_pages_and_opens_the_viewer_there(keep_window, seed_library, tiny_models, tmp_path, qtbot):
    """Keyboard only: type in the filter, Enter, arrow to a place, Enter: the PDF at its page, the words marked."""
    import shutil

    from app.ui.shell.main_window import MainWindow
    from tests.support.ui import ui_settings

    lib = tmp_path / "library"
    shutil.copytree(seed_library, lib)
    window = keep_window(MainWindow(ui_settings(tiny_models, lib), str(lib), check_models=False))
    qtbot.waitUntil(lambda: len(window.library_pane.papers()) == 3, timeout=30_000)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    pane, results = window.library_pane, window.text_search.results
    pane.filter.setFocus()
    QTest.keyClicks(pane.filter, "dorsal rim")
    QTest.keyClick(pane.filter, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: results.tree.topLevelItemCount() > 0, timeout=60_000)
    assert results.isVisible() and results.status.text() == "“dorsal rim”: 3 places in 1 paper"
    paper = results.tree.topLevelItem(0)
    assert paper.text(0).startswith("Honeybee Navigation with Polarized Skylight — 3 places")
    assert [paper.child(i).text(0).split(":")[0] for i in range(3)] == ["p. 1", "p. 2", "p. 3"]
    assert "painted dorsal rim areas" in paper.child(1).text(0)
    results.tree.setFocus()
    assert results.tree.currentItem() is paper.child(0)
    QTest.keyClick(results.tree, Qt.Key.Key_Down)
    QTest.keyClick(results.tree, Qt.Key.Key_Return)
    viewer = window.pdf_viewer
    qtbot.waitUntil(lambda: viewer.find_bar.count.text() == "2 of 3", timeout=20_000)
    assert window.reader.isVisible() and viewer.current_page == 2
    assert viewer.canvas.found_current and viewer.find_bar.edit.text() == "dorsal rim"
