"""Accents that TeX set apart from their letters, joined again as printed.

pdfTeX builds an accented letter from two glyphs, the accent and the letter, and its text layer
often gives the accent as a spacing character of its own: "Universit`a", "F´ısica",
"R¨as¨anen", "Lemaˆıtre", "2.2 ˚A", "Franc¸ois". The reader sees broken words, and neither the
search nor the model finds "Räsänen" or "Å". Both bench corpora carry these (450 places in 59
papers: names and affiliations above all, the Ångström sign, accented variables in formulas).

The accent comes before its letter (TeX draws it first), a cedilla after it. A dotless ı or ȷ
under an accent is the ordinary i or j. Only a pair that Unicode writes as one character is
joined ("ä", "Å", "ć"), and a ring before C or F, which is a degree sign ("31˚C"); an accent
over a Greek letter or a variable with no precomposed form ("ˆβ") stays as printed, as does an
accent standing alone.

The body text takes only the typographic accents: the ASCII look-alikes ("^", "~", "`") are code
and formulas there ("x^2", "y ~ x"), except a grave accent between two letters ("Universit`a"),
which code does not write. The metadata readers, which read titles and names only, take them all.
"""

from __future__ import annotations

import re
import unicodedata

# Each spacing accent and the combining mark it stands for.
_TYPOGRAPHIC = {
    "\u00b4": "\u0301", "\u00a8": "\u0308", "\u02c6": "\u0302", "\u02dc": "\u0303", "\u02d8": "\u0306",
    "\u02c7": "\u030c", "\u02d9": "\u0307", "\u02da": "\u030a", "\u02dd": "\u030b", "\u00b8": "\u0327",
    "\u02db": "\u0328", "\u00af": "\u0304",
}
_ASCII = {"`": "\u0300", "^": "\u0302", "~": "\u0303"}
_ALL = {**_TYPOGRAPHIC, **_ASCII}
_CEDILLA = "\u00b8"
_RING = "\u02da"
_DOTLESS = {"ı": "i", "ȷ": "j"}

_MARK_TO_ACCENT = {mark: accent for accent, mark in {**_TYPOGRAPHIC, "`": "\u0300"}.items()}  # for tex_form
_DOTTED = {letter: dotless for dotless, letter in _DOTLESS.items()}
TYPOGRAPHIC_ACCENTS = "".join(_TYPOGRAPHIC)  # the spacing accents TeX's text layers write (bench/layout.py counts them)

_TYPOGRAPHIC_RX = re.compile("[" + re.escape(TYPOGRAPHIC_ACCENTS) + "`]")
_ALL_RX = re.compile("[" + re.escape("".join(_ALL)) + "]")


def _compose(letter: str, accent: str) -> str | None:
    """The one character for `letter` under `accent`, or None where Unicode has none."""
    if accent == _RING and letter in "CF":
        return "°" + letter  # a degree sign set as TeX's ring accent: "31˚C"
    out = unicodedata.normalize("NFC", _DOTLESS.get(letter, letter) + _ALL[accent])
    return out if len(out) == 1 else None


def join_accents(text: str, *, ascii_marks: bool = False) -> str:
    """`text` with each accent TeX set apart joined to its letter; other text as it is.

    `ascii_marks`: "^", "~" and "`" count as accents anywhere (names and titles); otherwise only
    the typographic ones do, and "`" only between two letters (body text, where code runs)."""
    if not (_ALL_RX if ascii_marks else _TYPOGRAPHIC_RX).search(text):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        prev = out[-1] if out else ""
        if c in _TYPOGRAPHIC or (c in _ASCII and (ascii_marks or (c == "`" and prev.isalpha() and nxt.isalpha()))):
            # Its letter follows, or for a cedilla precedes ("Franc¸ois"; an ogonek comes first: "J˛edrzej").
            for letter, before in ((prev, True), (nxt, False)) if c == _CEDILLA else ((nxt, False), (prev, True)):
                if letter.isalpha() and (composed := _compose(letter, c)):
                    if before:
                        out[-1] = composed
                    else:
                        out.append(composed)
                        i += 1  # the letter is taken too
                    break
            else:
                out.append(c)
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def tex_form(text: str) -> str:
    """`text` with each accented letter written as TeX's text layer writes it ("für" → "f¨ur"):
    what to search a pdfTeX page for when the stored text has the joined form."""
    out: list[str] = []
    for c in text:
        parts = unicodedata.normalize("NFD", c)
        if len(parts) == 2 and parts[1] in _MARK_TO_ACCENT:
            base, accent = parts[0], _MARK_TO_ACCENT[parts[1]]
            if accent != _CEDILLA:
                base = _DOTTED.get(base, base)  # TeX puts the accent over the dotless letter
            out.append(base + accent if accent == _CEDILLA else accent + base)
        else:
            out.append(c)
    return "".join(out).replace("°C", _RING + "C").replace("°F", _RING + "F")
