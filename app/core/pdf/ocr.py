"""Offline OCR of scanned pages, page-true and with word positions.

The engine is RapidOCR (PP-OCR models run by onnxruntime). Its detection, direction and
recognition models ship inside the `rapidocr` wheel; we pass their paths explicitly so that
no first-use download can ever be attempted (RapidOCR downloads a model only when the file
it resolves is missing, and an explicit `model_path` skips that resolution entirely).

What OCR produces, and where it goes:

- an `OcrPage` per recognised page: text lines in reading order, each with its words and their
  boxes in PDF points of the unrotated page (the same space as PyMuPDF's `get_text("words")`);
- during import the words are written as an invisible text layer into the *in-memory*
  document (`add_text_layer`), so every text path that reads a `pymupdf.Document` (metadata,
  page markdown, chunking) works on a scan unchanged;
- the library keeps the words beside the extracted text, `text/<paper_id>.ocr.json`, and the
  imported PDF stays the byte-identical copy of the user's file (DESIGN: "copied, never
  modified"; the content hash, "open in system viewer" and re-import dedupe all rely on that).
  Highlighting a citation on an OCR'd page reads the stored word boxes (`stored_words`), so the
  rectangles are the OCR engine's own boxes, not a font's approximation of them.

Long module: engine, page choice, recognition, the in-memory text layer and the stored words
are one pipeline over the same records (OcrPage/OcrLine/OcrWord); split, each part would
import all the others.
"""

from __future__ import annotations

import json
import logging
import statistics
import threading
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

import pymupdf

from ..library.atomic_files import atomic_write_text
from ..library.layout import LibraryLayout

log = logging.getLogger(__name__)

DEFAULT_DPI = 200  # a typical scan resolution; recognition time hardly depends on it
LAYER_VERSION = 1
_MIN_TEXT_CHARS = 25  # alphanumerics below which a page counts as having no text layer
_MIN_READABLE = 0.8  # share of sensible characters below which a text layer is symbols


@dataclass
class OcrWord:
    text: str
    bbox: tuple[float, float, float, float]  # PDF points, unrotated page space


@dataclass
class OcrLine:
    text: str
    bbox: tuple[float, float, float, float]
    words: list[OcrWord] = field(default_factory=list)
    score: float = 1.0
    # The printed line's height across its baseline (points; 0 = unknown): a skewed scan's
    # axis-aligned box is taller than its type, so sizes are read from this.
    height: float = 0.0
    bold: bool = False  # strokes clearly heavier than the page's usual for their size


@dataclass
class OcrPage:
    page: int  # 1-based
    lines: list[OcrLine] = field(default_factory=list)
    dpi: int = DEFAULT_DPI

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def word_tuples(self) -> list[tuple]:
        """Words as PyMuPDF's `get_text("words")` tuples: (x0, y0, x1, y1, word, block, line, n)."""
        out = []
        for ln, line in enumerate(self.lines):
            for wn, w in enumerate(line.words):
                out.append((*w.bbox, w.text, 0, ln, wn))
        return out


# --------------------------------------------------------------------------- engine


def unavailable_reason() -> str:
    """Why OCR cannot run here ('' when it can): the engine or its runtime is not importable."""
    return _probe()


@lru_cache(maxsize=1)
def _probe() -> str:
    try:
        import onnxruntime  # noqa: F401
        import rapidocr  # noqa: F401
    except ImportError as exc:
        return f"OCR engine not installed ({exc.name or exc})"
    missing = [p.name for p in _model_paths().values() if not p.is_file()]
    if missing:
        return f"OCR models missing from the rapidocr package ({', '.join(missing)})"
    return ""


def available() -> bool:
    return not unavailable_reason()


def _model_paths() -> dict[str, Path]:
    import rapidocr

    models = Path(rapidocr.__file__).parent / "models"
    return {
        "Det": models / "PP-OCRv6_det_small.onnx",
        "Rec": models / "PP-OCRv6_rec_small.onnx",
        "Cls": models / "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
    }


_engine_lock = threading.Lock()
_engine_obj: Any = None


def _engine() -> Any:
    """One RapidOCR instance per process (loading the models takes ~3 s), built on first use."""
    global _engine_obj
    with _engine_lock:
        if _engine_obj is None:
            from rapidocr import RapidOCR

            params: dict[str, Any] = {"Global.log_level": "warning"}
            for stage, path in _model_paths().items():
                params[f"{stage}.model_path"] = str(path)
            _engine_obj = RapidOCR(params=params)
        return _engine_obj


def engine_name() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"rapidocr {version('rapidocr')} (PP-OCRv6 small)"
    except PackageNotFoundError:
        return "rapidocr (PP-OCRv6 small)"


# --------------------------------------------------------------------------- which pages


def readable_fraction(text: str) -> float:
    """Share of non-space characters that are printable ASCII or letters of any script.

    Catches text layers that exist but decode to nonsense: old dvips Type3 bitmap fonts that
    PyMuPDF maps to dingbats ("❉♦✉❣❧❛s" for "Douglas"), and subset fonts without a map to
    Unicode, whose glyph numbers come out as control characters ("\x0b\x0c\x04" for "the": 21
    of the 23 pages of a working paper in the mixed corpus, taken for text until the control
    characters stopped counting as ASCII).
    """
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    ok = sum(1 for c in chars if (c.isascii() and c.isprintable()) or c.isalpha())
    return ok / len(chars)


def page_needs_ocr(page: pymupdf.Page, text: str | None = None) -> bool:
    """True for a scanned page (images, hardly any text) or one whose text decodes to symbols."""
    if text is None:
        text = page.get_text()
    if sum(c.isalnum() for c in text) >= _MIN_TEXT_CHARS:
        return readable_fraction(text) < _MIN_READABLE
    # Hardly any text: worth reading if a scan's image is there, or if what little text there
    # is decodes to symbols (Type3 bitmap fonts); a page number alone on a blank page is not.
    if text.strip() and readable_fraction(text) < _MIN_READABLE:
        return True
    return bool(page.get_images(full=False))


# --------------------------------------------------------------------------- recognition


def recognise_page(page: pymupdf.Page, dpi: int = DEFAULT_DPI) -> OcrPage:
    """OCR one page: render it at `dpi` and read lines and words with their boxes."""
    import numpy as np

    zoom = dpi / 72.0
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    result = _engine()(np.ascontiguousarray(img[:, :, ::-1]), return_word_box=True)  # engine wants BGR
    ink = img.min(axis=2) < 128
    # Pixels of the page as displayed → points of the unrotated page.
    to_page = pymupdf.Matrix(1 / zoom, 1 / zoom) * page.derotation_matrix
    lines: list[OcrLine] = []
    strokes: list[float] = []
    txts = result.txts or ()
    words_per_line = result.word_results if len(result.word_results or ()) == len(txts) else [None] * len(txts)
    for box, text, score, words in zip(result.boxes if result.boxes is not None else [], txts, result.scores or (), words_per_line):
        text = " ".join(str(text).split())
        if not text:
            continue
        bbox = _to_rect(box, to_page)
        height = round(_quad_height(box) / zoom, 2)
        line = OcrLine(text, bbox, _line_words(text, bbox, words, to_page), float(score), height)
        strokes.append(_stroke_ratio(ink, box))
        lines.append(line)
    _mark_bold(lines, strokes)
    return OcrPage(page.number + 1, _reading_order(lines, page), dpi)


def _quad_height(quad: Any) -> float:
    """Height of a detected line's quadrilateral (top-left, top-right, bottom-right, bottom-left)
    measured along its sides, so that a slant does not add to it."""
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = [(float(p[0]), float(p[1])) for p in quad[:4]]
    return (((dx - ax) ** 2 + (dy - ay) ** 2) ** 0.5 + ((cx - bx) ** 2 + (cy - by) ** 2) ** 0.5) / 2


def _stroke_ratio(ink: Any, quad: Any) -> float:
    """Mean horizontal run of ink in the line's box over the line's height: about the stroke
    width per unit of type size, which bold type has clearly larger (0 when nothing is there)."""
    xs = [int(round(float(p[0]))) for p in quad]
    ys = [int(round(float(p[1]))) for p in quad]
    box = ink[max(0, min(ys)):max(ys), max(0, min(xs)):max(xs)]
    height = _quad_height(quad)
    if box.size == 0 or height <= 0:
        return 0.0
    starts = int((box[:, 1:] & ~box[:, :-1]).sum() + box[:, 0].sum())
    return float(box.sum()) / starts / height if starts else 0.0


_BOLD_RATIO = 1.35  # stroke ratio over the page's median that reads as bold (regular type varies ~±15 %)


def _mark_bold(lines: list[OcrLine], strokes: list[float]) -> None:
    known = [r for r in strokes if r > 0]
    if len(known) < 3:
        return  # too few lines to know the page's usual stroke
    usual = statistics.median(known)
    for line, ratio in zip(lines, strokes):
        line.bold = ratio >= _BOLD_RATIO * usual


def _to_rect(quad: Any, matrix: pymupdf.Matrix) -> tuple[float, float, float, float]:
    xs = [float(p[0]) for p in quad]
    ys = [float(p[1]) for p in quad]
    r = pymupdf.Rect(min(xs), min(ys), max(xs), max(ys)) * matrix
    r.normalize()
    return (round(r.x0, 2), round(r.y0, 2), round(r.x1, 2), round(r.y1, 2))


def _line_words(text: str, bbox: tuple, words: Any, matrix: pymupdf.Matrix) -> list[OcrWord]:
    """The engine's word boxes where it gave them for this line's words, else boxes shared
    out by character count (the line's box is exact; a word's is then close)."""
    if words:
        out = [OcrWord(str(w[0]).strip(), _to_rect(w[2], matrix)) for w in words if w[2] is not None and str(w[0]).strip()]
        if out and "".join(w.text for w in out).replace(" ", "") == text.replace(" ", ""):
            return out
    tokens = text.split()
    total = sum(len(t) for t in tokens) + max(0, len(tokens) - 1)
    x0, y0, x1, y1 = bbox
    step = (x1 - x0) / max(1, total)
    out, pos = [], 0
    for t in tokens:
        out.append(OcrWord(t, (round(x0 + pos * step, 2), y0, round(x0 + (pos + len(t)) * step, 2), y1)))
        pos += len(t) + 1
    return out


def _reading_order(lines: list[OcrLine], page: pymupdf.Page) -> list[OcrLine]:
    """Top to bottom as the page is shown; where it is set in two columns, the left column
    before the right.

    A line that crosses the middle of the page (title, full-width figure caption) ends a
    stretch of columns; within a stretch the left column's lines come first.
    """
    width = page.rect.width
    mid, slack = width / 2, 0.02 * width
    shown = sorted(((_displayed(page, ln.bbox), ln) for ln in lines), key=lambda t: (t[0].y0, t[0].x0))
    out: list[OcrLine] = []
    left: list[OcrLine] = []
    right: list[OcrLine] = []
    for rect, ln in shown:
        if rect.x1 <= mid + slack:
            left.append(ln)
        elif rect.x0 >= mid - slack:
            right.append(ln)
        else:
            out.extend(left + right)
            left, right = [], []
            out.append(ln)
    out.extend(left + right)
    return out


# --------------------------------------------------------------------------- text layer


@lru_cache(maxsize=2)
def _layer_font(bold: bool = False) -> pymupdf.Font:
    # Times is close to the widths of typical journal type, so a line inserted at the OCR
    # line's size runs about as long as the printed one. Glyph coverage does not matter:
    # the text is invisible and PyMuPDF maps every character back through ToUnicode. Bold
    # lines are written in Times-Bold so that layout analysis sees the weight the scan shows.
    return pymupdf.Font("tibo" if bold else "tiro")


def _line_sizes(shown: list[pymupdf.Rect], heights: list[float], em: float,
                widths: list[float] | None = None) -> list[float]:
    """A font size per line: one body size for ordinary lines, and for lines set clearly larger
    (a title) one size per run of such lines stacked closely together.

    A single line's box height depends on its letters (descenders, capitals), so a title's
    lines would get different sizes and read as different styles; the run's median does not.
    """
    median = statistics.median(heights)
    body = median / em
    if widths:
        # `widths`: each line's length at size 1. Where the boxes are taller than the type
        # (a skewed scan), the height overstates the size and lines would run past their
        # boxes (and off the page); the size at which ordinary lines fill their boxes does not.
        fits = [r.width / w for r, w, h in zip(shown, widths, heights) if w > 0 and h <= 1.25 * median]
        if fits:
            body = min(body, statistics.median(fits))
    body = round(2 * body) / 2  # half points: steady across pages
    sizes = [body] * len(shown)
    runs: list[list[int]] = []
    for i in sorted(range(len(shown)), key=lambda k: (shown[k].y0, shown[k].x0)):
        if heights[i] <= 1.25 * median:
            continue
        for run in runs:
            j = run[-1]
            near = shown[i].y0 - shown[j].y1 < 0.6 * max(heights[i], heights[j])
            similar = min(heights[i], heights[j]) >= 0.7 * max(heights[i], heights[j])
            overlap = min(shown[i].x1, shown[j].x1) > max(shown[i].x0, shown[j].x0)
            if near and similar and overlap:
                run.append(i)
                break
        else:
            runs.append([i])
    for run in runs:
        size = round(2 * statistics.median(heights[k] for k in run) / em) / 2
        for k in run:
            sizes[k] = max(size, body)
    return sizes


def add_text_layer(page: pymupdf.Page, ocr_page: OcrPage) -> None:
    """Write the OCR'd lines into `page` as invisible text (in memory; never saved),
    in place of whatever text layer the page had.

    Ordinary lines get one font size (the page's median line height) so that layout analysis
    sees a body size; larger lines keep their printed size (`_line_sizes`) and bold lines are
    written bold, as on a born-digital page.
    """
    if page.get_text().strip():
        # A text layer that decodes to symbols would sit beside the OCR text: take it out of
        # the in-memory page (images and drawings stay; the file on disk is not touched).
        page.add_redact_annot(page.rect)
        page.apply_redactions(images=pymupdf.PDF_REDACT_IMAGE_NONE, graphics=pymupdf.PDF_REDACT_LINE_ART_NONE)
    if not ocr_page.lines:
        return
    regular = _layer_font()
    descent = regular.descender
    em = max(0.5, regular.ascender - descent)
    # The writer works in the page as displayed; the stored boxes are of the unrotated page.
    shown = [_displayed(page, ln.bbox) for ln in ocr_page.lines]
    heights = [ln.height if ln.height > 0 else rect.height for ln, rect in zip(ocr_page.lines, shown)]
    placed: list[tuple[str, pymupdf.Point, float, pymupdf.Font]] = []
    widths = [_layer_font(ln.bold).text_length(ln.text, fontsize=1) for ln in ocr_page.lines]
    for ln, rect, size in zip(ocr_page.lines, shown, _line_sizes(shown, heights, em, widths)):
        font = _layer_font(ln.bold)
        natural = font.text_length(ln.text, fontsize=size)
        if natural > rect.width * 1.05 and natural > 0:
            size = max(size * 0.7, size * rect.width / natural)  # keep a line inside its box
        placed.append((ln.text, pymupdf.Point(rect.x0, rect.y1 + descent * size), size, font))
    if page.rotation:
        _write_rotated(page, placed)
        return
    shift = _writer_shift(page)
    writer = pymupdf.TextWriter(page.rect)
    for text, start, size, font in placed:
        try:
            writer.append(start + shift, text, font=font, fontsize=size)
        except Exception:  # noqa: BLE001 - one odd line must not lose the page
            log.warning("page %d: OCR line could not be written to the text layer: %r", ocr_page.page, text[:60])
    writer.write_text(page, render_mode=3)


def _writer_shift(page: pymupdf.Page) -> pymupdf.Point:
    """What to add to a point so that TextWriter puts text there on this page.

    On a page whose CropBox does not sit at the MediaBox's corner, PyMuPDF's TextWriter places
    text offset from where it is asked to (a scan cropped to its paper lost its title above the
    page top). The offset is measured once per geometry on a blank page of the same boxes.
    """
    if page.cropbox == page.mediabox:
        return pymupdf.Point(0, 0)
    return _measured_shift(tuple(page.mediabox), tuple(page.cropbox))


@lru_cache(maxsize=16)
def _measured_shift(mediabox: tuple, cropbox: tuple) -> pymupdf.Point:
    scratch = pymupdf.open()
    try:
        sp = scratch.new_page(width=mediabox[2] - mediabox[0], height=mediabox[3] - mediabox[1])
        sp.set_mediabox(pymupdf.Rect(mediabox))
        sp.set_cropbox(pymupdf.Rect(cropbox))
        # Probes down the page: whichever lands on the page tells the offset.
        probes = [pymupdf.Point(sp.rect.width / 2, sp.rect.height * f / 8) for f in range(1, 8)]
        writer = pymupdf.TextWriter(sp.rect)
        for n, at in enumerate(probes):
            writer.append(at, f"probe{n}", font=_layer_font(), fontsize=4)
        writer.write_text(sp)
        for block in sp.get_text("dict")["blocks"]:
            for ln in block.get("lines", ()):
                for span in ln["spans"]:
                    text = span["text"].strip()
                    if text.startswith("probe") and text[5:].isdigit() and int(text[5:]) < len(probes):
                        return probes[int(text[5:])] - pymupdf.Point(span["origin"])
        log.warning("text layer offset on a cropped page could not be measured; written unshifted")
        return pymupdf.Point(0, 0)
    finally:
        scratch.close()


def _write_rotated(page: pymupdf.Page, placed: list[tuple[str, pymupdf.Point, float, pymupdf.Font]]) -> None:
    """Lines upright on a page shown rotated (/Rotate): TextWriter writes in unrotated space,
    so each line is written there from its start point, turned to run the way it reads."""
    rotation = page.rotation
    derotate = page.derotation_matrix
    turn = ~pymupdf.Matrix(derotate.a, derotate.b, derotate.c, derotate.d, 0, 0)
    page.set_rotation(0)  # in memory only; restored below
    try:
        for text, start, size, font in placed:
            origin = start * derotate
            writer = pymupdf.TextWriter(page.rect)
            writer.append(origin, text, font=font, fontsize=size)
            writer.write_text(page, render_mode=3, morph=(origin, turn))
    finally:
        page.set_rotation(rotation)


def _displayed(page: pymupdf.Page, bbox: tuple) -> pymupdf.Rect:
    rect = pymupdf.Rect(bbox)
    if page.rotation:
        rect = rect * page.rotation_matrix
        rect.normalize()
    return rect


# --------------------------------------------------------------------------- stored layer


def layer_path(layout: LibraryLayout, paper_id: str) -> Path:
    """Where a paper's OCR words live: beside its extracted text, `text/<paper_id>.ocr.json`."""
    return layout.text_path(paper_id).with_name(f"{paper_id}.ocr.json")


def layer_path_for_pdf(pdf_path: str | Path) -> Path:
    """The OCR file of a library PDF (`<root>/pdfs/<id>.pdf` → `<root>/text/<id>.ocr.json`)."""
    pdf_path = Path(pdf_path)
    return layer_path(LibraryLayout(pdf_path.parent.parent), pdf_path.stem)


def save_layer(path: Path, pages: dict[int, OcrPage]) -> None:
    data = {
        "version": LAYER_VERSION,
        "engine": engine_name(),
        "coordinates": "PDF points, unrotated page, origin top-left",
        "pages": [asdict(pages[k]) for k in sorted(pages)],
    }
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def load_layer(path: Path) -> dict[int, OcrPage]:
    """The stored OCR pages, or {} when there is no (readable) file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s: OCR words unreadable, ignored (%s)", path, exc)
        return {}
    if data.get("version") != LAYER_VERSION:
        return {}
    pages: dict[int, OcrPage] = {}
    for p in data.get("pages", []):
        lines = [
            OcrLine(ln["text"], tuple(ln["bbox"]), [OcrWord(w["text"], tuple(w["bbox"])) for w in ln["words"]],
                    ln.get("score", 1.0), ln.get("height", 0.0), ln.get("bold", False))
            for ln in p["lines"]
        ]
        pages[int(p["page"])] = OcrPage(int(p["page"]), lines, int(p.get("dpi", DEFAULT_DPI)))
    return pages


def stored_words(pdf_path: str | Path, page: int) -> list[tuple]:
    """OCR word tuples of 1-based `page` of a library PDF, [] when the page was not OCR'd."""
    stored = load_layer(layer_path_for_pdf(pdf_path)).get(page)
    return stored.word_tuples() if stored else []


# --------------------------------------------------------------------------- per document


class PageOcr:
    """OCR for the pages of one document that need it, each page judged and read once, when first needed.

    `skip`: 1-based pages not to touch (lost pages of a damaged file).
    `stored`: pages recognised by an earlier, interrupted import; reused instead of read again.
    `before_page(pno)`: called before a page is recognised (progress; may raise to cancel).
    """

    def __init__(self, doc: pymupdf.Document, *, skip: Iterable[int] = (), dpi: int = DEFAULT_DPI,
                 stored: dict[int, OcrPage] | None = None,
                 before_page: Callable[[int], None] | None = None, text_layer: bool = False) -> None:
        self.doc = doc
        # In a document with a good text layer only a page with an image can be a scan (symbol
        # fonts spoil whole documents, not single pages): the image test costs no text pass.
        self.text_layer = text_layer
        self.skip = set(skip)
        self.dpi = dpi
        self.stored = stored or {}
        self.before_page = before_page or (lambda pno: None)
        self.checked: set[int] = set()
        self.done: dict[int, OcrPage] = {}  # 1-based page → result
        self.failed: list[int] = []

    def _needs(self, page: pymupdf.Page) -> bool:
        """The engine reads `page`: a scan, or text that decodes to symbols."""
        if self.text_layer and not page.get_images(full=False):
            return False
        return page_needs_ocr(page)

    def reads_a_page(self) -> bool:
        """Some page not skipped is one `ensure` would have the engine read (not stored). Every page
        is looked at (a few ms each): a paper whose first page has text can have its others scanned
        or in unmapped glyphs (21 of 23 pages of one working paper)."""
        return any(pno + 1 not in self.skip and pno + 1 not in self.stored and self._needs(self.doc.load_page(pno))
                   for pno in range(self.doc.page_count))

    def ensure(self, pno: int) -> None:
        """Give 0-based page `pno` a text layer from OCR if it is a scan (no-op otherwise)."""
        if pno in self.checked or pno + 1 in self.skip:
            return
        self.checked.add(pno)
        page = self.doc.load_page(pno)
        result = self.stored.get(pno + 1)
        if result is None:
            if not self._needs(page):
                return
            self.before_page(pno)
            try:
                result = recognise_page(page, self.dpi)
            except Exception as exc:  # noqa: BLE001 - a page the engine cannot read stays empty
                log.warning("%s: page %d: OCR failed: %s", self.doc.name, pno + 1, exc)
                self.failed.append(pno + 1)
                return
        self.done[pno + 1] = result
        add_text_layer(page, result)
