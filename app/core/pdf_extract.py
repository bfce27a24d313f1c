"""PDF reading with PyMuPDF: open with clear errors, page labels, metadata, page markdown.

The page markdown is deliberately close to PyMuPDF's own plain text (same characters,
same reading order); we only add "#" heading markers and code fences, join a paragraph's
lines into one line and remove line-break hyphens. That keeps every chunk findable on its
page again (`locate_text` / `page.search_for` with `SEARCH_FLAGS`) for highlighting.

Conventions of the markdown that `chunking` relies on:
- blocks are separated by a blank line;
- a prose paragraph is a single line;
- a heading is one line starting with "#";
- code is fenced with ``` and keeps its lines; equations and table-like blocks keep their
  line breaks, so "a block with inner newlines" means "do not split at sentences".
"""

from __future__ import annotations

import logging
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import pymupdf

from .errors import ImportFailure
from .records import PageText, PaperMeta

log = logging.getLogger(__name__)

# Plain-text flags without TEXT_PRESERVE_LIGATURES: "ﬁ" becomes "fi", so embeddings and
# full-text search see ordinary words. Highlighting must search with the same choice.
TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
SEARCH_FLAGS = pymupdf.TEXTFLAGS_SEARCH & ~pymupdf.TEXT_PRESERVE_LIGATURES

NEEDS_OCR = "no usable text layer (scanned or unreadable text): needs OCR"

_MONO_FONT = re.compile(
    r"mono|courier|typewriter|cmtt|cmsltt|cmitt|lmtt|sftt|txtt|nimbusmon|inconsolata|consol|menlo",
    re.I,
)
_MATH_FONT = re.compile(r"^(cmmi|cmsy|cmex|cmbsy|msbm|msam|eufm|rsfs|stmary|wasy)|math|symbol", re.I)
# Control characters, and private-use code points (big delimiters of TeX math fonts come
# out as U+F8xx): noise for embeddings and search, never needed to find text on a page.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ue000-\uf8ff\ufffe\uffff]")


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
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for broken files
        raise fail(f"corrupt or unreadable PDF ({_short(exc)})", "Download the file again or re-save it.") from None
    if doc.needs_pass:
        doc.close()
        raise fail(
            "encrypted: needs a password",
            "Remove the password (e.g. print to PDF, or `qpdf --decrypt`) and import again.",
        )
    if doc.page_count == 0:
        doc.close()
        raise fail("no pages (zero pages in the document)", "Download the file again or re-save it.")
    try:
        # MuPDF silently repairs damaged files when opening; a file too broken to repair
        # only shows up when a page is parsed, so parse the first one now.
        doc.load_page(0).get_text(flags=TEXT_FLAGS)
    except Exception as exc:  # noqa: BLE001
        doc.close()
        raise fail(f"corrupt or unreadable PDF ({_short(exc)})", "Download the file again or re-save it.") from None
    return doc


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


# --------------------------------------------------------------------------- text layer


def _readable_fraction(text: str) -> float:
    """Share of non-space characters that are ASCII or letters of any script.

    Catches text layers that exist but decode to nonsense (e.g. old dvips Type3 bitmap
    fonts that PyMuPDF maps to dingbats: "❉♦✉❣❧❛s" for "Douglas").
    """
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    ok = sum(1 for c in chars if c.isascii() or c.isalpha())
    return ok / len(chars)


def has_text_layer(doc: pymupdf.Document, sample_pages: int = 6) -> bool:
    """True when sampled pages carry real, readable text (not just scanned images).

    False means the importer should report NEEDS_OCR instead of indexing nothing/garbage.
    """
    n = doc.page_count
    picks = sorted({round(i * (n - 1) / max(1, sample_pages - 1)) for i in range(min(n, sample_pages))})
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


def require_text_layer(doc: pymupdf.Document, filename: str) -> None:
    """Raise ImportFailure(NEEDS_OCR) when the document has no usable text layer."""
    if not has_text_layer(doc):
        raise ImportFailure(
            f"{filename}: {NEEDS_OCR}",
            "Run OCR on it first (for example `ocrmypdf in.pdf out.pdf`) and import the result.",
        )


# --------------------------------------------------------------------------- layout model


@dataclass
class _Row:
    """One visual line: PyMuPDF lines on the same baseline merged (table cells, TOC)."""

    text: str
    size: float  # dominant font size (by characters)
    bbox: tuple[float, float, float, float]
    chars: int
    bold: int
    mono: int
    math: int
    pieces: list[str]  # the merged PyMuPDF lines, superscripts removed


@dataclass
class _Block:
    rows: list[_Row]
    bbox: tuple[float, float, float, float]
    kind: str = "prose"  # prose | heading | code | lines
    level: int = 0

    @property
    def text(self) -> str:
        return " ".join(r.text for r in self.rows)

    @property
    def size(self) -> float:
        sizes: Counter[float] = Counter()
        for r in self.rows:
            sizes[r.size] += r.chars
        return sizes.most_common(1)[0][0] if sizes else 0.0

    def share(self, attr: str) -> float:
        total = sum(r.chars for r in self.rows)
        return sum(getattr(r, attr) for r in self.rows) / total if total else 0.0


def _clean(text: str) -> str:
    if text.isprintable():  # fast path: no control, private-use or odd space characters
        return text
    return _CONTROL.sub("", text).replace("\u00a0", " ")


def _page_blocks(page: pymupdf.Page) -> list[_Block]:
    """Text blocks of a page as rows with font statistics, in PyMuPDF's order."""
    data = page.get_text("dict", flags=TEXT_FLAGS)
    blocks = []
    for b in data["blocks"]:
        if b.get("type", 0) != 0:
            continue
        rows: list[_Row] = []
        for line in b["lines"]:
            row = _line_row(line)
            if row is None:
                continue
            prev = rows[-1] if rows else None
            # Same baseline and to the right: a gap-separated piece of the same visual line.
            if prev and abs(prev.bbox[3] - row.bbox[3]) < 0.4 * max(row.size, 1) and row.bbox[0] >= prev.bbox[2] - 1:
                rows[-1] = _merge_rows(prev, row)
            else:
                rows.append(row)
        if rows:
            blocks.append(_Block(rows, tuple(b["bbox"])))
    return blocks


@lru_cache(maxsize=4096)
def _font_style(font: str) -> tuple[bool, bool, bool]:
    """(bold, monospaced, math) judged from the font name; cached, names repeat a lot."""
    return (
        bool(re.search(r"bold|black|heavy|demi|semibold|cmbx|cmb\d", font, re.I)),
        bool(_MONO_FONT.search(font)),
        bool(_MATH_FONT.search(font)),
    )


def _line_row(line: dict[str, Any]) -> _Row | None:
    spans = [(s, _clean(s["text"])) for s in line["spans"]]
    sizes: Counter[float] = Counter()
    bold = mono = math = chars = 0
    for s, t in spans:
        n = len(t) - t.count(" ")
        if not n:
            continue
        chars += n
        sizes[round(s["size"], 1)] += n
        f_bold, f_mono, f_math = _font_style(s.get("font", ""))
        flags = s["flags"]
        if f_bold or flags & pymupdf.TEXT_FONT_BOLD:
            bold += n
        if f_mono or flags & pymupdf.TEXT_FONT_MONOSPACED:
            mono += n
        if f_math:
            math += n
    text = " ".join("".join(t for _, t in spans).split())  # collapse whitespace runs
    if not text or not chars:
        return None
    size = sizes.most_common(1)[0][0]
    # Without superscripts (footnote marks, affiliation letters): used for author names.
    main = "".join(" " if s["size"] < 0.8 * size and len(t.strip()) <= 3 else t for s, t in spans)
    main = " ".join(main.split())
    return _Row(text, size, tuple(line["bbox"]), chars, bold, mono, math, [main])


def _merge_rows(a: _Row, b: _Row) -> _Row:
    bbox = (min(a.bbox[0], b.bbox[0]), min(a.bbox[1], b.bbox[1]), max(a.bbox[2], b.bbox[2]), max(a.bbox[3], b.bbox[3]))
    size = a.size if a.chars >= b.chars else b.size
    return _Row(f"{a.text} {b.text}", size, bbox, a.chars + b.chars, a.bold + b.bold, a.mono + b.mono,
                a.math + b.math, a.pieces + b.pieces)


# Documents cannot be weakly referenced; key by identity, name and length (a reused id
# with the same file name and length is the same file again, so the value still holds).
_BODY_SIZES: dict[tuple[int, str, int], float] = {}


def _body_size(doc: pymupdf.Document, sample_pages: int = 5) -> float:
    """The most common font size (by characters) over a sample of pages: the body text.

    Cached per document: metadata extraction and page iteration both need it.
    """
    key = (id(doc), doc.name or "", doc.page_count)
    if key in _BODY_SIZES:
        return _BODY_SIZES[key]
    n = doc.page_count
    picks = sorted({round(i * (n - 1) / max(1, sample_pages - 1)) for i in range(min(n, sample_pages))})
    sizes: Counter[float] = Counter()
    for pno in picks:
        for block in _page_blocks(doc.load_page(pno)):
            for r in block.rows:
                sizes[r.size] += r.chars
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    if len(_BODY_SIZES) > 64:
        _BODY_SIZES.clear()
    _BODY_SIZES[key] = body
    return body


_SECTION_WORDS = re.compile(
    r"^(abstract|introduction|background|related work|methods?|methodology|results|discussion|"
    r"conclusions?|summary|acknowledge?ments?|references|bibliography|appendix|contents)\b",
    re.I,
)
_NUMBERED = re.compile(r"^(\d+(\.\d+)*\.?|[A-Z]\.(\d+\.?)*|[IVX]+\.)\s+\S")


def _classify(block: _Block, body: float) -> None:
    text = block.text
    words = len(text.split())
    size = block.size
    # Headings are words: not formulas (big integral signs and brackets are set large too).
    short = (len(block.rows) <= 3 and len(text) <= 160 and not text.endswith((",", ";"))
             and re.search(r"[^\W\d_]{3}", text) is not None
             and sum(c.isalpha() or c == " " for c in text) >= 0.6 * len(text)
             and block.share("math") < 0.2 and block.share("mono") < 0.5)
    if short and size >= body * 1.15:
        block.kind = "heading"
        block.level = 1 if size >= body * 1.5 else 2
        return
    # Smaller headings are bold: slightly larger than body text, or body-sized and
    # numbered ("2.1. Data") or a standard section name. A bold lead-in inside a paragraph
    # is not a block of its own, and bold figure labels are rarely numbered.
    bold = block.share("bold")
    numbered = _NUMBERED.match(text) is not None or _SECTION_WORDS.match(text) is not None
    if short and words <= 14 and (
        (size >= body * 1.05 and bold >= 0.5) or (size >= body * 0.95 and bold >= 0.6 and numbered)
    ):
        block.kind = "heading"
        block.level = 3
        return
    if block.share("mono") >= 0.7:
        block.kind = "code"
        return
    if len(block.rows) >= 2:
        lengths = sorted(len(r.text) for r in block.rows)
        median = lengths[len(lengths) // 2]
        # Equations and tables: math fonts, or many short rows. Keep their line breaks.
        if block.share("math") >= 0.3 or median < 30:
            block.kind = "lines"


def _is_page_furniture(block: _Block, page_rect: pymupdf.Rect, body: float) -> bool:
    """Page numbers and running heads in the top/bottom margin (noise for retrieval).

    Only plain-styled single lines: a section heading at the top of a page is larger or bold.
    """
    if len(block.rows) != 1 or block.size > body * 1.05 or block.share("bold") >= 0.5:
        return False
    band = page_rect.height * 0.12
    if not (block.bbox[3] <= page_rect.y0 + band or block.bbox[1] >= page_rect.y1 - band):
        return False
    text = block.text
    return bool(re.fullmatch(r"[-–—\s]*(\d+|[ivxlc]+)[-–—\s]*", text, re.I)
                or re.fullmatch(r"\d+\s+\S.{0,100}|.{0,100}\S\s+\d+", text) and len(text) < 110)


def _code_lines(rows: list[_Row]) -> str:
    """Code rows with their indentation rebuilt from x positions (monospace ≈ 0.55 em wide)."""
    left = min(r.bbox[0] for r in rows)
    return "\n".join(" " * round((r.bbox[0] - left) / (0.55 * r.size)) + r.text for r in rows)


_BULLETS = tuple("•◦▪▫●○■□‣⁃")


def _join_prose(rows: list[_Row]) -> str:
    """Join a paragraph's rows into one line, removing line-break hyphens ("compu-tation").

    List items ("• ...") each keep a line of their own.
    """
    out = rows[0].text
    for r in rows[1:]:
        nxt = r.text
        if nxt.startswith(_BULLETS):
            out = f"{out}\n{nxt}"
        elif out.endswith(("-", "\u00ad")) and len(out) >= 2 and out[-2].isalpha():
            if out[-2].islower() and nxt[:1].islower():
                out = out[:-1] + nxt  # hyphenation: drop the hyphen
            else:
                out = out.rstrip("\u00ad") + nxt  # a real compound ("Newton-Raphson")
        else:
            out = f"{out} {nxt}"
    return out.replace("\u00ad", "")


def _escape(text: str) -> str:
    """Escape a "#" that starts a line of ordinary text, so it is not read as a heading."""
    return re.sub(r"(?m)^#", r"\\#", text)


def _render(blocks: list[_Block]) -> str:
    parts: list[str] = []
    prev: _Block | None = None
    code_rows: list[_Row] = []
    for b in blocks:
        if b.kind == "heading":
            text = b.text
            # A heading wrapped over two blocks (long titles): one heading line.
            if (prev is not None and prev.kind == "heading" and prev.level == b.level
                    and abs(prev.size - b.size) < 0.5 and b.bbox[1] - prev.bbox[3] < b.size):
                parts[-1] = f"{parts[-1]} {text}"
            else:
                parts.append("#" * b.level + " " + text)
        elif b.kind == "code":
            # Consecutive code blocks in one column are one listing: one fence, and
            # indentation measured from the listing's left edge.
            if prev is not None and code_rows and prev.kind == "code" and b.bbox[0] < prev.bbox[2]:
                code_rows.extend(b.rows)
                parts[-1] = "```\n" + _code_lines(code_rows) + "\n```"
            else:
                code_rows = list(b.rows)
                parts.append("```\n" + _code_lines(code_rows) + "\n```")
        elif b.kind == "lines":
            parts.append(_escape("\n".join(r.text for r in b.rows)))
        else:
            parts.append(_escape(_join_prose(b.rows)))
        prev = b
    return "\n\n".join(p for p in parts if p.strip())


def _classified_blocks(page: pymupdf.Page, body_size: float) -> list[_Block]:
    blocks = [b for b in _page_blocks(page) if not _is_page_furniture(b, page.rect, body_size)]
    for b in blocks:
        _classify(b, body_size)
    if page.number == 0:
        # Author names under the title are often set large; they are not section headings.
        for b in blocks[1:12]:
            if _SECTION_WORDS.match(b.text):
                break
            if b.kind == "heading" and b.level > 1 and _name_parts(b.rows[0].pieces[0]):
                b.kind = "prose"
    return blocks


def page_markdown(page: pymupdf.Page, body_size: float) -> str:
    """Markdown for one page (see the module docstring for its conventions)."""
    return _render(_classified_blocks(page, body_size))


def iter_pages(doc: pymupdf.Document) -> Iterator[PageText]:
    """Yield each page's markdown in turn; only one page's text is held at a time."""
    body = _body_size(doc)
    labels = page_labels(doc)
    for pno in range(doc.page_count):
        try:
            md = page_markdown(doc.load_page(pno), body)
        except Exception as exc:  # noqa: BLE001 - one damaged page must not lose the paper
            log.warning("page %d could not be read: %s", pno + 1, exc)
            md = ""
        yield PageText(page=pno + 1, label=labels[pno], markdown=md)


def locate_text(page: pymupdf.Page, text: str, max_words: int = 12) -> list[pymupdf.Rect]:
    """Rectangles of (the start of) `text` on `page`, for highlighting a cited passage.

    Searches the first `max_words` words without markdown markers; MuPDF's search
    ignores line breaks and line-end hyphens, which matches how the markdown was joined.
    """
    words = re.sub(r"(^|\n)#+ |```|\\(?=#)", " ", text).split()  # drop markdown marks
    for n in (max_words, max_words // 2, 4):
        snippet = " ".join(words[:n])
        if snippet:
            hits = page.search_for(snippet, flags=SEARCH_FLAGS)
            if hits:
                return hits
    return []


# --------------------------------------------------------------------------- metadata

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}]+)", re.I)
_ARXIV_NEW = r"(\d{2}(?:0[1-9]|1[0-2])\.\d{4,5})(v\d+)?"
_ARXIV_TEXT = re.compile(r"arxiv\s*[:.]?\s*(?:abs/)?" + _ARXIV_NEW + r"|arxiv\.org/(?:abs|pdf)/" + _ARXIV_NEW, re.I)
_ARXIV_OLD_TEXT = re.compile(r"arxiv\s*:\s*([a-z-]+(?:\.[a-z]{2})?/\d{7})(v\d+)?", re.I)
_ARXIV_FILE = re.compile(r"(?<![\d.])" + _ARXIV_NEW + r"(?![\d])")
_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DATE_MDY = re.compile(_MONTH + r"\s+(\d{1,2}),?\s+((?:19|20)\d{2})", re.I)
_DATE_DMY = re.compile(r"\b(\d{1,2})\s+" + _MONTH + r",?\s+((?:19|20)\d{2})", re.I)
_DATE_ISO = re.compile(r"\b((?:19|20)\d{2})-(0[1-9]|1[0-2])-([0-2]\d|3[01])\b")
_ARXIV_STAMP = re.compile(r"arxiv:\S+\s+\[[^\]]+\]\s+(\d{1,2})\s+" + _MONTH + r"\s+((?:19|20)\d{2})", re.I)
_NAME_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "del", "della", "dos", "du", "le", "la", "y", "bin", "al"}
_NOT_NAME = re.compile(
    r"universit|institut|college|school|department|dept|laborator|\blab\b|cent(er|re)|\binc\b|corporation|"
    r"research|hospital|foundation|project|team|group|journal|version|http|www|@|\d|abstract|keywords",
    re.I,
)


def extract_meta(doc: pymupdf.Document, filename: str) -> PaperMeta:
    """Title, authors, date, abstract, DOI and arXiv ID from metadata and the first pages."""
    info = {k: _clean(v or "").strip() for k, v in (doc.metadata or {}).items()}
    first = doc.load_page(0)
    body = _body_size(doc)
    blocks = _classified_blocks(first, body)
    head_md = _render(blocks)
    if doc.page_count > 1:
        head_md += "\n\n" + page_markdown(doc.load_page(1), body)
    page1_text = first.get_text(flags=TEXT_FLAGS)

    meta = PaperMeta()
    meta_title = re.sub(r"\s+", " ", info.get("title", "")).strip()
    meta.title = meta_title if _plausible_title(meta_title, filename) else ""
    if not meta.title:
        meta.title = _title_from_layout(blocks)
    meta.authors = _split_authors(info.get("author", "")) or _authors_from_layout(blocks, meta.title)
    meta.abstract = _abstract(head_md)
    meta.doi = _find_doi(" ".join(info.get(k, "") for k in ("subject", "keywords", "title")) + " " + page1_text)
    meta.arxiv_id = _find_arxiv(filename, page1_text, info)
    meta.published = _published(page1_text, info)
    return meta


def _plausible_title(title: str, filename: str) -> bool:
    t = title.strip()
    if len(t) < 4 or sum(c.isalpha() for c in t) < 3:
        return False
    low = t.lower()
    if low in {"untitled", "title", "document", "paper", "article", "manuscript"} or low.startswith("microsoft word"):
        return False
    if re.search(r"\.(dvi|pdf|docx?|tex|ps|rtf|odt)$", low) or "/" in t or "\\" in t:
        return False
    return low != Path(filename).stem.lower()


def _title_from_layout(blocks: list[_Block]) -> str:
    """The largest-font text in the top half of page 1 (consecutive blocks joined)."""
    cands = [(i, b) for i, b in enumerate(blocks) if sum(c.isalpha() for c in b.text) >= 3]
    if not cands:
        return ""
    top = min(b.bbox[1] for _, b in cands)
    height = max(b.bbox[3] for _, b in cands) - top
    upper = [(i, b) for i, b in cands if b.bbox[1] <= top + max(height, 1) * 0.5] or cands
    biggest = max(b.size for _, b in upper)
    picked = [i for i, b in upper if b.size >= biggest - 0.5]
    # Keep only the first run of adjacent biggest blocks (a title may wrap into two blocks).
    run = [picked[0]]
    for i in picked[1:]:
        if i == run[-1] + 1:
            run.append(i)
    title = " ".join(blocks[i].text for i in run)
    return re.sub(r"\s+", " ", title).strip()[:300]


def _split_authors(text: str) -> list[str]:
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return []
    parts = re.split(r"\s*(?:,|;|&|\band\b|\bund\b)\s*", text)
    names = [p.strip(" .*") for p in parts if p.strip(" .*")]
    # "Zeileis, Achim" (one author written last-name first) splits into two single words.
    if len(names) == 2 and all(" " not in n for n in names) and "," in text and " and " not in text:
        names = [f"{names[1]} {names[0]}"]
    return names


def _looks_like_name(part: str) -> bool:
    words = part.split()
    if not 2 <= len(words) <= 5 or _NOT_NAME.search(part):
        return False
    for w in words:
        if w.lower() in _NAME_PARTICLES:
            continue
        if not (w[0].isupper() and sum(c.isalpha() for c in w) >= 1):
            return False
    return True


def _name_parts(piece: str) -> list[str] | None:
    """The names in one line ("A. Smith, B. Jones and C. Li"), or None if it is not a name line."""
    piece = re.sub(r"[*†‡§¶∗]|\d", " ", piece)
    parts = [re.sub(r"\s+", " ", p).strip(" .") for p in re.split(r"\s*(?:,|;|&|\band\b)\s*", piece)]
    parts = [p for p in parts if p]
    return parts if parts and all(_looks_like_name(p) for p in parts) else None


def _authors_from_layout(blocks: list[_Block], title: str) -> list[str]:
    """Names in the lines between the title and the abstract/first section on page 1."""
    start = 0
    norm_title = re.sub(r"\W+", "", title).lower()
    for i, b in enumerate(blocks[:6]):
        norm = re.sub(r"\W+", "", b.text).lower()
        if norm and norm in norm_title:
            start = i + 1
    found: list[tuple[str, float, bool]] = []
    for b in blocks[start:start + 10]:
        if _SECTION_WORDS.match(b.text) or (b.kind == "prose" and len(b.text) > 200):
            break
        for r in b.rows:
            for piece in r.pieces:
                for name in _name_parts(piece) or []:
                    found.append((name, r.size, r.bold * 2 > r.chars))
    if not found:
        return []
    # Names share one style; affiliations that look like names ("ETH Zurich") do not.
    _, size, bold = found[0]
    names: list[str] = []
    for name, s, bo in found:
        if abs(s - size) < 0.3 and bo == bold and name not in names:
            names.append(name)
    return names[:30]


def _abstract(md: str) -> str:
    """Text after an "Abstract" heading/line until the next heading or keywords line."""
    lines = md.split("\n\n")
    for i, para in enumerate(lines):
        m = re.match(r"^(?:#+\s*)?(?:\*\*)?abstract(?:\*\*)?\s*[.:—–-]?\s*(.*)$", para.strip(), re.I | re.S)
        if not m:
            continue
        out = [m.group(1).strip()] if m.group(1).strip() else []
        for nxt in lines[i + 1:]:
            s = nxt.strip()
            if s.startswith("#") or re.match(r"^(keywords?|key words|index terms|jel|msc)\b", s, re.I):
                break
            if _NUMBERED.match(s) and len(s) < 80:  # "1 Introduction" not detected as a heading
                break
            out.append(s)
            if sum(len(o) for o in out) > 3000:
                break
        return re.sub(r"[ \t]+", " ", "\n\n".join(out)).strip()
    return ""


def _find_doi(text: str) -> str:
    m = _DOI.search(text)
    return m.group(1).rstrip(".,;:)]}") if m else ""


def _find_arxiv(filename: str, text: str, info: dict[str, str]) -> str:
    m = _ARXIV_FILE.search(Path(filename).stem)
    if m:
        return m.group(1) + (m.group(2) or "")
    meta_text = " ".join(info.values())
    for source in (text, meta_text):
        m = _ARXIV_TEXT.search(source)
        if m:
            groups = [g for g in m.groups()]
            base, ver = (groups[0], groups[1]) if groups[0] else (groups[2], groups[3])
            return base + (ver or "")
        m = _ARXIV_OLD_TEXT.search(source)
        if m:
            return m.group(1) + (m.group(2) or "")
    return ""


# "a modified version of Zeileis (2004), published in …", "has been published as … (2005)",
# "published online in the Journal … on Oct. 2015": preprints and package vignettes say where
# the paper appeared, while their PDF metadata holds the date the file was last built.
# Within one sentence: a full stop counts as its end only before a capital ("on Oct. 2015" does not end it).
_PUBLISHED_AS = re.compile(r"\b(?:published|version of|reprint of|appeared)\b(?:[^.]|\.(?!\s+[A-Z])){0,160}?\b(19[5-9]\d|20\d{2})\b", re.I)


def _published(text: str, info: dict[str, str]) -> str:
    """Best date: arXiv stamp, then a stated publication, then a full date on page 1,
    then metadata, then a year."""
    m = _ARXIV_STAMP.search(text)
    if m:
        return _iso(int(m.group(3)), _month(m.group(2)), int(m.group(1)))
    m = _PUBLISHED_AS.search(" ".join(text.split()))
    if m:
        return _first_full_date(m.group(0)) or m.group(1)
    return _first_full_date(text) or _metadata_or_any_year(text, info)


def _first_full_date(text: str) -> str:
    """The earliest full date written in `text` (ISO), or ''."""
    best: tuple[int, str] | None = None
    for rx, order in ((_DATE_MDY, "mdy"), (_DATE_DMY, "dmy"), (_DATE_ISO, "ymd")):
        for m in rx.finditer(text):
            g = m.groups()
            try:
                if order == "mdy":
                    iso = _iso(int(g[2]), _month(g[0]), int(g[1]))
                elif order == "dmy":
                    iso = _iso(int(g[2]), _month(g[1]), int(g[0]))
                else:
                    iso = _iso(int(g[0]), int(g[1]), int(g[2]))
            except ValueError:
                continue
            if best is None or m.start() < best[0]:
                best = (m.start(), iso)
            break
    return best[1] if best else ""


def _metadata_or_any_year(text: str, info: dict[str, str]) -> str:
    for key in ("creationDate", "modDate"):
        m = re.match(r"(?:D:)?((?:19|20)\d{2})(\d{2})?(\d{2})?", info.get(key, ""))
        if m:
            y, mo, d = m.groups()
            try:
                return _iso(int(y), int(mo or 1), int(d or 1)) if mo and d else y
            except ValueError:
                return y
    m = re.search(r"\b(19[5-9]\d|20\d{2})\b", text)
    return m.group(1) if m else ""


def _month(name: str) -> int:
    name = name.lower().rstrip(".")
    for full, num in _MONTHS.items():
        if full.startswith(name[:3]):
            return num
    raise ValueError(name)


def _iso(y: int, m: int, d: int) -> str:
    return date(y, m, d).isoformat()
