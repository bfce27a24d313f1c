"""PDF reading with PyMuPDF: open with clear errors, damaged pages, page labels, page text.

Layout analysis lives in `pdf_layout` (rows and fonts in `pdf_rows`; its names stay importable
from here), metadata readers in `metadata/`. Scanned pages get their text from `ocr`, which writes
it into the in-memory document as an invisible text layer before a page is read here, so nothing
below needs to know whether a page was scanned.
"""

from __future__ import annotations

import difflib
import logging
import re
import statistics
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pymupdf

from . import ocr, bombs as pdf_bombs
from .accents import tex_form
from ..errors import ImportFailure
from .mupdf_guard import MUPDF
from .ocr import readable_fraction as _readable_fraction
from . import layout as pdf_layout, word_spaces
from .layout import _body_size, _render  # noqa: F401 - re-exported
from .rows import TEXT_FLAGS, Block
from ..records import PageText, PaperMeta
from .superscripts import as_printed

log = logging.getLogger(__name__)

SEARCH_FLAGS = pymupdf.TEXTFLAGS_SEARCH & ~pymupdf.TEXT_PRESERVE_LIGATURES

NEEDS_OCR = "no usable text layer (scanned or unreadable text): needs OCR"
_REDOWNLOAD = "Download the file again or re-save it."
DAMAGED = "damaged PDF"  # how a paper kept in part is marked (status_reason starts with it)


# --------------------------------------------------------------------------- opening


def open_pdf(path: str | Path) -> pymupdf.Document:
    """Open a PDF for import, or raise ImportFailure naming the file and the reason."""
    path = Path(path)
    name = path.name

    def fail(reason: str, hint: str) -> ImportFailure:
        return ImportFailure(f"{name}: {reason}", hint)

    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(1024)
    except FileNotFoundError:
        raise fail("file not found", "Check the path and try again.") from None
    except OSError as exc:
        raise fail(f"cannot read the file ({exc.strerror})", "Check the file's permissions.") from None
    if size == 0:
        raise fail("empty file", "The file has no content; download or export it again.")
    # The PDF standard allows junk before the header, and readers accept it within 1 KB.
    if b"%PDF-" not in head:
        raise fail("not a PDF (no %PDF header)", "Only PDF files can be imported.")
    pymupdf.TOOLS.mupdf_warnings()  # start from an empty warning store: they name the cause
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for broken files
        raise fail(f"corrupt or unreadable PDF ({_open_failure(exc)})", _REDOWNLOAD) from None
    if doc.needs_pass:
        doc.close()
        raise fail(
            "encrypted: needs a password",
            "Remove the password (e.g. print to PDF, or `qpdf --decrypt`) and import again.",
        )
    try:
        # MuPDF reads the page tree lazily: a broken one (a /Count of billions, a cycle)
        # raises here, and must fail this file only, with its reason (bench/faults.py fuzz).
        page_count = doc.page_count
    except Exception as exc:  # noqa: BLE001 - MuPDF raises RuntimeError/FzError alike
        doc.close()
        raise fail(f"corrupt page tree ({_short(exc)})", _REDOWNLOAD) from None
    if page_count == 0:
        doc.close()
        raise fail("no pages (zero pages in the document)", _REDOWNLOAD)
    try:
        # Before any page is parsed: a page whose content inflates to gigabytes would hold
        # every pass over it (bench/faults.py fuzz); its content is emptied, in memory only.
        setattr(doc, _BOMBS, pdf_bombs.defuse(doc))
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for broken files
        doc.close()
        raise fail(f"corrupt or unreadable PDF ({_short(exc)})", _REDOWNLOAD) from None
    try:
        # MuPDF silently repairs damaged files when opening; a file too broken to repair
        # only shows up when a page is parsed, so parse the first one now.
        doc.load_page(0).get_text(flags=TEXT_FLAGS)
    except Exception as exc:  # noqa: BLE001
        doc.close()
        raise fail(f"corrupt or unreadable PDF ({_short(exc)})", _REDOWNLOAD) from None
    return doc


# The attribute of an open document naming its pages emptied as decompression bombs (open_pdf):
# kept on the document itself, as it lives exactly as long (Documents take no weak references).
_BOMBS = "_research_desk_bombs"


def _open_failure(exc: BaseException) -> str:
    """Why MuPDF could not open a file: its "Failed to open file '<path>'" names no cause, the
    warnings it gave while trying to repair the file do."""
    if not str(exc).startswith("Failed to open file"):
        return _short(exc)
    warnings = [w for w in pymupdf.TOOLS.mupdf_warnings().splitlines() if w.strip()]
    cause = next((w for w in warnings if "error" in w and "repair" not in w), warnings[0] if warnings else "")
    return f"{cause.strip()[:100]}; repair found nothing readable" if cause else "not readable, not repairable"


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:120]


def page_labels(doc: pymupdf.Document) -> list[str]:
    """The label printed on each page ("iv", "12") where the PDF defines labels, else str(n)."""
    n = doc.page_count
    if not doc.is_pdf or not doc.get_page_labels():
        return [str(i + 1) for i in range(n)]
    # Loading a page object is cheap (its content is not parsed): ~0.1 ms a page.
    return [doc.load_page(i).get_label() or str(i + 1) for i in range(n)]


# --------------------------------------------------------------------------- damaged files


@dataclass
class PageDamage:
    """Which pages of a damaged (truncated, mangled) file could not be read."""

    page_count: int
    lost: list[int] = field(default_factory=list)  # 1-based: nothing of the page could be read
    partial: list[int] = field(default_factory=list)  # read only in part (where the file breaks off)
    bombs: pdf_bombs.Oversized = field(default_factory=pdf_bombs.Oversized)  # in lost/partial too

    @property
    def damaged(self) -> bool:
        return bool(self.lost or self.partial)

    @property
    def readable(self) -> int:
        return self.page_count - len(self.lost)

    def reason(self) -> str:
        """One line for the paper's status: which pages were lost, which were kept."""
        if not self.damaged:
            return ""
        parts, kinds = [], []
        broken = [p for p in self.lost if p not in self.bombs.emptied]
        broken_part = [p for p in self.partial if p not in self.bombs.forms]
        if broken or broken_part:
            kinds.append("truncated or broken")
        if broken:
            parts.append(f"{_page_ranges(broken)} of {self.page_count} could not be read")
        if broken_part:
            parts.append(f"{_page_ranges(broken_part)} only in part")
        if self.bombs:
            kinds.append("decompression bomb")
            cap = f"{self.bombs.cap >> 20} MB"
        if self.bombs.emptied:
            parts.append(f"{_page_ranges(self.bombs.emptied)} of {self.page_count} skipped, "
                         f"{'its' if len(self.bombs.emptied) == 1 else 'their'} content inflates past {cap}")
        if self.bombs.forms:
            parts.append(f"{_page_ranges(self.bombs.forms)} kept without a drawing that inflates past {cap}")
        kept = [p for p in range(1, self.page_count + 1) if p not in self.lost]
        saved = f"{_page_ranges(kept)} imported" if kept else "nothing could be imported"
        return f"{DAMAGED} ({'; '.join(kinds)}): {'; '.join(parts)}; {saved}"


def _page_ranges(pages: Iterable[int]) -> str:
    """[1, 2, 3, 7] → "pages 1–3, 7"."""
    pages = sorted(pages)
    runs: list[list[int]] = []
    for p in pages:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    text = ", ".join(f"{a}–{b}" if b > a else str(a) for a, b in runs)
    return ("page " if len(pages) == 1 else "pages ") + text


def check_pages(doc: pymupdf.Document) -> PageDamage:
    """Parse every page of a file MuPDF had to repair and say which pages are lost.

    A file that opened without repair is taken as whole (checking costs a text pass);
    a page that raises while being read later is still caught by `iter_pages`.
    MuPDF's warnings are process-wide, so only files that needed repair are judged by them.
    """
    bombs = getattr(doc, _BOMBS, None) or pdf_bombs.Oversized()
    damage = PageDamage(doc.page_count, list(bombs.emptied), list(bombs.forms), bombs)
    if not getattr(doc, "is_repaired", False):
        return damage
    pymupdf.TOOLS.mupdf_warnings()  # start from an empty warning store
    for pno in range(doc.page_count):
        if pno + 1 in bombs.emptied or pno + 1 in bombs.forms:
            continue  # already judged: its content was emptied
        try:
            text = doc.load_page(pno).get_text(flags=TEXT_FLAGS)
        except Exception as exc:  # noqa: BLE001 - a page MuPDF cannot parse is a lost page
            log.info("%s: page %d unreadable: %s", doc.name, pno + 1, _short(exc))
            damage.lost.append(pno + 1)
            continue
        warnings = pymupdf.TOOLS.mupdf_warnings()
        hurt = any(P["damage_warning"].search(line) for line in warnings.splitlines())
        if not text.strip() and warnings.strip():
            damage.lost.append(pno + 1)
        elif hurt and "page tree" not in warnings:
            damage.partial.append(pno + 1)
    return damage


# --------------------------------------------------------------------------- text layer


def has_text_layer(doc: pymupdf.Document, sample_pages: int = 6, skip: Iterable[int] = ()) -> bool:
    """True when sampled pages carry real, readable text (not just scanned images).

    False means the importer should OCR the document (or report NEEDS_OCR where it cannot).
    `skip`: 1-based pages not to sample (the lost pages of a damaged file).
    """
    skipped = set(skip)
    pages = [p for p in range(doc.page_count) if p + 1 not in skipped]
    if not pages:
        return False
    n = len(pages)
    picks = sorted({pages[round(i * (n - 1) / max(1, sample_pages - 1))] for i in range(min(n, sample_pages))})
    with_text = 0
    readable = []
    for pno in picks:
        text = doc.load_page(pno).get_text(flags=TEXT_FLAGS)
        if sum(c.isalnum() for c in text) >= 25:
            with_text += 1
            readable.append(_readable_fraction(text))
    if with_text * 2 < len(picks):
        return False
    return statistics.median(readable) >= 0.8


# --------------------------------------------------------------------------- pages


def page_markdown(page: pymupdf.Page, body_size: float, words: Counter | None = None) -> str:
    """Markdown for one page (pdf_layout), with author lines under a title kept out of headings;
    `words`: the document's spellings, for words broken at a line's end (line_breaks.py)."""
    return pdf_layout.page_markdown(page, body_size, _name_parts, words)


def _classified_blocks(page: pymupdf.Page, body_size: float) -> list[Block]:
    return pdf_layout._classified_blocks(page, body_size, _name_parts)


def iter_pages(doc: pymupdf.Document, *, skip: Iterable[int] = (),
               before: Callable[[int], None] | None = None) -> Iterator[PageText]:
    """Yield each page's markdown in turn; only one page's text is held at a time.

    `skip`: 1-based pages known to be lost (they keep their number, with no text).
    `before(pno)`: called with the 0-based page number before a page is read (OCR hook).
    """
    skipped = set(skip)
    with MUPDF:  # page by page, so that another thread's MuPDF work can run between pages
        body = _body_size(doc)
        labels = page_labels(doc)
        words = word_spaces.spellings(doc)  # read with the document's words once (word_spaces.py)
    for pno in range(doc.page_count):
        md = ""
        if pno + 1 not in skipped:
            with MUPDF:
                if before is not None:
                    before(pno)
                try:
                    md = page_markdown(doc.load_page(pno), body, words)
                except Exception as exc:  # noqa: BLE001 - one damaged page must not lose the paper
                    log.warning("page %d could not be read: %s", pno + 1, exc)
        yield PageText(page=pno + 1, label=labels[pno], markdown=md)


LATE_START_STEP, LATE_START_MAX = 3, 45  # where else a quote's part on the page may start (words)
_PATTERNS: dict[str, str] = {
    # What MuPDF says while parsing a page whose objects were cut off or mangled.
    "damage_warning": r"(?i)premature end|length incorrect|not a stream|cannot find object|object out of range|syntax error|"
                      r"missing 'endobj'|unexpected eof|cannot load|non-page object|broken|corrupt|invalid",
    "md_marks": r"(^|\n)#+ |```|\\(?=#)",
    "compound": r"(?<=[A-Za-z])-(?=[A-Za-z])",
    "word_edge": r"^\W+|\W+$",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def locate_text(page: pymupdf.Page, text: str, max_words: int = 12,
                ocr_words: list[tuple] | None = None) -> list[pymupdf.Rect]:
    """Rectangles of `text` on `page`, for highlighting a cited passage.

    With a text layer: MuPDF's search for the first `max_words` words without markdown
    markers (it ignores line breaks and line-end hyphens, as the markdown was joined).
    An OCR'd page has no text in the PDF (the library keeps the file as imported); its
    words come from the stored OCR boxes (`ocr.stored_words`, found from the library PDF's
    path, or passed as `ocr_words`), and the whole passage is aligned with them.
    """
    words = as_printed(P["md_marks"].sub(" ", text)).split()  # drop markdown marks and "10^"'s "^"
    if ocr_words is None:
        for n in (max_words, max_words // 2, 4):
            snippet = " ".join(words[:n])
            if snippet and (hits := _search(page, snippet)):
                return hits
        # A sentence a page break cut in two begins on the page before (research/evidence/page_breaks.py):
        # its part on this page starts a few words in.
        for start in range(LATE_START_STEP, min(len(words) - 3, LATE_START_MAX), LATE_START_STEP):
            if hits := _search(page, " ".join(words[start : start + max_words // 2])):
                return hits
        ocr_words = ocr.stored_words(page.parent.name, page.number + 1) if page.parent.name else []
    return _align_words(ocr_words, words) if ocr_words else []


def _search(page: pymupdf.Page, snippet: str) -> list[pymupdf.Rect]:
    """MuPDF's hits for `snippet` as stored, else as the page may print it: a compound broken at a
    line's end is one word to MuPDF's search ("velocity-\\ndependent"; the stored text keeps its
    hyphen, line_breaks.py), a pdfTeX page holds "f¨ur" where the stored text reads "für", and a page
    whose words hold spaces MuPDF reads ("marro w-deriv ed", word_spaces.py) is searched as it reads."""
    forms = (snippet, P["compound"].sub("", snippet), tex_form(snippet), word_spaces.as_read(page, snippet))
    for form in dict.fromkeys(f for f in forms if f):  # each once
        if hits := page.search_for(form, flags=SEARCH_FLAGS):
            return hits
    return []


def _norm_word(word: str) -> str:
    return P["word_edge"].sub("", unicodedata.normalize("NFKC", word)).lower()


def _align_words(page_words: list[tuple], wanted: list[str], min_run: int = 3) -> list[pymupdf.Rect]:
    """Boxes of the page words (get_text("words") tuples) that spell the passage: runs of
    `min_run`+ words matched in order (OCR misreads a word here and there), the gaps between
    runs bridged, one rectangle per line."""
    seq = [_norm_word(w[4]) for w in page_words]
    target = [t for t in (_norm_word(w) for w in wanted) if t]
    if not seq or not target:
        return []
    matcher = difflib.SequenceMatcher(None, seq, target, autojunk=False)
    runs = [b for b in matcher.get_matching_blocks() if b.size >= min(min_run, len(target))]
    if not runs:
        return []
    matched = [i for b in runs for i in range(b.a, b.a + b.size)]
    span = range(matched[0], matched[-1] + 1)
    # Bridge the gaps only while they are small: runs far apart are chance matches.
    picked = span if len(span) <= 1.5 * len(matched) + 8 else matched
    rects: dict[tuple[int, int], pymupdf.Rect] = {}
    for w in (page_words[i] for i in picked):
        key = (w[5], w[6])
        rects[key] = rects[key] | pymupdf.Rect(w[:4]) if key in rects else pymupdf.Rect(w[:4])
    return list(rects.values())


# --------------------------------------------------------------------------- metadata

# The metadata readers live in app/core/pdf/metadata/; these names stay importable from here.


def extract_meta(doc: pymupdf.Document, filename: str) -> PaperMeta:
    """Title, authors, date, abstract, DOI, arXiv ID and venue (see app.core.pdf.metadata)."""
    from .metadata import extract_meta as _extract  # deferred: metadata imports this module

    return _extract(doc, filename)


def _name_parts(piece: str) -> list[str] | None:
    """The names leading a line, or None: used above to keep author lines out of headings."""
    from .metadata.authors import names_in  # deferred: metadata imports this module

    return names_in(piece)
