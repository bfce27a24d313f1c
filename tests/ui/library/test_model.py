"""The library table's model and filter (app/ui/library/model.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.ui.library.model import PaperFilterProxy, PaperTableModel
from tests.support.papers import paper


def test_library_table_filters_sorts_and_explains_failures(qtbot):
    model = PaperTableModel()
    proxy = PaperFilterProxy()
    proxy.setSourceModel(model)
    model.set_papers([
        paper("b", "Bees navigate", authors=["Sofia Lindqvist"], page_count=3),
        paper("a", "Alpine glaciers", published="2019", page_count=3),
        paper("c", "Broken scan", status="failed", status_reason="no text layer: needs OCR", page_count=3),
    ])
    proxy.set_filter("lindqvist")
    assert proxy.rowCount() == 1
    proxy.set_filter("")
    proxy.sort(0, Qt.SortOrder.AscendingOrder)
    assert [proxy.index(r, 0).data() for r in range(3)] == ["Alpine glaciers", "Bees navigate", "Broken scan"]
    failed = model.index(2, 4)
    assert "needs OCR" in model.data(failed, Qt.ItemDataRole.ToolTipRole)
    assert model.data(failed, Qt.ItemDataRole.DecorationRole) is not None
