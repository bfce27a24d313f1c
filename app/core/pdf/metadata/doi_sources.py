"""The paper's DOI where its first pages print none: later pages, and the PDF's XMP metadata.

The first pages decide (identifiers.page_doi). Beyond them, a reference list prints dozens of
other papers' DOIs, so a DOI on a later page counts only where a paper prints its own: in a page's
header or footer band, or beside a cue such as "Cite this article", "Published online" or
"Article information". Reading every page costs a text pass each (about 5 ms), so without a hint
only the last two pages are read, where end matter sits (a citation box, a publisher's footer);
with a DOI in the metadata (XMP's prism:doi or Crossmark's, the info dictionary's subject or
keywords), every page is searched for that DOI printed, until it is found. A printed DOI is
preferred; an XMP DOI printed nowhere is still the publisher's own record and is taken, marked
unsure; an info-dictionary DOI printed nowhere is not (producer tools fill it with anything).
"""

from __future__ import annotations

import html
import logging
import re
from typing import Iterable

import pymupdf

from .identifiers import _DOI_LABELLED, find_doi, tidy_doi
from .text import key

log = logging.getLogger(__name__)

_XMP_DOI = re.compile(
    r"<(prism:doi|crossmark:doi|pdfx:doi|dc:identifier|prism:url)\b[^>]*>(?:\s*<[^>]+>)*\s*"
    r"(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/[^\s<\"]+)"
    r"|\b(?:prism:doi|crossmark:doi|pdfx:doi)\s*=\s*\"(10\.\d{4,9}/[^\"]+)\"", re.I)
_CUE = re.compile(r"cite this|citation:|how to cite|published online|this article|article information|"
                  r"article info|online version|available online|©|copyright", re.I)
MARGIN = 0.08  # the header and footer bands, as a share of the page height
LAST_PAGES = 2


def xmp_doi(doc: pymupdf.Document) -> str:
    """The DOI the XMP metadata gives the article (PRISM, Crossmark, pdfx, dc:identifier), or ""."""
    try:
        xml = doc.get_xml_metadata() or ""
    except Exception:  # noqa: BLE001 - a broken metadata stream only means no hint
        return ""
    m = _XMP_DOI.search(xml)
    return tidy_doi(html.unescape(m.group(2) or m.group(3))) if m else ""


def _own_dois(page: pymupdf.Page, flags: int) -> tuple[list[str], str]:
    """(DOIs the page prints as its paper's own: in a margin band or beside a cue, page text)."""
    height = page.rect.height
    own, texts = [], []
    for x0, y0, x1, y1, text, *_ in page.get_text("blocks", flags=flags):
        texts.append(text)
        for m in _DOI_LABELLED.finditer(text):
            if y1 < MARGIN * height or y0 > (1 - MARGIN) * height or _CUE.search(text):
                own.append(tidy_doi(m.group(1)))
    return own, " ".join(texts)


def doi_elsewhere(doc: pymupdf.Document, read: Iterable[int], read_text: str, info_doi: str,
                  flags: int) -> tuple[str, bool]:
    """(DOI, printed) for a paper whose first pages (`read`, 0-based, with `read_text`) gave none."""
    xmp = xmp_doi(doc)
    hints = [d for d in (xmp, info_doi) if d]
    for hint in hints:
        if key(hint) in key(read_text):
            return hint, True
    done = set(read)
    pages = [p for p in range(doc.page_count) if p not in done]
    if not hints:
        pages = pages[-LAST_PAGES:]
    found = ""
    for pno in reversed(pages):  # end matter first
        try:
            own, text = _own_dois(doc.load_page(pno), flags)
        except Exception as exc:  # noqa: BLE001 - an unreadable page holds no DOI
            log.info("page %d not read for a DOI: %s", pno + 1, exc)
            continue
        for hint in hints:
            if key(hint) in key(text):
                return hint, True
        found = found or (own[0] if own else "")
        if found and not hints:
            return found, True
    if found:
        return found, True
    return (xmp, False) if xmp else ("", False)


def info_dict_doi(info: dict[str, str]) -> str:
    return find_doi(" ".join(info.get(k, "") for k in ("subject", "keywords", "title", "doi")))
