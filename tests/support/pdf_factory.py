"""Build small PDFs for tests with PyMuPDF: good papers and every kind of bad input."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pymupdf

PAGE = pymupdf.paper_rect("a4")
MARGIN = 72
BODY_SIZE = 10
HEADING_SIZE = 14
TITLE_SIZE = 20


def _write_block(page: pymupdf.Page, y: float, text: str, size: float, font: str) -> float:
    """Write wrapped text from y downwards; return the y below it (raises if it does not fit)."""
    rect = pymupdf.Rect(MARGIN, y, PAGE.width - MARGIN, PAGE.height - MARGIN)
    left = page.insert_textbox(rect, text, fontsize=size, fontname=font)
    if left < 0:
        raise ValueError(f"text does not fit on the page: {text[:40]!r}…")
    return rect.y1 - left + size * 0.8


def _write_page(page: pymupdf.Page, text: str, y: float = MARGIN) -> None:
    """Paragraphs separated by blank lines; "# Heading" lines in larger bold type.

    A paragraph is written as it is given: "\\n" inside it is a line break on the page.
    """
    for para in text.split("\n\n"):
        para = para.strip("\n")
        if not para:
            continue
        if para.startswith("# "):
            y = _write_block(page, y, para[2:], HEADING_SIZE, "hebo")
        elif para.startswith("```"):
            code = "\n".join(line for line in para.splitlines() if not line.startswith("```"))
            y = _write_block(page, y, code, BODY_SIZE, "cour")
        else:
            y = _write_block(page, y, para, BODY_SIZE, "helv")


def make_paper(
    path: Path,
    title: str = "A Study of Things",
    authors: list[str] | None = None,
    pages: list[str] | None = None,
    *,
    metadata: dict[str, str] | None = None,
    title_in_metadata: bool = True,
    page_labels: list[dict[str, Any]] | None = None,
) -> Path:
    """A text PDF: page 1 starts with the title (large, bold) and author line.

    `metadata` is added to the PDF's info dictionary (title/author filled from the
    arguments unless `title_in_metadata` is False). `page_labels` are PyMuPDF label
    rules, e.g. [{"startpage": 0, "style": "r"}, {"startpage": 2, "style": "D"}].
    """
    authors = authors if authors is not None else ["Ada Lovelace", "Charles Babbage"]
    pages = pages if pages is not None else ["# Introduction\n\nSome text about things."]
    doc = pymupdf.open()
    for i, text in enumerate(pages):
        page = doc.new_page(width=PAGE.width, height=PAGE.height)
        y = MARGIN
        if i == 0:
            y = _write_block(page, y, title, TITLE_SIZE, "hebo")
            if authors:
                y = _write_block(page, y, ", ".join(authors), 12, "helv")
        _write_page(page, text, y)
    info = dict(metadata or {})
    if title_in_metadata:
        info.setdefault("title", title)
        info.setdefault("author", ", ".join(authors))
    doc.set_metadata(info)
    if page_labels:
        doc.set_page_labels(page_labels)
    doc.save(path)
    doc.close()
    return path


def make_encrypted(path: Path) -> Path:
    """A PDF that needs a password to open."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Secret results", fontsize=12)
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user-secret", owner_pw="owner-secret")
    doc.close()
    return path


def make_scanned(path: Path, n_pages: int = 2) -> Path:
    """Pages that are only images of text (what a scanner produces): no text layer."""
    src = pymupdf.open()
    page = src.new_page(width=PAGE.width, height=PAGE.height)
    _write_page(page, "# Scanned chapter\n\n" + "Words on paper that a scanner saw. " * 20)
    pix = page.get_pixmap(dpi=50)
    src.close()
    doc = pymupdf.open()
    for _ in range(n_pages):
        doc.new_page(width=PAGE.width, height=PAGE.height).insert_image(PAGE, pixmap=pix)
    doc.save(path)
    doc.close()
    return path


def make_corrupt(path: Path, seed: int = 1) -> Path:
    """A %PDF header followed by garbage: looks like a PDF, cannot be read."""
    rng = random.Random(seed)
    path.write_bytes(b"%PDF-1.7\n" + bytes(rng.randrange(256) for _ in range(4000)))
    return path


def make_truncated(path: Path) -> Path:
    """The first third of a real PDF (an interrupted download)."""
    full = path.with_name(path.stem + "-full.pdf")
    make_paper(full, pages=["# Intro\n\n" + "Text. " * 200] * 3)
    data = full.read_bytes()
    full.unlink()
    path.write_bytes(data[: len(data) // 3])
    return path


def make_zero_pages(path: Path) -> Path:
    """A syntactically valid PDF whose page tree is empty."""
    path.write_bytes(
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
        b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
        b"trailer\n<< /Root 1 0 R /Size 3 >>\n%%EOF\n"
    )
    return path


def make_empty(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def make_not_pdf(path: Path) -> Path:
    path.write_text("This is a plain text file with a .pdf name.\n")
    return path


def make_large(path: Path, n_pages: int = 1000) -> Path:
    """A long document (a book): a heading every 10 pages, dense text on every page.

    Ten pages are typeset once and copied (typesetting 1000 pages takes seconds).
    """
    para = (
        "Large documents must stream through extraction one page at a time, so memory use "
        "stays flat however long the book is. "
    ) * 6
    block = pymupdf.open()
    for i in range(10):
        page = block.new_page(width=PAGE.width, height=PAGE.height)
        text = "# Chapter\n\n" if i == 0 else ""
        text += f"Page {i + 1} of the chapter begins here. {para}\n\n{para}"
        _write_page(page, text)
    doc = pymupdf.open()
    while doc.page_count < n_pages:
        doc.insert_pdf(block, to_page=min(9, n_pages - doc.page_count - 1))
    doc.save(path, garbage=1, deflate=True)
    doc.close()
    block.close()
    return path


def table_row_units(doc: pymupdf.Document, pages: int = 1) -> list[str]:
    """The row units the importer's table reader makes of the first `pages` pages of `doc`."""
    from app.core.pdf.tables import chunks as tables
    from app.core.records import PageText

    read = tables.PaperTables(doc)
    for k in range(pages):
        read.read(PageText(k + 1, str(k + 1), doc[k].get_text()))
    return [u.text for u in read.units() if u.source_type == tables.ROW_UNIT]


def read_meta(path: Path):
    """The metadata import reads from the PDF at `path` (`extract_meta`, the file name as fallback)."""
    from app.core.pdf import extract as pdf_extract

    doc = pdf_extract.open_pdf(path)
    try:
        return pdf_extract.extract_meta(doc, path.name)
    finally:
        doc.close()
