"""Scanned and damaged PDFs: offline OCR with word boxes, and damaged files kept in part.

The scan is made here: a page written by PyMuPDF with known sentences is rendered to an image
and that image alone becomes the page of a new PDF (no text layer), the way a scanner's PDF
is. It goes through the real Importer with the real tiny models, so the OCR'd words must be
found by search, and highlighting must land on the words where they are printed.
"""

from __future__ import annotations

import json
from pathlib import Path
import re
import sys
import time

import pymupdf
import pytest

from app.core.pdf import ocr
from app.core.pdf import extract as px
from app.core.library.store import CONTENT_CHUNKS
from app.core.ingest.validate import validate_library
from app.ui.reader.highlight import locate_passage
from tests.support import pdf_factory

PAGE = pymupdf.Rect(0, 0, 420, 260)  # small pages keep recognition quick
SCAN_TEXT = [
    "Ptarmigan Moult in Winter\n\n"
    "Willow ptarmigan moult into white plumage before the first snow. "
    "We counted feathers on forty birds trapped near the ridge in October.",
    "Results\n\n"
    "Birds from the northern slope finished their moult nine days earlier. "
    "Snow cover arrived late that year, so white birds stood out on brown ground.",
]
PASSAGE = "We counted feathers on forty birds trapped near the ridge in October."


def _write(page: pymupdf.Page, text: str) -> None:
    title, body = text.split("\n\n", 1)
    page.insert_text((24, 40), title, fontsize=16, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(24, 60, PAGE.width - 24, PAGE.height - 20), body, fontsize=11, fontname="helv")


def make_scan(path, texts=SCAN_TEXT, dpi=150):
    """An image-only PDF of `texts` (one page each), and the born-digital original beside it."""
    original = pymupdf.open()
    scan = pymupdf.open()
    for text in texts:
        page = original.new_page(width=PAGE.width, height=PAGE.height)
        _write(page, text)
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        scan.new_page(width=PAGE.width, height=PAGE.height).insert_image(PAGE, pixmap=pix)
    scan.save(path)
    return path, original


def _iou(a: pymupdf.Rect, b: pymupdf.Rect) -> float:
    inter = pymupdf.Rect(a) & b
    if inter.is_empty:
        return 0.0
    return inter.get_area() / (a.get_area() + b.get_area() - inter.get_area())


def _union(rects) -> pymupdf.Rect:
    out = pymupdf.Rect(rects[0])
    for r in rects[1:]:
        out |= r
    return out


@pytest.fixture(scope="module")
def recognised(tmp_path_factory):
    path, original = make_scan(tmp_path_factory.mktemp("scan") / "one.pdf", SCAN_TEXT[:1])
    with pymupdf.open(path) as doc:
        assert not px.has_text_layer(doc) and ocr.page_needs_ocr(doc[0])
        return ocr.recognise_page(doc[0], dpi=200), original


def test_ocr_reads_the_words_and_their_places(recognised):
    result, original = recognised
    assert ocr.available()
    text = " ".join(result.text.split()).lower()
    for phrase in ("willow ptarmigan moult", "counted feathers on forty birds", "ptarmigan moult in winter"):
        assert phrase in text, text
    # Each word's box is where the word is printed on the original page.
    words = {w[4].strip(".,"): pymupdf.Rect(w[:4]) for w in result.word_tuples()}
    for word in ("feathers", "ridge", "Willow", "Winter"):
        printed = original[0].search_for(word)[0]
        assert _iou(words[word], printed) > 0.4, (word, words[word], printed)


def test_text_layer_from_ocr_gives_markdown_with_heading(recognised):
    result, _ = recognised
    doc = pymupdf.open()
    page = doc.new_page(width=PAGE.width, height=PAGE.height)
    ocr.add_text_layer(page, result)
    assert not ocr.page_needs_ocr(page)  # now the page has a readable text layer (in memory)
    md = px.page_markdown(page, px._body_size(doc))
    assert md.startswith("# Ptarmigan Moult in Winter") or md.startswith("## Ptarmigan Moult in Winter"), md
    assert "counted feathers on forty birds trapped near the ridge" in md


@pytest.mark.slow
def test_scanned_paper_imports_is_found_and_highlighted(make_desk, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    path, original = make_scan(src / "ptarmigan-scan.pdf")
    desk = make_desk(tmp_path / "lib")
    report = desk.add([path])
    assert report.ok and report.count("added") == 1, [o.message for o in report.outcomes]
    (paper,) = desk.library.list_papers()
    assert paper.status == "indexed" and paper.page_count == 2
    assert paper.title == "Ptarmigan Moult in Winter"  # metadata read from the OCR'd page

    # The library keeps the user's file byte for byte; the words live beside the text.
    lib_pdf = desk.library.pdf_path(paper.id)
    assert lib_pdf.read_bytes() == path.read_bytes()
    stored = json.loads(ocr.layer_path(desk.library, paper.id).read_text(encoding="utf-8"))
    assert [p["page"] for p in stored["pages"]] == [1, 2]
    text_md = desk.library.text_path(paper.id).read_text(encoding="utf-8")
    assert "<!-- page 2 label 2 -->" in text_md and "nine days earlier" in text_md

    result = desk.funnel().run("How many birds were trapped to count feathers?", evidence_only=True)
    hits = [e for e in result.evidence if e.paper_id == paper.id and "forty birds" in e.text]
    assert hits and hits[0].page == 1, [(e.paper_id, e.page, e.text[:60]) for e in result.evidence]
    pages = {r["page"] for r in desk.library.chunks_table(CONTENT_CHUNKS).search().limit(100).to_list()}
    assert pages == {1, 2}

    # Highlighting: the core's locate_text and the viewer's locate_passage both land on the
    # printed words of the cited sentence (from the stored OCR boxes; the PDF has no text).
    printed = _union(original[0].search_for(PASSAGE))
    with pymupdf.open(lib_pdf) as doc:
        assert doc[0].get_text().strip() == ""
        rects = px.locate_text(doc[0], hits[0].text)
    assert rects and _iou(_union(rects), printed) > 0.3, (rects, printed)
    shown = locate_passage(lib_pdf, 1, PASSAGE)
    assert shown.found
    assert _iou(pymupdf.Rect(shown.bounds()), printed) > 0.5, (shown.rects, printed)
    assert all(c.ok for c in validate_library(desk.library)), validate_library(desk.library)

    # A second page's sentence is highlighted on page 2, not on page 1.
    assert not locate_passage(lib_pdf, 1, "Birds from the northern slope finished their moult").found
    assert locate_passage(lib_pdf, 2, "Birds from the northern slope finished their moult").found


def _multi_page_pdf(path, n=6):
    doc = pymupdf.open()
    for i in range(n):
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 520, 760),
                            f"Section {i + 1}. Lichen growth on granite boulders, plot {i + 1}. " * 30, fontsize=11)
    doc.save(path, garbage=0, deflate=True)
    return path


@pytest.mark.slow
def test_a_scan_is_read_after_the_papers_behind_it_so_they_are_listed_first(make_desk, tmp_path):
    from app.core.events import PaperImported, Task

    src = tmp_path / "in"
    src.mkdir()
    make_scan(src / "a-scan.pdf")  # first in the import's order (files are sorted)
    pdf_factory.make_paper(src / "b-kestrels.pdf", "Kestrel Departure Dates",
                           pages=["Young birds departed nine days later than adults."])
    added: list[str] = []
    task = Task()
    task.sink = lambda e: added.append(Path(e.outcome.path).name) if isinstance(e, PaperImported) else None
    report = make_desk(tmp_path / "lib").add([src], task)
    assert report.ok and report.count("added") == 2, [o.message for o in report.outcomes]
    assert added == ["b-kestrels.pdf", "a-scan.pdf"]  # the born-digital paper did not wait for the OCR


@pytest.mark.slow
def test_a_paper_whose_later_pages_are_scanned_is_read_after_the_others(make_desk, tmp_path):
    from app.core.events import PaperImported, Task

    src = tmp_path / "in"
    src.mkdir()
    scan, _ = make_scan(tmp_path / "scan.pdf")
    paper = pymupdf.open()  # a typed first page, then the scanned ones (a working paper's cover)
    _write(paper.new_page(width=PAGE.width, height=PAGE.height),
           "Ptarmigan Field Notes\n\nThis cover page was typed; the survey pages behind it were scanned.")
    with pymupdf.open(scan) as pages:
        paper.insert_pdf(pages)
    paper.save(src / "a-field-notes.pdf")
    pdf_factory.make_paper(src / "b-kestrels.pdf", "Kestrel Departure Dates",
                           pages=["Young birds departed nine days later than adults."])
    added: list[str] = []
    task = Task()
    task.sink = lambda e: added.append(Path(e.outcome.path).name) if isinstance(e, PaperImported) else None
    desk = make_desk(tmp_path / "lib")
    report = desk.add([src], task)
    assert report.ok and report.count("added") == 2, [o.message for o in report.outcomes]
    assert added == ["b-kestrels.pdf", "a-field-notes.pdf"]
    text = {r["text"] for r in desk.library.chunks_table(CONTENT_CHUNKS).search().limit(100).to_list()}
    assert any("forty birds" in t for t in text)  # the scanned pages were read


@pytest.mark.slow
def test_no_vectors_are_computed_while_a_page_is_read_by_ocr(make_desk, tmp_path, monkeypatch):
    """Recognition wants both cores: the born-digital paper's vectors wait while the scan's pages
    are read, and are computed after them."""
    from app.core.ingest.vectors import VectorsPhase

    src = tmp_path / "in"
    src.mkdir()
    make_scan(src / "a-scan.pdf")
    facts = [f"Plot {i} held {i + 3} kestrel nests on the {side} slope in year {2000 + i}. " * 12
             for i, side in enumerate(["north", "south", "east", "west"] * 3)]
    pdf_factory.make_paper(src / "b-kestrels.pdf", "Kestrel Nests by Slope", pages=facts)

    reading: list[tuple[float, float]] = []  # each OCR'd page: (start, end)
    steps: list[float] = []  # each batch of vectors: its start
    recognise, step = ocr.recognise_page, VectorsPhase.step

    def timed_recognise(*args, **kwargs):
        start = time.monotonic()
        try:
            return recognise(*args, **kwargs)
        finally:
            reading.append((start, time.monotonic()))

    def timed_step(self, *args, **kwargs):
        steps.append(time.monotonic())
        return step(self, *args, **kwargs)

    monkeypatch.setattr(ocr, "recognise_page", timed_recognise)
    monkeypatch.setattr(VectorsPhase, "step", timed_step)
    report = make_desk(tmp_path / "lib").add([src])
    assert report.ok and report.count("added") == 2, [o.message for o in report.outcomes]
    assert len(reading) == len(SCAN_TEXT)
    assert any(t > reading[-1][1] for t in steps)  # vectors were still to compute while it read
    during = [t for t in steps for start, end in reading if start < t < end]
    assert not during, (reading, during)


def test_truncated_pdf_is_damaged_not_scanned_and_keeps_early_pages(make_desk, tmp_path):
    full = _multi_page_pdf(tmp_path / "full.pdf")
    data = full.read_bytes()
    src = tmp_path / "in"
    src.mkdir()
    cut = src / "lichen-cut.pdf"
    cut.write_bytes(data[: int(len(data) * 0.55)])  # an interrupted download

    with pymupdf.open(cut) as doc:
        damage = px.check_pages(doc)
    assert damage.damaged and damage.lost and damage.readable >= 1, damage
    assert damage.lost == list(range(damage.lost[0], 7))  # what is lost is the end of the file

    desk = make_desk(tmp_path / "lib")
    report = desk.add([cut])
    (outcome,) = report.outcomes
    assert outcome.status == "added", outcome.message
    assert "damaged" in outcome.message and "needs OCR" not in outcome.message
    (paper,) = desk.library.list_papers()
    assert paper.status == "indexed" and "damaged" in paper.status_reason
    assert f"pages {damage.lost[0]}" in paper.status_reason or f"page {damage.lost[0]}" in paper.status_reason
    rows = desk.library.chunks_table(CONTENT_CHUNKS).search().limit(1000).to_list()
    kept = {r["page"] for r in rows}
    assert kept and max(kept) < damage.lost[0] and 1 in kept
    assert not ocr.layer_path(desk.library, paper.id).exists()  # nothing was OCR'd
    (check,) = validate_library(desk.library)
    assert not check.ok and any("damaged" in p for p in check.problems)


def test_without_an_ocr_engine_a_scan_needs_ocr(make_desk, tmp_path, monkeypatch, request):
    monkeypatch.setitem(sys.modules, "rapidocr", None)  # `import rapidocr` now fails
    ocr._probe.cache_clear()
    request.addfinalizer(ocr._probe.cache_clear)  # later tests probe the real engine again
    assert not ocr.available() and "not installed" in ocr.unavailable_reason()
    path, _ = make_scan(tmp_path / "scan.pdf", SCAN_TEXT[:1])
    desk = make_desk(tmp_path / "lib")
    report = desk.add([path])
    (outcome,) = report.outcomes
    assert outcome.status == "failed" and "needs OCR" in outcome.message
    (paper,) = desk.library.list_papers()
    assert paper.status == "failed" and "needs OCR" in paper.status_reason


def test_a_file_cut_before_its_first_page_ends_is_refused_as_damaged(tmp_path):
    path = pdf_factory.make_truncated(tmp_path / "truncated.pdf")
    try:
        doc = px.open_pdf(path)
    except px.ImportFailure as exc:
        assert "truncated.pdf" in exc.message and "corrupt" in exc.message
    else:
        damage = px.check_pages(doc)
        assert damage.damaged and "damaged PDF" in damage.reason()


def test_ocr_reports_each_page_and_cancel_stops_it_then_a_rerun_finishes(make_desk, tmp_path):
    from app.core.errors import Cancelled
    from app.core.events import Progress, Task

    path, _ = make_scan(tmp_path / "scan.pdf", ["Notes\n\nShort first page.", "More\n\nShort second page."])
    desk = make_desk(tmp_path / "lib")
    seen: list[Progress] = []
    task = Task()

    def sink(event) -> None:
        if isinstance(event, Progress) and "OCR" in event.detail:
            seen.append(event)
            task.token.cancel()  # stop at the first scanned page

    task.sink = sink
    with pytest.raises(Cancelled):
        desk.add([path], task=task)
    assert [e.detail for e in seen] == ["read 0 of 1 paper · reading scanned page 1/2 (OCR)"]
    assert seen[0].step is not None and seen[0].step.name == "scan.pdf" and seen[0].step.total == 2
    assert not desk.library.complete_paper_ids()

    pages: list[str] = []
    again = Task(sink=lambda e: pages.append(e.detail) if isinstance(e, Progress) and "OCR" in e.detail else None)
    report = desk.add([path], task=again)
    assert report.count("added") == 1, [o.message for o in report.outcomes]
    assert pages == ["read 0 of 1 paper · reading scanned page 1/2 (OCR)", "read 0 of 1 paper · reading scanned page 2/2 (OCR)"]


# --------------------------------------------------------------------------- metadata of a scan

TITLE_LINES = ["Spring Ptarmigan Surveys", "on the Northern Hills"]  # descenders above, none below
AUTHORS = "Ingrid Solberg and Tomas Lindqvist"
ABSTRACT = ("We followed willow ptarmigan on two slopes through three winters and compared the date "
            "each bird turned white with the first lasting snow. Birds on the northern slope moulted "
            "earlier, and late snow left white birds exposed on brown ground for weeks.")


def _title_page_scan(path):
    """An image-only title page: a two-line title set large, an author line, a labelled abstract."""
    rect = pymupdf.Rect(0, 0, 420, 420)
    page = pymupdf.open().new_page(width=rect.width, height=rect.height)
    for i, line in enumerate(TITLE_LINES):
        page.insert_text((40, 60 + 26 * i), line, fontsize=20, fontname="tiro")
    page.insert_text((40, 122), AUTHORS, fontsize=11, fontname="tiro")
    page.insert_text((40, 146), "University of Tromsø, Department of Arctic Biology", fontsize=9, fontname="tiro")
    page.insert_text((40, 180), "Abstract", fontsize=10, fontname="tibo")
    page.insert_textbox(pymupdf.Rect(40, 186, 380, 320), ABSTRACT, fontsize=10, fontname="tiro")
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    scan = pymupdf.open()
    scan.new_page(width=rect.width, height=rect.height).insert_image(rect, pixmap=pix)
    scan.save(path)
    return path


def test_metadata_of_an_ocr_scan_reads_the_whole_title_and_the_authors(tmp_path):
    doc = pymupdf.open(_title_page_scan(tmp_path / "title-scan.pdf"))
    assert not doc[0].get_text().strip()  # a scan: nothing to read before OCR
    page_ocr = ocr.PageOcr(doc)
    page_ocr.ensure(0)
    assert 1 in page_ocr.done
    meta = px.extract_meta(doc, "title-scan.pdf")
    assert meta.title == " ".join(TITLE_LINES)
    assert meta.authors == ["Ingrid Solberg", "Tomas Lindqvist"]
    assert meta.abstract.startswith("We followed willow ptarmigan")
    # The title's lines were given one size, larger than the body's.
    sizes = {s["text"].strip(): s["size"] for b in doc[0].get_text("dict")["blocks"]
             for ln in b.get("lines", ()) for s in ln["spans"]}
    assert sizes[TITLE_LINES[0]] == sizes[TITLE_LINES[1]] > 1.5 * sizes[AUTHORS]


def test_text_layer_lands_on_its_boxes_on_a_page_cropped_off_centre():
    """A scan whose CropBox does not start at the MediaBox's corner: PyMuPDF's TextWriter would
    put the words elsewhere (off the page), so the layer is shifted to land on the OCR boxes."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=844)
    page.set_cropbox(pymupdf.Rect(108, 189, 433, 763))
    lines = [ocr.OcrLine("Hydrogen incorporation in thin films", (60.0, 80.0, 260.0, 96.0)),
             ocr.OcrLine("R. Severens and F. van de Pas", (60.0, 120.0, 220.0, 132.0))]
    ocr.add_text_layer(page, ocr.OcrPage(1, lines))
    read = [ln for b in page.get_text("dict")["blocks"] for ln in b["lines"]]
    assert ["".join(s["text"] for s in ln["spans"]) for ln in read] == [lines[0].text, lines[1].text]
    for line, (x0, y0, x1, y1) in zip(lines, (ln["bbox"] for ln in read)):
        assert abs(x0 - line.bbox[0]) < 2 and abs(y1 - line.bbox[3]) < 4


def test_lines_of_one_large_title_get_one_size_whatever_their_letters():
    """Box heights follow the letters (descenders, capitals): a title's lines must not read as
    different styles, and ordinary lines share the body size."""
    shown = [pymupdf.Rect(40, 40, 380, 66), pymupdf.Rect(40, 64, 380, 86), pymupdf.Rect(150, 86, 260, 106)]
    shown += [pymupdf.Rect(40, 130 + 14 * i, 380, 142 + 14 * i) for i in range(8)]
    heights = [r.height for r in shown]
    sizes = ocr._line_sizes(shown, heights, em=1.0)
    assert sizes[0] == sizes[1] == sizes[2] == 22.0
    assert set(sizes[3:]) == {12.0}


def test_a_bold_title_set_at_body_size_is_read_as_the_title(tmp_path):
    """Short notes set the title bold at the body's size: the strokes' weight in the scan is
    written into the text layer (a bold font), so the title is still told from the prose."""
    rect = pymupdf.Rect(0, 0, 420, 300)
    page = pymupdf.open().new_page(width=rect.width, height=rect.height)
    page.insert_text((30, 40), "Moult Timing of Willow Ptarmigan", fontsize=11, fontname="hebo")
    page.insert_text((30, 58), AUTHORS, fontsize=11, fontname="helv")
    page.insert_textbox(pymupdf.Rect(30, 76, 390, 280), ABSTRACT + " " + ABSTRACT, fontsize=11, fontname="helv")
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    scan = pymupdf.open()
    scan.new_page(width=rect.width, height=rect.height).insert_image(rect, pixmap=pix)
    page_ocr = ocr.PageOcr(scan)
    page_ocr.ensure(0)
    lines = page_ocr.done[1].lines
    assert lines[0].bold and not any(ln.bold for ln in lines[1:])
    meta = px.extract_meta(scan, "note.pdf")
    assert meta.title == "Moult Timing of Willow Ptarmigan"
    assert meta.authors == ["Ingrid Solberg", "Tomas Lindqvist"]


def _glyph_numbers_page() -> pymupdf.Document:
    """A page whose text layer is glyph numbers: an embedded subset font with no map to Unicode,
    its glyphs numbered from 1 in order of use, so MuPDF can only give the numbers, which are
    control characters (a working paper of the mixed corpus reads "\\x0b\\x0c\\x04" for "the")."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="F0", fontbuffer=pymupdf.Font("tiro").buffer)
    page.insert_text((40, 100), "Perceived usefulness and ease of use predict the intention to use a system. " * 2,
                     fontname="F0", fontsize=9)
    for xref in range(1, doc.xref_length()):
        if doc.xref_get_key(xref, "ToUnicode")[0] != "null":
            doc.xref_set_key(xref, "ToUnicode", "null")
    contents = page.get_contents()[0]

    def renumbered(m: re.Match) -> bytes:
        hexes = m.group(1).decode()
        glyphs = [int(hexes[i:i + 4], 16) for i in range(0, len(hexes), 4)]
        return b"<" + "".join(f"{g % 26 + 2:04x}" if g != 1 else "0001" for g in glyphs).encode() + b">"

    doc.update_stream(contents, re.sub(rb"<([0-9a-f]+)>", renumbered, doc.xref_stream(contents)))
    return pymupdf.open("pdf", doc.tobytes())


def test_a_text_layer_of_glyph_numbers_is_read_by_ocr_not_taken_for_text():
    doc = _glyph_numbers_page()
    text = doc[0].get_text()
    assert sum(c.isalnum() for c in text) < 5 and len(text.strip()) > 100  # control characters, not words
    assert ocr.readable_fraction(text) < 0.2
    assert ocr.page_needs_ocr(doc[0]) and not px.has_text_layer(doc)
    readable = "Perceived usefulness and ease of use predict the intention to use a system."
    assert ocr.readable_fraction(readable) == 1.0  # printable ASCII still counts
