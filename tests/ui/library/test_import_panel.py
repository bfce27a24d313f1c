"""The import panel (app/ui/library/import_panel.py) renders typed progress."""

from __future__ import annotations

from app.ui.library.import_panel import ImportPanel


def test_import_panel_renders_typed_progress(qtbot):
    from app.core.events import Progress, Step

    clock = {"now": 100.0}
    panel = ImportPanel()
    qtbot.addWidget(panel)
    panel.eta_meter.clock = lambda: clock["now"]
    panel.start("Importing", "import")
    panel.update_progress(Progress(10, 110, "pages", "page 4/12, 20 chunks", Step(3, 30, "paper.pdf", 4, 12)))
    clock["now"] += 10.0  # 50 more pages in 10 s: 50 pages left take 10 s
    panel.update_progress(Progress(60, 110, "pages", "page 9/12, 41 chunks", Step(3, 30, "paper.pdf", 9, 12)))
    assert panel.title.text() == "Importing — file 3 of 30"
    assert panel.file_label.text() == "paper.pdf · page 9/12, 41 chunks"
    assert (panel.file_bar.maximum(), panel.file_bar.value()) == (12, 9)
    assert panel.overall_bar.value() == int(60 / 110 * 1000)
    assert panel.eta.text() == "about 10s left"


def test_import_panel_top_line_while_vectors_run_behind_the_reading(qtbot):
    """Reading and vectors interleave (ingest/pipeline.py): the title names what runs, the time
    left is the later end of the two, the vectors' total scaled up by the pages still to read."""
    from app.core.events import VECTORS_UNIT, Progress, Step

    clock = {"now": 100.0}
    panel = ImportPanel()
    qtbot.addWidget(panel)
    panel.eta_meter.clock = panel.vectors_meter.clock = lambda: clock["now"]
    panel.start("Importing", "import")
    panel.update_progress(Progress(10, 100, "pages", "read 0 of 4 papers · page 10/25", Step(1, 4, "a.pdf", 10, 25)))
    panel.update_progress(Progress(0, 40, VECTORS_UNIT, "vectors: 0 of 40 passages", Step(1, 1, "a.pdf")))
    clock["now"] += 10.0
    panel.update_progress(Progress(60, 100, "pages", "read 2 of 4 papers · page 10/25", Step(3, 4, "c.pdf", 10, 25)))
    assert panel.title.text() == "Importing — file 3 of 4"
    assert panel.eta.text() == ""  # the reading ends in 8 s, the vectors have no rate yet: no guess
    panel.update_progress(Progress(20, 80, VECTORS_UNIT, "vectors: 20 of 80 passages", Step(2, 2, "b.pdf")))
    # 80 passages from 60 pages: ~133 expected from 100; 113 left at 2 a second.
    assert panel.title.text() == "Importing — file 3 of 4" and panel.eta.text() == "about 56s left"
    assert panel.vectors_label.text() == "vectors: 20 of 80 passages so far" and not panel.vectors_label.isHidden()
    assert panel.vectors_bar.value() == 150  # 20 of the ~133 expected
    assert panel.file_label.text() == "c.pdf · read 2 of 4 papers · page 10/25"
    clock["now"] += 10.0
    panel.update_progress(Progress(100, 100, "pages", "read 4 of 4 papers", Step(4, 4, "d.pdf")))
    panel.update_progress(Progress(40, 130, VECTORS_UNIT, "vectors: 40 of 130 passages", Step(2, 4, "b.pdf")))
    assert panel.title.text() == "Importing — vectors, paper 2 of 4"
    assert panel.file_label.text() == "read 4 of 4 papers: searchable by their words; computing their vectors"
    assert panel.eta.text() == "about 45s left"  # 90 passages left at 2 a second
    assert panel.vectors_label.text() == "vectors: 40 of 130 passages" and panel.vectors_bar.value() == 307


def test_import_panel_top_line_follows_the_jobs_kind_not_its_title(qtbot):
    """Once every paper is read, the top line counts the vectors' papers: "vectors, paper" in an
    import, "paper" alone in a vectors-only job, whatever the job's title says."""
    from app.core.events import VECTORS_UNIT, Progress, Step

    panel = ImportPanel()
    qtbot.addWidget(panel)
    vectors = Progress(5, 40, VECTORS_UNIT, "vectors: 5 of 40 passages", Step(1, 2, "a.pdf"))

    panel.start("Importing vectors.bib", "import")  # a bibliography file that happens to be named so
    panel.update_progress(Progress(30, 30, "pages", "read 2 of 2 papers", Step(2, 2, "b.pdf")))
    panel.update_progress(vectors)
    assert panel.title.text() == "Importing vectors.bib — vectors, paper 1 of 2"

    panel.start("Resuming embeddings", "vectors")  # vectors alone: no reading, no "vectors," prefix
    panel.update_progress(vectors)
    assert panel.title.text() == "Resuming embeddings — paper 1 of 2"
    assert panel.file_label.text() == "Papers: searchable by their words; computing their vectors"
