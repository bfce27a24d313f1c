"""The acronyms a paper defines in its running text: "long form (ABBR)", read by initials.

Papers define a short form at its first use, "cell membrane stability (CMS)", and then write the
short form alone: in their tables (tables.py reads it out in a row), in the sentences a claim
cites (the manuscript check's judge reads it spelled out) and in the passages focusing scores
(a question that writes the long form matches the short one). One reader serves all three.

A bracket defines an acronym where the words just before it, read back from the bracket, have
initials that spell the acronym's capitals ("Dark Energy Camera (DECam)", "near-Earth objects
(NEOs)": a hyphen or slash parts a word). A connector may stand between them unspelled
("Ministry of Health (MoH)") or spell a letter of its own ("networks of workstations (NOW)",
"time-of-flight (TOF)"). Ligatures are read as their letters ("rectiﬁed linear units (ReLUs)").
A bracket whose letters the words before it do not spell ("(Table)", "(HC3)", "(HX)") defines
nothing.
"""

from __future__ import annotations

import re
import unicodedata

MAX_LONG = 80  # characters: a long form is a name, not a sentence
BACK_WORDS = 12  # words before the bracket that may spell it
CONNECTORS = frozenset({"of", "and", "the", "for", "in", "on", "to", "a", "an", "de", "&"})
_EDGES = "\"“”‘’'()[],;:."
_PATTERNS: dict[str, str] = {
    "bracket": r"\(\s*([A-Za-z]{2,10})\s*\)",
    "ligature": "[\ufb00-\ufb06]",  # ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ: read as their letters (not all of NFKC: "¨o" would gain a space)
    "possessive": r"[’']s$",
    "broken_word": r"(\w)-\s*\n\s*(\w)",  # a word hyphenated at a line's end
    "word_joint": r"[-/]",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def capitals(short: str) -> str:
    """The letters an acronym spells: its capitals ("DECam" → "DEC", "NEOs" → "NEO"); "" with fewer than two."""
    caps = "".join(ch for ch in short if ch.isupper())
    return caps if len(caps) >= 2 else ""


def flatten(text: str) -> str:
    """`text` on one line, single-spaced, a word hyphenated at a line's end kept whole ("IL-\n6")."""
    return " ".join(P["broken_word"].sub(r"\1-\2", text).split())


def definitions(text: str) -> dict[str, str]:
    """{"SS": "surgeon-scrub"} for each acronym `text` defines in brackets; the first definition stands."""
    text = P["ligature"].sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    flat = flatten(text)
    out: dict[str, str] = {}
    for m in P["bracket"].finditer(flat):
        short = m.group(1)
        letters = capitals(short)
        if not letters or short in out:
            continue
        words = flat[max(0, m.start() - 16 * BACK_WORDS):m.start()].split()[-BACK_WORDS:]
        words = [P["possessive"].sub("", w.strip(_EDGES)) for w in words]
        first = _spelling_start(words, letters)
        if first is not None:
            long_form = " ".join(words[first:])
            if len(long_form) <= MAX_LONG:
                out[short] = long_form
    return out


def _spelling_start(words: list[str], letters: str) -> int | None:
    """The index of the first of the last words of `words` whose initials spell `letters`; None if
    none do. The last word must spell the last letter."""

    def walk(k: int, need: int) -> int | None:  # words[:k+1] must spell letters[:need]
        if need == 0:
            return k + 1
        if k < 0:
            return None
        parts = [p for p in P["word_joint"].split(words[k]) if p] if words[k][:1].isalpha() else []
        for initials in _readings(parts):
            if 0 < len(initials) <= need and letters[need - len(initials):need] == initials:
                found = walk(k - 1, need - len(initials))
                if found is not None:
                    return found
        if words[k].lower() in CONNECTORS and need < len(letters):  # unspelled, but never the last word
            return walk(k - 1, need)
        return None  # a word that spells no letter, or a figure: the long form ends before it

    return walk(len(words) - 1, len(letters))


def _readings(parts: list[str]) -> list[str]:
    """The letters a word may give: every part's initial, or those of the parts that are not
    connectors ("time-of-flight" gives "TOF" or "TF")."""
    every = "".join(p[0].upper() for p in parts)
    named = "".join(p[0].upper() for p in parts if p.lower() not in CONNECTORS)
    return list(dict.fromkeys(r for r in (every, named) if r))
