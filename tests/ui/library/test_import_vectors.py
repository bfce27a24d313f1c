"""The window during an import's two phases (ingest/vectors.py): the papers read and the passages
embedded, both on the import panel; vectors an earlier import left are resumed when the library
opens. A real main window (offscreen) over a real library and the real MiniLM."""

from __future__ import annotations

import pytest

from app.core.events import VECTORS_UNIT, Progress
from app.core.library.store import CONTENT_CHUNKS, Library
from app.ui.library.import_panel import ImportPanel
from tests.support.library import import_words_only
from tests.support.ui import wait_for_handle


@pytest.fixture
def panel_states(monkeypatch):
    """What the import panel shows after each progress event it renders."""
    shown: list[dict] = []
    original = ImportPanel.update_progress

    def spy(self, progress: Progress) -> None:
        original(self, progress)
        shown.append({"unit": progress.unit, "file": self.file_label.text(), "vectors": self.vectors_label.text(),
                      "title": self.title.text(), "eta": self.eta.text(),
                      "vectors_shown": not self.vectors_label.isHidden() and not self.vectors_bar.isHidden(),
                      "vectors_bar": self.vectors_bar.value(), "overall_bar": self.overall_bar.value()})

    monkeypatch.setattr(ImportPanel, "update_progress", spy)
    return shown


def test_import_panel_shows_papers_read_and_vectors(make_window, fact_pdfs, panel_states, tmp_path, qtbot):
    window = make_window(library=tmp_path / "library")
    wait_for_handle(qtbot, window.library.add([str(fact_pdfs)]))
    lib = Library(tmp_path / "library", create=False)
    total = lib.count_chunks(CONTENT_CHUNKS)
    assert all(p.status == "indexed" for p in lib.list_papers()) and len(lib.list_papers()) == 2
    reading = [s for s in panel_states if s["unit"] == "pages"]
    assert reading and "read 2 of 2 papers" in reading[-1]["file"]
    vectors = [s for s in panel_states if s["unit"] == VECTORS_UNIT]
    assert vectors, "no vectors progress reached the panel"
    last = vectors[-1]
    # Both at once: the reading line stays (every paper read), the vectors line below it.
    assert last["vectors_shown"] and last["vectors"] == f"vectors: {total:,} of {total:,} passages"
    assert last["file"] == "read 2 of 2 papers: searchable by their words; computing their vectors"
    assert last["overall_bar"] == 1000 and last["vectors_bar"] == 1000
    assert last["title"] == "Importing — vectors, paper 2 of 2"
    assert window.library_pane.import_panel.isHidden()  # finished


def test_opening_a_library_resumes_its_pending_vectors(make_window, make_desk, fact_pdfs, panel_states, tmp_path, qtbot):
    lib = tmp_path / "library"
    desk = make_desk(lib)
    import_words_only(desk, [fact_pdfs])  # vectors left for later: both papers "words"
    assert {p.status for p in desk.library.list_papers()} == {"words"}
    window = make_window(library=lib)
    qtbot.waitUntil(lambda: {p.status for p in Library(lib, create=False).list_papers()} == {"indexed"}, timeout=120_000)
    qtbot.waitUntil(lambda: window.library_pane.import_panel.isHidden(), timeout=30_000)
    shown = [s for s in panel_states if s["unit"] == VECTORS_UNIT and s["vectors_shown"]]
    assert shown and shown[-1]["title"] == "Computing vectors — paper 2 of 2"
    assert shown[-1]["file"] == "Papers: searchable by their words; computing their vectors"
