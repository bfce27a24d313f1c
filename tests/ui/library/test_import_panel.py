"""The import panel (app/ui/library/import_panel.py) renders typed progress."""

from __future__ import annotations

from app.ui.library.import_panel import ImportPanel


def test_import_panel_renders_typed_progress(qtbot):
    from app.core.events import Progress, Step

    clock = {"now": 100.0}
    panel = ImportPanel()
    qtbot.addWidget(panel)
    panel.eta_meter.clock = lambda: clock["now"]
    panel.start("Importing")
    panel.update_progress(Progress(10, 110, "pages", "page 4/12, 20 chunks", Step(3, 30, "paper.pdf", 4, 12)))
    clock["now"] += 10.0  # 50 more pages in 10 s: 50 pages left take 10 s
    panel.update_progress(Progress(60, 110, "pages", "page 9/12, 41 chunks", Step(3, 30, "paper.pdf", 9, 12)))
    assert panel.title.text() == "Importing — file 3 of 30"
    assert panel.file_label.text() == "paper.pdf · page 9/12, 41 chunks"
    assert (panel.file_bar.maximum(), panel.file_bar.value()) == (12, 9)
    assert panel.overall_bar.value() == int(60 / 110 * 1000)
    assert panel.eta.text() == "about 10s left"
