"""Correcting a paper's metadata: the Details form, and Desk.edit_paper keeping it across re-imports."""

from __future__ import annotations

import pytest

from app.core.errors import ResearchDeskError
from app.core.records import Paper
from app.ui.library.paper_details import UNSURE_MARK, PaperDetails
from tests.support.papers import paper


def _paper(**changes) -> Paper:
    return paper("smith2020", "Glacier retreat", authors=["A. Smith", "B. Jones"], abstract="We measure.",
                 source_file="smith.pdf", page_count=3, page_labels=["1", "2", "3"], content_hash="h", **changes)


def test_details_mark_unsure_fields_and_return_typed_changes(qtbot):
    form = PaperDetails()
    qtbot.addWidget(form)
    form.show_paper(_paper(unsure=["year", "authors"]))
    assert form.labels["published"].text() == "Published" + UNSURE_MARK
    assert form.labels["authors"].text() == "Authors" + UNSURE_MARK
    assert form.labels["title"].text() == "Title"
    assert "published, authors" in form.hint.text() or "authors, published" in form.hint.text()
    assert form.changes() == {}
    form.fields["authors"].setPlainText("Anna Smith\n\nBo Jones\n")
    form.fields["published"].setText("2021-03-01")
    with qtbot.waitSignal(form.edited) as sent:
        form.save_button.click()
    assert sent.args == ["smith2020", {"authors": ["Anna Smith", "Bo Jones"], "published": "2021-03-01"}]


def test_edit_paper_is_kept_when_the_index_is_rebuilt(make_desk, fact_pdfs, tmp_path):
    desk = make_desk(tmp_path / "lib")
    assert desk.add([fact_pdfs]).ok
    paper = desk.papers()[0]
    edited = desk.edit_paper(paper.id, title="A corrected title", authors=["Ada Lovelace"])
    assert (edited.title, edited.authors) == ("A corrected title", ["Ada Lovelace"])
    assert "title" not in edited.unsure and "authors" not in edited.unsure
    desk.rebuild_index()  # drops the tables and imports every PDF again
    again = desk.paper(paper.id)
    assert (again.title, again.authors) == ("A corrected title", ["Ada Lovelace"])
    with pytest.raises(ResearchDeskError, match="cannot be edited"):
        desk.edit_paper(paper.id, status="failed")
