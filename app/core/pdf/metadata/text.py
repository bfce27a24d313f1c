"""Text clean-up shared by the metadata readers: TeX accents, markers, comparison keys."""

from __future__ import annotations

import re
import unicodedata

from ..accents import join_accents

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ue000-\uf8ff\ufffe\uffff]")


def fix_accents(text: str) -> str:
    """Join TeX's separated accents with their letter ("Gr´egory", "Franc¸ois"), the ASCII
    look-alikes too: titles and names hold no code."""
    return join_accents(text, ascii_marks=True)


def clean(text: str) -> str:
    """Printable text with single spaces, ligatures expanded and TeX accents joined."""
    text = _CONTROL.sub("", text or "").replace("\u00a0", " ")
    text = text.replace("ﬁ", "fi").replace("ﬂ", "fl").replace("ﬀ", "ff").replace("ﬃ", "ffi").replace("ﬄ", "ffl")
    return " ".join(fix_accents(text).split())


def key(text: str) -> str:
    """A comparison key: accents dropped, case folded, punctuation and spaces removed."""
    text = unicodedata.normalize("NFKD", fix_accents(text or ""))
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "", text.casefold())


def letters(text: str) -> int:
    return sum(c.isalpha() for c in text)
