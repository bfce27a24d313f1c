"""Abbreviations: "DECam" cites "Dark Energy Camera", "near-Earth objects" cites "NEOs".

Papers abbreviate a name on first use and then cite the short form; claims mix the two. The
support check's rule that a claim's specific names must be in its passage
(support_rules.check_specifics) asks here before it calls a name missing. What a paper defines
("surgeon-scrub (SS)") is read by the core's acronyms.py, which the table reader shares.
"""

from __future__ import annotations

import re

from ...text.acronyms import CONNECTORS as _CONNECTORS, capitals as _capitals
# A word as support_rules.specific_names reads one ("near-Earth", "NEOs"), so a name it gives matches.
from .citations import WORD as _WORD

_PART = re.compile(r"[A-Za-z0-9]+")


def _initials(parts: list[str]) -> str:
    return "".join(p[0].upper() for p in parts if p.lower() not in _CONNECTORS)


def _spelled_out(letters: str, text_parts: list[str]) -> bool:
    """`letters` are the initials of consecutive words of the text (connectors may come between).

    A two-letter acronym must be spelled out in capitalised words ("United Kingdom"): any two
    lower-case words match two letters by chance."""
    n = len(letters)
    names_only = n <= 2

    def starts(word: str, letter: str) -> bool:
        return word[0].upper() == letter and (word[0].isupper() or not names_only)

    for start in range(len(text_parts)):
        if not starts(text_parts[start], letters[0]):
            continue
        picked, i = [], start
        while i < len(text_parts) and len(picked) < n:
            word = text_parts[i]
            if starts(word, letters[len(picked)]):
                picked.append(word)
            elif word.lower() not in _CONNECTORS:
                break
            i += 1
        if len(picked) == n:
            return True
    return False


def abbreviated(name: str, claim: str, text: str) -> bool:
    """True if the claim's `name` (lower case, as `specific_names` gives it) is in the text as an
    abbreviation or its expansion: an acronym of the claim spelled out in the text, or words
    of the claim around the name whose initials are an acronym the text uses. Papers
    abbreviate on first use and then cite the short form; claims mix the two."""
    claim_parts = _PART.findall(claim)
    text_parts = _PART.findall(text)
    name_parts = [p.lower() for p in _PART.findall(name)]
    if not name_parts or not text_parts:
        return False
    for token in _WORD.findall(claim):  # the claim's acronym, spelled out in the text
        letters = _capitals(token) if token.lower() == name else ""
        if letters and _spelled_out(letters, text_parts):
            return True
    acronyms = {a for a in map(_capitals, text_parts) if len(a) > 2}  # two letters match by chance too often
    if not acronyms:
        return False
    lowered = [p.lower() for p in claim_parts]
    for i in range(len(lowered) - len(name_parts) + 1):  # the claim spells out an acronym of the text
        if lowered[i : i + len(name_parts)] != name_parts:
            continue
        for start in range(max(0, i - 4), i + 1):
            for end in range(i + len(name_parts), min(len(claim_parts), start + 7) + 1):
                if end - start >= 2 and _initials(claim_parts[start:end]) in acronyms:
                    return True
    return False


SPELLED_MAX = 3  # acronyms spelled out in one quote: enough for a sentence, short enough for the judge


def spell_out(text: str, defined: dict[str, str]) -> str:
    """`text` with the acronyms a paper defines elsewhere spelled out at their first use here:
    "Median SS and SC scores" → "Median SS (surgeon-scrub) and SC (surgeon-circulator) scores".

    A citing sentence often writes out what the paper abbreviates after its first page, and a
    judge reading "SS" cannot tell that it is the "surgeon-scrub" of the sentence. An acronym whose
    long form the text already holds, or that it never uses, is left alone; plurals count ("SLs")."""
    added = 0
    for acronym, long_form in defined.items():
        if added >= SPELLED_MAX:
            break
        if long_form.lower() in text.lower():
            continue
        m = re.search(rf"\b{re.escape(acronym)}s?\b(?!\s*\()", text)
        if m is None:
            continue
        text = f"{text[: m.end()]} ({long_form}){text[m.end():]}"
        added += 1
    return text
