"""Annotated copies of the cited PDFs: each cited sentence a highlight, its claims the note.

A copy is written from the library's PDF bytes, read into memory: the library's file is never
opened for writing. The highlights are standard PDF highlight annotations (one per sentence,
one quad a line, from the viewer's own rectangles: pdf/highlight.py), their note the claims that
cite the sentence with the check's verdict, their author "Research Desk": any PDF reader shows
them, and Zotero imports them as annotations ("Import Annotations…" on the PDF).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pymupdf

from ..library.atomic_files import atomic_write_bytes
from ..pdf.highlight import passage_rects
from ..pdf.mupdf_guard import MUPDF
from .answer import sentence_key
from .records import KEY_PASSAGE, SharedAnswer, SharedCitation

log = logging.getLogger(__name__)

AUTHOR = "Research Desk"
COLOUR = (1.0, 0.85, 0.1)  # highlighter yellow
VERDICTS = {"supported": "supported", "partial": "partly supported", "unsupported": "unsupported"}


def annotate_pdfs(answer: SharedAnswer, out_dir: Path, notice: Callable[[str], None] | None = None) -> list[Path]:
    """One annotated copy per cited paper in `out_dir` (named <paper_id>.pdf); the paths written.

    A paper whose PDF the library no longer holds is left out, and `notice` says so."""
    by_paper: dict[str, list[SharedCitation]] = {}
    for c in answer.citations:
        if c.sentences:
            by_paper.setdefault(c.paper_id, []).append(c)
    written = []
    for paper_id, cits in by_paper.items():
        paper = answer.paper(paper_id)
        if paper is None or paper.pdf is None:
            if notice is not None:
                notice(f"{paper_id}: its PDF is not in the library; no annotated copy.")
            continue
        out = out_dir / f"{paper_id}.pdf"
        with MUPDF:
            data = annotated(paper.pdf.read_bytes(), cits, answer.question)
        atomic_write_bytes(out, data)
        written.append(out)
    return written


def annotated(pdf: bytes, citations: list[SharedCitation], question: str) -> bytes:
    """The PDF's bytes with a highlight for each cited sentence (sentences cited twice: one highlight, both notes)."""
    notes: dict[tuple[int, str], list[str]] = {}
    texts: dict[tuple[int, str], str] = {}
    for c in citations:
        for s in c.sentences:
            key = (c.page, sentence_key(s.text))
            notes.setdefault(key, []).append(_note(c))
            texts[key] = max(texts.get(key, ""), s.text, key=len)
    doc = pymupdf.open(stream=pdf, filetype="pdf")
    try:
        for key, lines in notes.items():
            page, text = key[0], texts[key]
            if not 1 <= page <= doc.page_count:
                log.warning("page %d is outside the PDF's %d pages: not annotated", page, doc.page_count)
                continue
            pg = doc.load_page(page - 1)
            rects, _method = passage_rects(pg, text)
            if not rects:
                log.warning("a cited sentence was not found on page %d: not annotated: %.60s", page, text)
                continue
            annot = pg.add_highlight_annot(quads=[r.quad for r in rects])
            annot.set_colors(stroke=COLOUR)
            annot.set_info(title=AUTHOR, subject="Research Desk citation",
                           content="\n\n".join(dict.fromkeys(lines)) + f"\n\nAsked: {question}")
            annot.update()
        return doc.tobytes(garbage=0, deflate=True)
    finally:
        doc.close()


def _note(c: SharedCitation) -> str:
    if c.kind == KEY_PASSAGE:
        return f"[{c.number}] Key passage of the answer (quoted as it stands)."
    verdict = VERDICTS.get(c.verdict, "not checked")
    return f"[{c.number}] Claim ({verdict}): {c.claim}"
