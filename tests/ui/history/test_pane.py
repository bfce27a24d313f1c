"""The History tab and the research pane's scope (issue 53), in the real window on a real library
(LanceDB, PyMuPDF papers, MiniLM). The answers are written by a scripted chat model: these tests
are about what the window keeps and shows; tests/core/history/test_store.py and
tests/core/test_scope.py run the real tiny model through the same core."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.desk import Desk, Scope
from app.ui.history.pane import QUESTION as QUESTION_COL
from app.ui.library.labels_dialog import LabelsDialog, edit_labels
from app.ui.shell.main_window import MainWindow

from tests.support.ui import make_corpus, ui_chat, ui_settings, use_chat, wait_for_handle

pytestmark = pytest.mark.slow  # every test here takes more than ~5 s on 2 cores

GLACIERS = "How fast did alpine glaciers retreat, and how was it measured?"
BEES = "How do honeybees navigate when the sun is hidden?"


@pytest.fixture(scope="module")
def seed(tmp_path_factory, tiny_models) -> Path:
    """A library of the three UI papers; bees and glaciers in collection "Field/Alps", bees tagged "insects"."""
    root = tmp_path_factory.mktemp("ui-history")
    desk = Desk(ui_settings(tiny_models, root / "lib"), library=str(root / "lib"))
    try:
        assert desk.add([make_corpus(root / "papers")]).ok
        ids = {p.source_file.removesuffix(".pdf"): p.id for p in desk.papers()}
        desk.set_labels([ids["bees"]], tags=["insects"], collections=["Field/Alps"])
        desk.set_labels([ids["glaciers"]], collections=["Field/Alps"])
    finally:
        desk.close()
    return root / "lib"


@pytest.fixture
def window(keep_window, tiny_models, tmp_path, seed, qtbot) -> MainWindow:
    lib = tmp_path / "lib"
    shutil.copytree(seed, lib)
    w = keep_window(MainWindow(ui_settings(tiny_models, lib), str(lib), check_models=False))
    qtbot.waitUntil(lambda: len(w.library_pane.papers()) == 3, timeout=30_000)
    use_chat(qtbot, w, ui_chat())
    return w


def ids_of(window) -> dict[str, str]:
    return {p.source_file.removesuffix(".pdf"): p.id for p in window.library_pane.papers()}


def ask(qtbot, window, question: str):
    kind, result = wait_for_handle(qtbot, window.research.run(question))
    assert kind == "finished", result
    return result


def listed(qtbot, window, count: int) -> list:
    pane = window.history_pane
    qtbot.waitUntil(lambda: len(pane.model.entries) == count, timeout=30_000)
    return pane.model.entries


def test_every_answer_is_listed_and_reopens_as_it_was(qtbot, window, keep_window, tiny_models):
    first = ask(qtbot, window, GLACIERS)
    ask(qtbot, window, BEES)
    entries = listed(qtbot, window, 2)
    assert [e.query for e in entries] == [BEES, GLACIERS]  # newest first
    assert window.results_action.text() == "History"  # the toolbar's "Saved answers" opens this tab now

    pane = window.history_pane
    pane.select_number(first.extra["history"])
    with qtbot.waitSignal(window.history.reopened, timeout=30_000):
        pane.reopen_button.click()
    reopened = window.research.result
    assert window.work_tabs.currentWidget() is window.center
    assert reopened.query == GLACIERS and reopened.answer == first.answer
    assert [c.__dict__ for c in reopened.claims] == [c.__dict__ for c in first.claims]
    assert [c.__dict__ for c in reopened.citations] == [c.__dict__ for c in first.citations]
    assert [r.__dict__ for r in reopened.references] == [r.__dict__ for r in first.references]
    assert window.answer_view.question_label.text() == GLACIERS
    assert f"Answer {first.extra['history']} of the history" in window.answer_view.browser.toHtml()

    # Its citations still open the page in the viewer.
    link = window.answer_view.click_citation(0)
    assert link is not None
    qtbot.waitUntil(lambda: window.pdf_viewer.current_page == link.page, timeout=20_000)
    assert window.pdf_viewer.paper.id == link.paper_id

    # Improve continues the reopened answer, and the history links the two.
    window.answer_view.improve_requested.emit("Say how it was measured.")
    qtbot.waitUntil(lambda: window.research.current is None and bool(window.research.result.feedback), timeout=60_000)
    improved = listed(qtbot, window, 3)[0]
    assert improved.improves == first.extra["history"] and improved.query == GLACIERS
    assert pane.model.data(pane.model.index(0, QUESTION_COL)).startswith("↻ ")

    # A restart (a new window on the same library) lists the same answers.
    again = keep_window(MainWindow(window.settings, str(window.layout_.root), check_models=False))
    assert [e.number for e in listed(qtbot, again, 3)] == [e.number for e in pane.model.entries]


def test_search_delete_and_export(qtbot, window, tmp_path):
    glaciers, bees = ask(qtbot, window, GLACIERS), ask(qtbot, window, BEES)
    listed(qtbot, window, 2)
    pane = window.history_pane
    pane.search.setText("honeybees")
    qtbot.waitUntil(lambda: [e.query for e in pane.model.entries] == [BEES], timeout=10_000)
    assert pane.count_label.text() == "1 of 2"
    pane.search.setText("")
    listed(qtbot, window, 2)

    out = tmp_path / "glaciers.md"
    kind, path = wait_for_handle(qtbot, window.history.export(glaciers.extra["history"], "markdown", str(out)))
    assert kind == "finished" and "## References" in out.read_text() and glaciers.answer.split()[0] in out.read_text()
    bib = tmp_path / "bees.bib"
    assert wait_for_handle(qtbot, window.history.export(bees.extra["history"], "bibtex", str(bib)))[0] == "finished"
    assert "Honeybee Navigation" in bib.read_text()

    pane.confirm_delete = lambda number: True
    pane.select_number(bees.extra["history"])
    pane.delete_button.click()
    assert [e.query for e in listed(qtbot, window, 1)] == [GLACIERS]


def test_a_search_that_fires_after_the_worker_shut_down_lists_nothing(qtbot, window):
    listed(qtbot, window, 0)
    listing = window.history.listing
    assert window.history.host.shutdown()
    window.history_pane.search_changed.emit("glaciers")  # the search's delay ran out as the window closed
    assert window.history.listing is listing  # nothing submitted, and nothing raised in the event loop


def test_a_removed_paper_is_marked_and_its_citation_does_not_open(qtbot, window):
    result = ask(qtbot, window, GLACIERS)
    cited = ids_of(window)["glaciers"]
    assert cited in [r.paper_id for r in result.references]
    wait_for_handle(qtbot, window.library.remove([cited]))
    qtbot.waitUntil(lambda: bool(window.history_pane.model.entries) and window.history_pane.model.entries[0].removed == [cited], timeout=30_000)
    pane = window.history_pane
    assert "paper removed" in pane.model.data(pane.model.index(0, QUESTION_COL))
    pane.select_number(result.extra["history"])
    with qtbot.waitSignal(window.history.reopened, timeout=30_000):
        pane.reopen_button.click()
    assert "paper removed" in window.answer_view.browser.toPlainText()
    assert window.research.result.references[0].title.startswith("Alpine Glacier")  # the reference is kept
    window.reader.hide()
    window.answer_view.click_citation(0)
    assert "was removed from the library" in window.answer_view.banner.message.text() and not window.reader.isVisible()


def test_a_scoped_question_reads_only_its_scope_and_one_click_clears_it(qtbot, window):
    ids = ids_of(window)
    bar = window.scope_bar
    assert bar.label.text() == "all papers" and not bar.clear_button.isVisibleTo(bar)
    # "Ask about this paper" in the library's context menu.
    window.library_pane.select(ids["bread"])
    menu = window.library_pane.build_menu([ids["bread"]], ids["bread"], window.library_pane.paper(ids["bread"]))
    next(a for a in menu.actions() if a.text() == "Ask about this paper").trigger()
    assert bar.scope == Scope(papers=(ids["bread"],)) and "Sourdough" in bar.label.text() and bar.clear_button.isVisibleTo(bar)
    kind, exc = wait_for_handle(qtbot, window.research.run(GLACIERS))  # only the glacier paper answers it
    assert kind == "failed" and "within the question's scope" in exc.message
    # Two papers chosen: a question on bread and glaciers reads the bread paper, never the glacier one.
    menu = window.library_pane.build_menu([ids["bread"], ids["bees"]], None, None)
    next(a for a in menu.actions() if a.text() == "Ask about these 2 papers").trigger()
    assert bar.label.text() == "2 chosen papers"
    result = ask(qtbot, window, "How was bread volume measured, and how fast did glaciers retreat?")
    assert result.evidence and {e.paper_id for e in result.evidence} <= {ids["bread"], ids["bees"]}
    assert {r.paper_id for r in result.references} <= {ids["bread"], ids["bees"]}
    assert "Asked within 2 chosen papers" in window.answer_view.browser.toPlainText()

    # The Choose menu offers the tags and collections; a collection takes in its sub-collections.
    bar.fill_menu()
    collection = next(a for a in bar.menu.actions() if a.text() == "Collection").menu()
    assert [a.text() for a in collection.actions()] == ["Field", "Field/Alps"]
    collection.actions()[0].trigger()
    assert bar.label.text() == "collection “Field”" and window.research.scope == Scope(collection="Field")
    result = ask(qtbot, window, "How was bread volume measured, and how fast did glaciers retreat?")
    assert result.evidence and {e.paper_id for e in result.evidence} <= {ids["bees"], ids["glaciers"]}
    qtbot.waitUntil(lambda: window.history_pane.model.entries[0].scope == "collection “Field”", timeout=20_000)

    bar.clear_button.click()
    assert bar.scope is None and window.research.scope is None and bar.label.text() == "all papers"
    result = ask(qtbot, window, "How was bread volume measured?")
    assert ids["bread"] in {e.paper_id for e in result.evidence}


def test_library_shows_filters_and_edits_tags_and_collections(qtbot, window):
    lp, ids = window.library_pane, ids_of(window)
    items = [lp.label_filter.itemText(i) for i in range(lp.label_filter.count())]
    assert items == ["All papers", "Tag: insects", "Collection: Field", "Collection: Field/Alps"] and lp.label_filter.isVisibleTo(lp)
    lp.label_filter.setCurrentIndex(items.index("Collection: Field"))
    assert sorted(lp.visible_ids()) == sorted([ids["bees"], ids["glaciers"]])
    assert lp.count_label.text() == "2 of 3 papers"  # the count says the filter hides some
    lp.label_filter.setCurrentIndex(items.index("Tag: insects"))
    assert lp.visible_ids() == [ids["bees"]] and lp.count_label.text() == "1 of 3 papers"
    lp.label_filter.setCurrentIndex(0)
    assert len(lp.visible_ids()) == 3 and lp.count_label.text() == "3 papers"
    lp.filter.setText("zzz-no-such-paper")
    assert lp.count_label.text() == "0 of 3 papers"
    lp.filter.setText("")
    tip = lp.model.data(lp.model.index(lp.model.row_of(ids["bees"]), 0), 3)  # ToolTipRole
    assert "Tags: insects" in tip and "Collections: Field/Alps" in tip

    dialog = LabelsDialog([lp.paper(ids["bread"])], window)
    dialog.tags.setText("baking, to read")
    dialog.collections.setText("Kitchen/Bread")
    dialog.exec = lambda: LabelsDialog.DialogCode.Accepted
    wait_for_handle(qtbot, edit_labels(window, [ids["bread"]], dialog))
    qtbot.waitUntil(lambda: lp.paper(ids["bread"]).tags == ["baking", "to read"], timeout=20_000)
    assert lp.paper(ids["bread"]).collections == ["Kitchen/Bread"]
    qtbot.waitUntil(lambda: lp.label_filter.findText("Collection: Kitchen/Bread") >= 0, timeout=10_000)
