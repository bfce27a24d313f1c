"""DOI and arXiv identifiers printed on the page, in the metadata or in the file name."""

from __future__ import annotations

import re
from pathlib import Path

from .layout import Front, Line

_DOI_LABELLED = re.compile(r"(?:\bdoi\b\s*[:.]?\s*|doi\.org/)(10\.\d{4,9}/[^\s\"<>{}]+)", re.I)
_ARXIV_NEW = r"(\d{2}(?:0[1-9]|1[0-2])\.\d{4,5})(v\d+)?"
_PATTERNS: dict[str, str] = {
    "doi": r"(?i)\b(10\.\d{4,9}/[^\s\"<>{}]+)",
    "arxiv_text": r"(?i)arxiv\s*[:.]?\s*(?:abs/)?" + _ARXIV_NEW + r"|arxiv\.org/(?:abs|pdf)/" + _ARXIV_NEW,
    "arxiv_old_text": r"(?i)arxiv\s*:\s*([a-z-]+(?:\.[a-z]{2})?/\d{7})(v\d+)?",
    "arxiv_file": r"(?<![\d.])" + _ARXIV_NEW + r"(?![\d])",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def tidy_doi(doi: str) -> str:
    doi = doi.rstrip(".,;:")
    # A closing bracket belongs to the DOI only when it opens one too ("10.1002/(SICI)…").
    while doi and doi[-1] in ")]}" and doi.count(doi[-1]) > doi.count({")": "(", "]": "[", "}": "{"}[doi[-1]]):
        doi = doi[:-1].rstrip(".,;:")
    return doi


def find_doi(text: str) -> str:
    m = _DOI_LABELLED.search(text) or P["doi"].search(text)
    return tidy_doi(m.group(1)) if m else ""


def page_doi(front: Front, front_end: float) -> str:
    """The paper's own DOI: labelled in the header, footer or front matter of its first page,
    then anywhere on that page, then in the margins of the next page. Later pages ("Cite this
    article as" on the last one) and the XMP metadata: doi_sources.py."""
    def margin_or_front(ln: Line) -> bool:
        return ln.y1 <= front_end or ln.y0 < 0.12 * front.page_height or ln.y1 > 0.85 * front.page_height
    first = [ln.text for ln in front.lines if margin_or_front(ln)]
    for text in (" ".join(first), " ".join(ln.text for ln in front.lines)):
        m = _DOI_LABELLED.search(text)
        if m:
            return tidy_doi(m.group(1))
    doi = find_doi(" ".join(first))
    if doi:
        return doi
    m = _DOI_LABELLED.search(" ".join(ln.text for ln in front.next_lines if margin_or_front(ln)))
    return tidy_doi(m.group(1)) if m else ""


def find_arxiv(filename: str, text: str, info: dict[str, str]) -> str:
    m = P["arxiv_file"].search(Path(filename).stem)
    if m:
        return m.group(1) + (m.group(2) or "")
    for source in (text, " ".join(info.values())):
        m = P["arxiv_text"].search(source)
        if m:
            base, ver = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            return base + (ver or "")
        m = P["arxiv_old_text"].search(source)
        if m:
            return m.group(1) + (m.group(2) or "")
    return ""
