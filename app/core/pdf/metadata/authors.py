"""Authors: the names in the author block between the title and the abstract.

A name line is split at commas, "and", "&" and at superscripts; affiliation markers (digits,
letters set small, * † ‡ § ¶ ☯ ✉), academic degrees, e-mail addresses and bracketed notes are
dropped so that none leaks into a name. All names of a paper share one font style; an
affiliation or a place that looks like a name ("South Africa") is set differently.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from .layout import Line
from .text import clean, key

_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "del", "della", "dos", "du", "le", "la", "y", "bin",
              "al", "el", "ten", "ter", "zu", "st.", "mc", "af", "dal", "des"}


def looks_like_name(part: str) -> bool:
    words = part.split()
    if not 2 <= len(words) <= 6 or P["not_name"].search(part):
        return False
    if P["place_start"].match(words[0]) or any(P["month_word"].match(w) for w in words):
        return False
    # Prose, not a name: it opens with a function word ("The COVID-19 crisis …") or a word is
    # cut by a line-end hyphen.
    if P["function_word"].match(words[0]) or any(w.endswith("-") for w in words):
        return False
    core = [w for w in words if w.lower() not in _PARTICLES]
    if len(core) < 2 or not all(P["word"].match(w) for w in core):
        return False
    last = core[-1]
    # A surname is a word, not an initial ("Smith J." is read elsewhere as citation style).
    return sum(c.isalpha() for c in last) >= 2 and not last.endswith(".")


def _parts(text: str) -> list[str]:
    text = re.sub(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}", ",", text)
    text = re.sub(r"\S+@\S+", ",", text)
    # ORCID marks: the icon's text "iD", or the iD itself, printed after a name.
    text = re.sub(r"https?://\S+|www\.\S+|(?i:\borcid\b)\s*:?|\bi[dD]\b(?=\s*(?:[,;&·*†‡]|\band\b|$))", ",", text)
    text = P["markers"].sub(",", text)
    parts = re.split(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b|\by\b(?=\s+[A-Z][a-z]))\s*", text)
    out = []
    for p in parts:
        p = " ".join(p.split()).strip(" .:-–")  # "-" left of an iD "0000-0002-…"
        if not p or P["degrees"].match(p) or re.fullmatch(r"[a-z]{1,2}", p):
            continue
        out.append(p)
    return out


def names_in(text: str) -> list[str] | None:
    """The names leading a line ("A. Smith, B. Jones and C. Li, Dept. …"), or None if it starts otherwise."""
    text = clean(text)
    if P["collab"].match(text.strip(" ,*∗†")):
        return [text.strip(" ,*∗†")]
    names: list[str] = []
    for p in _parts(text):
        if looks_like_name(p):
            names.append(p if not p.endswith(".") or re.search(r"\b[A-Z]\.$", p) else p.rstrip("."))
        elif re.fullmatch(r"(?:[A-Z]\.\s*)+(?:[A-Z][a-z]+)?", p) and not names and not P["not_name"].search(p):  # not "P.O. Box"
            continue
        else:
            break
    return names or None


def _rows(lines: list[Line]) -> list[tuple[str, Line, int]]:
    """Lines on the same baseline joined; a wide gap (grid layouts) separates names."""
    groups: list[list[Line]] = []
    for ln in sorted(lines, key=lambda l: l.y1):
        if groups and abs(groups[-1][0].y1 - ln.y1) < 0.4 * ln.size:
            groups[-1].append(ln)
        else:
            groups.append([ln])
    rows: list[tuple[str, Line, int]] = []  # (text, merged line, block of its last piece)
    for ln in (ln for g in groups for ln in sorted(g, key=lambda l: l.x0)):
        if rows and abs(rows[-1][1].y1 - ln.y1) < 0.4 * ln.size:
            text, first, _ = rows[-1]
            gap = ln.x0 - first.bbox[2]
            # Wider than a word space (about a third of an em), or a text block of its own set
            # apart: the next column of a name grid (JSS, ACM), not the next word of a name.
            column = gap > 0.5 * ln.size or (ln.block != rows[-1][2] and gap > 0.2 * ln.size)
            sep = ", " if column or first.style() != ln.style() else " "
            merged = Line(text + sep + ln.main, "", first.size, first.bold, first.italic,
                          (first.x0, first.y0, max(first.bbox[2], ln.bbox[2]), ln.y1), first.block, first.page)
            rows[-1] = (merged.text, merged, ln.block)
        else:
            rows.append((ln.main, ln, ln.block))
    return rows


def from_layout(lines: list[Line]) -> list[str]:
    """Names in the author region (the lines between the title and the abstract)."""
    found: list[tuple[str, tuple[float, bool, bool]]] = []
    carry = ""
    for text, row, _ in _rows(lines):
        text = (carry + " " + text).strip() if carry else text
        carry = ""
        m = re.search(r"(?:,|\band)\s*((?:[A-Z]\.\s*){1,3})$", text)
        if m:  # "…, J." wraps to "C. Yun, …" on the next line
            carry, text = m.group(1), text[: m.start()]
        # A reference line ("Z. Naturforsch. 54a, 272-273 (1999)"): an abbreviated journal
        # name looks like a name, the page range and year say what it is.
        names = [] if P["reference"].search(text) else names_in(text) or []
        if found and not names and len(text) > 80 and not P["not_name"].search(text):
            break  # prose after the author block: the names are over
        for name in names:
            found.append((name, row.style()))
    if not found:
        return []
    size, bold, _ = found[0][1]
    names: list[str] = []
    seen: set[str] = set()
    for name, (s, b, _) in found:
        if abs(s - size) <= 0.6 and b == bold and key(name) not in seen:
            seen.add(key(name))
            names.append(name)
    return names[:60]


def split_metadata_authors(text: str) -> list[str]:
    """Names in the PDF's author field; producer junk ("Administrator", "ygw") gives []."""
    text = clean(text)
    if not text or re.search(r"\d|array\(|administrator|user|owner|^admin|author|unknown|et al", text, re.I):
        return []
    sep = r"\s*(?:;|&|\band\b|\bund\b)\s*" if ";" in text else r"\s*(?:,|&|\band\b|\bund\b)\s*"
    parts = [p.strip(" .*") for p in re.split(sep, text) if p.strip(" .*")]
    # "Zeileis, Achim": one author written last name first.
    if len(parts) == 2 and text.count(",") == 1 and all(" " not in p for p in parts):
        parts = [f"{parts[1]} {parts[0]}"]
    parts = [re.sub(r"\s*\([^)]*\)", "", p).strip() for p in parts]
    return parts if parts and all(len(p.split()) >= 2 and not P["not_name"].search(p) for p in parts) else []


_PATTERNS: dict[str, str] = {
    "degrees": r"(?i)^(md|phd|ph\.d\.?|mba|ms|msc|bsc|ba|ma|mph|mbbs|msn|rn|dphil|dr|prof|facs|frcs|mrcp|bs|"
               r"jr\.?|sr\.?|iii|ii|mpa|dds|dvm|pharmd|mas|meng|dsc|frcpc|mbchb|bch|bm|frcp)\.?$",
    "not_name": r"(?i)universit|institut|college|school|department|dept|laborator|\blab\b|cent(er|re)\b|\binc\b|corporation|"
                r"research|hospital|foundation|project|journal|version|http|www|@|abstract|keywords?|introduction|editor|"
                r"correspond|received|accepted|published|submitted|article|open access|creative|commons|licen[cs]e|"
                r"copyright|review|division|faculty|program|science|engineering|technology|ministry|academy|society|"
                r"observatory|national|company|ltd|gmbh|street|avenue|road|box\b|campus|clinic|unit\b|information|"
                r"declarations|additional|author|summary|contents|affiliation|equal contribution|present address|"
                r"laboratoire|informati|[ée]cole|escuela|departament|facult|hochschule|fachbereich|centro|istituto|"
                r"archive|repository|repec|organi[sz]ation|agency|council|collaboration\b",
    "month_word": r"(?i)^(january|february|march|april|may|june|july|august|september|october|november|december)$",
    "place_start": r"(?i)^(north|south|east|west|new|los|las|san|santa|united|saudi|hong|sri|costa|puerto|"
                   r"rio|republic|kingdom|cape|great|upper|lower)$",
    "function_word": r"(?i)^(the|this|these|those|we|our|in|on|for|with|from|by|at|is|are|of)$",  # not "An", "To": names
    "markers": r"[*∗†‡§¶#☯✉⁎•·⋆★☆♯♮⊥‖∥\d]+",
    "collab": r"(?i)^(the\s+)?[\w&,\- ]{2,80}\bcollaborations?$",
    "reference": r"\b\d+\s*[–-]\s*\d+\b.{0,12}\(?\b(?:1[89]|20)\d\d\b",
    "word": r"^(?:[A-ZÀ-ÞĀ-ſ][\w'’\-]*\.?|[A-Z]\.(?:-?[A-Z]\.)*|[A-Z]{1,3}|O['’][A-Z]\w+|Mc\w+|Mac\w+|d['’][A-Z]\w+)$",
    "not_letter": r"[^A-Za-z]+",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def _letters_of(text: str, *, drop_marks: bool) -> str:
    """Letters of `text`, case folded: accents taken off (`drop_marks`), or accented letters left
    out, as producers write names into the info dictionary ("Grüschow" → "Grschow")."""
    if text.isascii():
        return P["not_letter"].sub("", text).lower()
    text = unicodedata.normalize("NFKD", text)
    if drop_marks:
        text = "".join(c for c in text if not unicodedata.combining(c))
    else:
        text = "".join(c for c in unicodedata.normalize("NFC", text) if c.isascii())
    return "".join(c for c in text.casefold() if c.isalpha())


def as_printed(names: list[str], page_words: list[str]) -> list[str]:
    """The info dictionary's `names` as the page prints them: each one's words in printed order,
    with their diacritics ("Grschow Sabine" → "Sabine Grüschow", "Bode BelaE." → "Bela E. Bode");
    a name the page does not print stays as it is (the dictionary is a hint, the page decides)."""
    if not names:
        return []
    letters = [(_letters_of(w, drop_marks=True), _letters_of(w, drop_marks=False)) for w in page_words]
    return [_printed(name, page_words, letters) for name in names]


def _printed(name: str, page_words: list[str], letters: list[tuple[str, str]]) -> str:
    parts = [p for p in re.split(r"[\s,]+", name) if p]
    if not parts or len(parts) > 4:
        return name
    wanted = set()
    for order in itertools.permutations(parts):
        wanted.add("".join(_letters_of(p, drop_marks=True) for p in order))
        wanted.add("".join(_letters_of(p, drop_marks=False) for p in order))
    for size in range(len(parts), len(parts) + 3):  # an initial the dictionary ran into a name ("BelaE.")
        for i in range(len(page_words) - size + 1):
            window = letters[i:i + size]
            if "".join(a for a, _ in window) in wanted or "".join(b for _, b in window) in wanted:
                printed = clean(" ".join(P["markers"].sub("", w).strip(",;") for w in page_words[i:i + size]))
                if looks_like_name(printed):
                    return printed
    return name
