"""Paper IDs: short, readable, unique, and safe as file names on every OS.

Order of preference (DESIGN.md, "The library"): the arXiv ID with its version; a slug of
the DOI; a slug of the title; a slug of the file name. IDs appear in citations
(`[PAPER_ID, page N]`) and as `pdfs/<id>.pdf`, so they use only [a-z0-9.-] (plus the
capitals and "_" of old-style arXiv IDs such as "math.GT_0309136v1").
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from ..records import PaperMeta

MAX_SLUG = 60

# Names Windows refuses as a file name stem, whatever the extension.
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
_ARXIV_NEW = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_ARXIV_OLD = re.compile(r"^[a-z-]+(\.[A-Za-z]{2})?/\d{7}(v\d+)?$", re.I)

# Letters that NFKD does not decompose into ASCII.
_FOLD = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE",
                       "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "þ": "th", "Þ": "Th", "ı": "i"})


def ascii_fold(text: str) -> str:
    """"Müller–Żółć" -> "Muller-Zolc": decompose accents and drop what is not ASCII."""
    text = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return text.encode("ascii", "ignore").decode("ascii")


def slugify(text: str, max_len: int = MAX_SLUG, keep_dots: bool = False) -> str:
    """Lowercase ASCII words joined by hyphens, cut at a word boundary within max_len."""
    allowed = r"[^a-z0-9.]+" if keep_dots else r"[^a-z0-9]+"
    slug = re.sub(allowed, "-", ascii_fold(text).lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-.")
    if len(slug) > max_len:
        cut = slug[:max_len]
        # Prefer ending on a whole word when that keeps most of the length.
        slug = cut.rsplit("-", 1)[0] if "-" in cut[max_len // 2:] else cut
    return slug.strip("-.")


def _arxiv_id(meta: PaperMeta) -> str:
    aid = meta.arxiv_id.strip()
    if _ARXIV_NEW.match(aid):
        return aid
    if _ARXIV_OLD.match(aid):
        return aid.replace("/", "_")  # "/" cannot be in a file name
    return ""


def _base_id(meta: PaperMeta, filename: str) -> str:
    aid = _arxiv_id(meta)
    if aid:
        return aid
    if meta.doi:
        slug = slugify(re.sub(r"^(https?://(dx\.)?doi\.org/|doi:)", "", meta.doi.strip(), flags=re.I), keep_dots=True)
        if slug:
            return slug
    if meta.title:
        slug = slugify(meta.title)
        if slug:
            return slug
    return slugify(Path(filename).stem) or "paper"


def make_paper_id(meta: PaperMeta, filename: str, existing: set[str]) -> str:
    """A new paper ID, unique against `existing` (compared ignoring case: macOS and
    Windows file systems do) by adding -2, -3, ... to the readable base."""
    base = _base_id(meta, filename)
    if base.lower() in _WINDOWS_RESERVED:
        base = f"{base}-paper"
    taken = {e.lower() for e in existing}
    candidate = base
    n = 2
    while candidate.lower() in taken:
        candidate = f"{base}-{n}"
        n += 1
    return candidate
