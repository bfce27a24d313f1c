"""`verify BUNDLE`: does every quote of a shared answer stand on its page of the PDF it names?

Offline and in seconds. For each citation of the manifest:

1. the PDF: the file with the manifest's SHA-256, found in a folder of PDFs (`--pdfs DIR`, every
   PDF under it) or in a library (by the hash it keeps of each paper, the file's hash re-read).
   A file of the paper's name (or the library's copy of the paper) with another hash is "changed";
   none at all is "missing".
2. the quote: it must be the sentences the manifest lists for it, and each sentence must stand on
   the page. "Stands" is read on the letters and digits alone, in order: case, accents, spaces,
   punctuation, line-end hyphens and ligatures aside, since the library's text is the page's text
   re-spaced and de-hyphenated. A changed word, figure or letter fails. The page's text is read
   twice, with and without its raised or lowered small type (footnote marks, superscripts), which
   the library's text drops or keeps as a mark. A table row (its cells written with their column
   headers) stands where each of its cells is printed on the page. A scanned page is read from the
   library's stored OCR words, else recognised again here.
3. the page: page.html must be the page the manifest was written with (its SHA-256).
"""

from __future__ import annotations

import hashlib
import logging
import time
import unicodedata
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pymupdf

from ..errors import ResearchDeskError
from ..ingest.sources import file_hash
from ..library.store import Library
from ..pdf import ocr
from ..pdf.mupdf_guard import MUPDF
from ..pdf.tables.rows import row_cells
from ..units import SEP
from .bundle import read_bundle
from .manifest import Manifest, read_manifest
from .records import Finding, SharedCitation, SharedPaper, VerifyReport

log = logging.getLogger(__name__)

SMALL_TYPE = 0.8  # a span this much smaller than its line's largest is a raised or lowered mark


def verify_bundle(bundle: Path, *, library: Library | None = None, pdfs: Path | None = None) -> VerifyReport:
    """The findings for `bundle` against the PDFs in `pdfs` (a folder) or else `library`."""
    started = time.monotonic()
    try:
        data, page = read_bundle(bundle)
    except FileNotFoundError as exc:
        raise ResearchDeskError(f"There is no bundle at {bundle}.") from exc
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise ResearchDeskError(f"{bundle} is not a readable evidence bundle: {exc}.",
                                "Export one with: research-desk export --format bundle --out answer.zip") from exc
    m = read_manifest(data)
    report = VerifyReport(str(bundle), m.question)
    if page is None:
        report.problems.append("the bundle holds no page.html")
    elif hashlib.sha256(page).hexdigest() != m.page_sha256:
        report.problems.append("page.html was changed after export (its SHA-256 is not the manifest's)")
    if pdfs is not None and not pdfs.is_dir():
        raise ResearchDeskError(f"There is no folder {pdfs}.", "Give the folder that holds the cited PDFs with --pdfs.")
    finder = _Finder(m, library, pdfs)
    pages: dict[tuple[str, int], list[str]] = {}
    for c in m.citations:
        report.findings.append(_check(c, m.paper(c.paper_id), finder, pages))
    finder.close()
    report.seconds = time.monotonic() - started
    return report


def _check(c: SharedCitation, paper: SharedPaper | None, finder: "_Finder", pages: dict) -> Finding:
    def finding(ok: bool, message: str, skipped: bool = False) -> Finding:
        return Finding(c.number, c.paper_id, c.page, ok, message, skipped)

    if not c.quote.strip():
        return finding(True, f"no quote to check (the citation check marked it {c.status or 'unchecked'})", skipped=True)
    if _letters(c.quote) != "".join(_letters(s.text) for s in c.sentences):
        return finding(False, "the quote is not the sentences the manifest lists for it: it was changed")
    sha = paper.sha256 if paper is not None else ""
    doc, problem = finder.document(c.paper_id, sha)
    if doc is None:
        return finding(False, problem)
    if not 1 <= c.page <= doc.page_count:
        return finding(False, f"the PDF has {doc.page_count} pages; page {c.page} is not among them")
    key = (c.paper_id, c.page)
    if key not in pages:
        pages[key] = _page_streams(doc, c.page, finder.ocr_words(c.paper_id, c.page))
    streams = pages[key]
    if not any(streams):
        return finding(False, f"page {c.page} has no text to read (a scanned page, and OCR is not available here)")
    for s in c.sentences:
        if not _stands(s.text, streams):
            return finding(False, f"the quote does not stand on page {c.page}: “{_clip(s.text)}” is not printed there")
    where = f"page {c.page}" + (f" (printed {c.printed_page})" if c.printed_page else "")
    return finding(True, f"the quote stands on {where} of {finder.names.get(c.paper_id, 'the PDF')}")


def _stands(sentence: str, streams: list[str]) -> bool:
    cells = row_cells(sentence) if SEP in sentence else []
    if cells:  # a table row: each cell printed on the page
        return all(any(_letters(cell) in s for s in streams) for cell in cells if _letters(cell))
    want = _letters(sentence)
    return bool(want) and any(want in s for s in streams)


def _letters(text: str) -> str:
    """Letters and digits only, accents and case aside, ligatures unfolded."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if ch.isalnum() and not unicodedata.combining(ch)).casefold()


def _page_streams(doc: pymupdf.Document, page: int, ocr_words: list[tuple]) -> list[str]:
    """The page's letters, with and without its small raised or lowered type."""
    with MUPDF:
        pg = doc.load_page(page - 1)
        layout = pg.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES)
        full, plain = [], []
        for block in layout["blocks"]:
            for line in block.get("lines", []):
                spans = [s for s in line["spans"] if s["text"]]
                top = max((s["size"] for s in spans), default=0)
                for s in spans:
                    full.append(s["text"])
                    if s["size"] >= SMALL_TYPE * top and not s["flags"] & pymupdf.TEXT_FONT_SUPERSCRIPT:
                        plain.append(s["text"])
        if not "".join(full).strip():
            words = ocr_words or _recognised(pg)
            full = plain = [w[4] for w in words]
    return list(dict.fromkeys((_letters(" ".join(full)), _letters(" ".join(plain)))))


def _recognised(pg: pymupdf.Page) -> list[tuple]:
    if not ocr.available():
        return []
    return ocr.recognise_page(pg).word_tuples()


class _Finder:
    """The PDF of each paper, by its hash: opened once, closed at the end."""

    def __init__(self, m: Manifest, library: Library | None, pdfs: Path | None) -> None:
        self.m, self.library, self.folder = m, library, pdfs
        self.docs: dict[str, tuple[pymupdf.Document | None, str]] = {}
        self.paths: dict[str, Path] = {}
        self.names: dict[str, str] = {}
        self._hashes: dict[Path, str] | None = None

    def document(self, paper_id: str, sha: str) -> tuple[pymupdf.Document | None, str]:
        if paper_id not in self.docs:
            path, problem = self._find(paper_id, sha)
            doc = None
            if path is not None:
                try:
                    with MUPDF:
                        doc = pymupdf.open(str(path))
                except (RuntimeError, ValueError) as exc:  # MuPDF's FileDataError is a RuntimeError
                    path, problem = None, f"the PDF {path.name} cannot be read: {exc}"
            if path is not None:
                self.paths[paper_id], self.names[paper_id] = path, path.name
            self.docs[paper_id] = (doc, problem)
        return self.docs[paper_id]

    def ocr_words(self, paper_id: str, page: int) -> list[tuple]:
        path = self.paths.get(paper_id)
        return ocr.stored_words(path, page) if path is not None and self.library is not None else []

    def _find(self, paper_id: str, sha: str) -> tuple[Path | None, str]:
        if not sha:
            return None, "the bundle names no SHA-256 for this paper's PDF (the library no longer held it at export)"
        paper = self.m.paper(paper_id)
        name = paper.file_name if paper is not None else ""
        if self.folder is not None:
            return self._in_folder(paper_id, sha, name)
        if self.library is None:
            raise ResearchDeskError("No PDFs to verify against.", "Give a library (--library) or a folder of PDFs (--pdfs).")
        return self._in_library(paper_id, sha)

    def _in_folder(self, paper_id: str, sha: str, name: str) -> tuple[Path | None, str]:
        hashes = self._folder_hashes()
        for path, h in hashes.items():
            if h == sha:
                return path, ""
        namesakes = [p for p in hashes if p.name in (name, f"{paper_id}.pdf")]
        if namesakes:
            p = namesakes[0]
            return None, f"the PDF changed: {p.name} in {self.folder} has SHA-256 {hashes[p][:12]}…, the bundle's is {sha[:12]}…"
        return None, f"the PDF is missing: no PDF in {self.folder} has SHA-256 {sha[:12]}…" + (f" ({name})" if name else "")

    def _folder_hashes(self) -> dict[Path, str]:
        if self._hashes is None:
            assert self.folder is not None
            self._hashes = {p: file_hash(p) for p in sorted(_pdfs_under(self.folder))}
        return self._hashes

    def _in_library(self, paper_id: str, sha: str) -> tuple[Path | None, str]:
        assert self.library is not None
        held = self.library.find_by_hash(sha)
        if held is not None:
            path = self.library.pdf_path(held.id)
            if not path.exists():
                return None, f"the PDF is missing: the library lists {held.id} but holds no file for it"
            actual = file_hash(path)
            if actual == sha:
                return path, ""
            return None, f"the PDF changed: the library's copy {path.name} has SHA-256 {actual[:12]}…, the bundle's is {sha[:12]}…"
        same = self.library.get_paper(paper_id)
        if same is not None:
            return None, (f"the PDF changed: the library's {paper_id} has SHA-256 {same.content_hash[:12]}…, "
                          f"the bundle's is {sha[:12]}…")
        return None, f"the PDF is missing: no paper in the library {self.library.location} has SHA-256 {sha[:12]}…"

    def close(self) -> None:
        with MUPDF:
            for doc, _ in self.docs.values():
                if doc is not None:
                    doc.close()


def _pdfs_under(folder: Path) -> Iterable[Path]:
    return (p for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())


def _clip(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
