"""Text clean-up shared by the metadata readers: TeX accents, markers, comparison keys."""

from __future__ import annotations

import re
import unicodedata

# pdfTeX text layers often write an accent as its own spacing character next to the letter
# ("Gr´egory", "Franc¸ois", "O˘guz", "J˛edrzej"): map each to its combining form.
_SPACING_ACCENTS = {
    "\u00b4": "\u0301", "`": "\u0300", "\u00a8": "\u0308", "\u02c6": "\u0302", "^": "\u0302",
    "\u02dc": "\u0303", "~": "\u0303", "\u02d8": "\u0306", "\u02c7": "\u030c", "\u02d9": "\u0307",
    "\u02da": "\u030a", "\u02dd": "\u030b", "\u00b8": "\u0327", "\u02db": "\u0328", "\u00af": "\u0304",
}
_ACCENT_RX = re.compile("[" + re.escape("".join(_SPACING_ACCENTS)) + "]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ue000-\uf8ff\ufffe\uffff]")


def _compose(letter: str, accent: str) -> str | None:
    base = {"ı": "i", "ȷ": "j"}.get(letter, letter)
    out = unicodedata.normalize("NFC", base + _SPACING_ACCENTS[accent])
    return out if len(out) == 1 else None


def fix_accents(text: str) -> str:
    """Join TeX's separated accents with their letter; other text is left as it is."""
    if not _ACCENT_RX.search(text):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in _SPACING_ACCENTS:
            nxt = text[i + 1] if i + 1 < len(text) else ""
            prev = out[-1] if out else ""
            # The accent usually comes before its letter; a cedilla or ogonek may follow it.
            if nxt.isalpha() and (composed := _compose(nxt, c)):
                out.append(composed)
                i += 2
                continue
            if prev.isalpha() and (composed := _compose(prev, c)):
                out[-1] = composed
                i += 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


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
