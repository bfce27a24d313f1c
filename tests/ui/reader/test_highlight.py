"""A passage found on its PDF page for highlighting (app/ui/reader/highlight.py), also while
another thread is in MuPDF."""

from __future__ import annotations

import pymupdf
import pytest

from app.ui.reader.highlight import locate_passage, passage_words


def test_highlight_covers_the_passage_on_its_page(tmp_path):
    from tests.support.pdf_factory import make_paper

    passage = ("Repeat photogrammetry compares aerial images of the same glacier taken decades apart. "
               "Ground control points on stable bedrock align the image pairs to within half a metre.")
    pdf = make_paper(tmp_path / "p.pdf", "T", ["A B"], ["# One\n\nUnrelated first page text here.", "# Methods\n\n" + passage])
    hl = locate_passage(pdf, 2, passage)
    assert hl.found and hl.method == "align"
    assert len(hl.rects) >= 2  # the passage wraps over several lines
    with pymupdf.open(pdf) as doc:
        words = doc[1].get_text("words")
    covered = [w for w in words if any(r[0] - 1 <= w[0] and w[2] <= r[2] + 1 and r[1] - 1 <= w[1] and w[3] <= r[3] + 1 for r in hl.rects)]
    assert len(covered) >= len(passage_words(passage)) - 2
    assert not locate_passage(pdf, 1, passage).found  # not on page 1


def test_highlight_tolerates_markdown_markers(tmp_path):
    from tests.support.pdf_factory import make_paper

    pdf = make_paper(tmp_path / "p.pdf", "T", ["A B"], ["# Results\n\nThe median glacier lost 0.9 metres of ice thickness per year."])
    hl = locate_passage(pdf, 1, "## Results\n\nThe **median glacier** lost 0.9 metres of ice thickness per year.")
    assert hl.found


def test_highlight_waits_while_another_thread_is_in_mupdf(tmp_path):
    """PyMuPDF's one MuPDF context is not thread-safe: the viewer's pool thread must not enter it
    while an import's reader thread is inside (two threads in MuPDF have aborted the process)."""
    import threading
    import time

    from app.core.desk import MUPDF
    from tests.support.pdf_factory import make_paper

    pdf = make_paper(tmp_path / "p.pdf", "T", ["A B"], ["# Results\n\nThe median glacier lost 0.9 metres of ice thickness per year."])
    results = []
    worker = threading.Thread(target=lambda: results.append(locate_passage(pdf, 1, "The median glacier lost 0.9 metres of ice")))
    with MUPDF:  # as the import's reader thread holds it while it reads a page
        worker.start()
        time.sleep(0.3)
        assert worker.is_alive() and not results, "the highlight entered MuPDF while another thread was in it"
    worker.join(timeout=10)
    assert results and results[0].found


@pytest.mark.slow
def test_import_and_highlights_on_two_threads(tmp_path, make_desk, fact_pdfs):
    """An import (its reader thread in MuPDF page by page) and a stream of viewer highlights on
    another thread both finish, and correctly: the lock hands MuPDF back and forth between pages."""
    import threading

    from tests.support.pdf_factory import make_paper

    for n in range(4):
        make_paper(fact_pdfs / f"extra{n}.pdf", f"Extra paper {n}", ["A B"],
                   [f"# Part {k}\n\n" + "Sediment cores were dated by radiocarbon at several depths. " * 30 for k in range(6)])
    target = make_paper(tmp_path / "shown.pdf", "T", ["A B"], ["# Results\n\nThe median glacier lost 0.9 metres of ice thickness per year."])
    desk = make_desk(tmp_path / "lib")
    stop, found = threading.Event(), []

    def highlight() -> None:
        while not stop.is_set():
            found.append(locate_passage(target, 1, "The median glacier lost 0.9 metres of ice").found)

    viewer = threading.Thread(target=highlight)
    viewer.start()
    try:
        report = desk.add([fact_pdfs])
    finally:
        stop.set()
        viewer.join(timeout=30)
    assert report.count("added") == 6, [o.message for o in report.outcomes]
    assert len(found) >= 2 and all(found)
