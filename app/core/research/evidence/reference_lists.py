"""Reference lists: never evidence, told by their heading or, where the layout gave none, by their text.

A passage under a "References" heading is one (`is_bibliography`). Many papers
never give the list a heading the extractor sees: a journal's two-column layout runs the list
on under the last section ("…This was the only study" for a trauma review), or a heading is
lost with its page's header. Such a list matches a question's every keyword ("retrievable
inferior vena cava filters in trauma patients" is half its titles), so it outranked the
review's own results: asked how often filter retrievals fail, the answer's evidence was three
passages of references and its one quote the name of a study group.

A unit (the sentence-like pieces focusing picks from, chunking.text_units) is an entry of a
reference list when it carries the marks of one: a volume and pages ("2004, 40:958-64",
"24(8):1586–1591"), a DOI, authors written as a list ("Hoff WS, Hoey BA, Wainwright GA," or
two beside a year: "Shadmehr, R., and Holcomb, H. H. (1997)"), or a number followed by an
author. A title between two entries ("Vena caval filters: a comprehensive review.") counts with
them. Running text that cites ("(Henderson et al., 2017; Gillick et al., 2019)") has years but
none of these marks, and stays evidence.
"""

from __future__ import annotations

import re

from ...units import text_units

_YEAR = re.compile(r"(?<![\d.])(?:1[89]|20)\d\d[a-z]?(?![\d.]\d)")
# Volume and pages after the year ("2004, 40:958-64", "2013;258:953–957", "2014, 14:1"), or a
# volume's page range on its own ("4:187–200", "24(8):1586–1591"). Times of day ("10:34:02",
# "10:00-11:00") are not: the pages may not run on into another colon.
_VOLUME_PAGES = re.compile(
    r"(?<![\d.])(?:1[89]|20)\d\d[a-z]?\s*[,;]\s*\d{1,4}\s*(?:\([^()]{1,12}\))?\s*:\s*[A-Za-z]?\d{1,6}(?![:\d])"
    r"|(?<![:\d])\d{1,4}\s*(?:\([^()]{1,12}\))?\s*:\s*[A-Za-z]?\d{1,6}\s*[-–]\s*[A-Za-z]?\d{1,6}(?![:\d])")
# Pages after a volume with a comma, long enough not to be a range in prose: "28, 9610–9618".
_VOLUME_LONG_PAGES = re.compile(r"\b\d{1,4},\s*[A-Za-z]?\d{3,6}\s*[-–]\s*[A-Za-z]?\d{2,6}\b")
# A DOI or an archive's identifier; a plain web address is not enough, as running text gives
# one for software ("the pscl package (Jackman 2008), available from http://…").
_LINK = re.compile(r"\bdoi\s*:|\bdoi\s+10\.|\bdoi\.org|\barxiv\s*:|\bISBN\b|\bISSN\b|\[cited\b|\baccessed\s+(?:on\s+)?\d", re.I)
_VENUE = re.compile(r"\bIn\s+(?:Proc(?:eedings|\.)|[A-Z][A-Za-z]+\s+(?:Conference|Symposium|Workshop))\b|\bpp\.\s*\d|"
                    r"\bpages\s+\d+\s*[-–]\s*\d+|\bvol(?:\.|ume)\s*\d", re.I)
# Author lists: "Hoff WS," (Vancouver), "Shadmehr, R." (APA), "D. G. Feitelson" (initials first).
# Roman numerals are not initials ("Type II, Type III").
_SURNAME_INITIALS = re.compile(r"\b[A-Z][A-Za-z'’\-]+\s+(?!(?:I{1,3}|IV|VI{0,3}|IX|X{1,3})\b)[A-Z]{1,3}(?=[,:.]|\s+(?:and|&)\b)")
_SURNAME_COMMA_INITIALS = re.compile(r"\b[A-Z][A-Za-z'’\-]+,\s+(?:[A-Z]\.\s?-?){1,3}(?![A-Za-z])")
_INITIALS_SURNAME = re.compile(r"(?<![A-Za-z.])(?:[A-Z]\.\s?-?){1,3}\s?[A-Z][a-z][A-Za-z'’\-]+(?=\d*(?:,|\.|\s+(?:and|&)\s))")
# "12. Ovretveit J:", "[5] W. Cirne and": a number, then an author (not "2. Results In total…").
_NUMBERED_ENTRY = re.compile(r"^\s*(?:\[\d{1,3}\]|\d{1,3}\.)\s+(?:[A-Z][A-Za-z'’\-]+,?\s+(?:[A-Z]{1,3}\b|[A-Z]\.)|(?:[A-Z]\.\s?-?){1,3}[A-Z][a-z])")

# Weaker marks, which running text has too ("Xiong et al. (2020a) use…"): a year in brackets,
# a volume and its pages after a comma ("18(1), 12–19."), one author. A reference style that
# puts each of them in a sentence of its own ("Streitberg B, Röhmel J (1987)." / "“Exakte
# Verteilungen…”" / "EDV in Medizin und Biologie, 18(1), 12–19.") is told by the run they make.
_CITED_YEAR = re.compile(r"\((?:1[89]|20)\d\d[a-z]?\)")
# A year where an entry puts it: in brackets, or set off by punctuation ("Harris, A. W. 2015, in").
_ENTRY_YEAR = re.compile(_CITED_YEAR.pattern + r"|[.,]\s(?:1[89]|20)\d\d[a-z]?[.,;:]")
_VOLUME_COMMA_PAGES = re.compile(r"\b\d{1,4}\s*(?:\([^()]{1,8}\))?,\s*[A-Za-z]?\d{1,6}\s*[-–]\s*[A-Za-z]?\d{1,6}\.?\s*$")

LIST_SHARE = 0.6  # a passage this much reference entries (by characters) is a reference list
# A reference list's heading: its name, numbered or not ("6. REFERENCES", "VII. References"), in
# English or in the other languages papers are written in ("7. Bibliografía", "Références
# bibliographiques", "Literaturverzeichnis"). Unnumbered only, an ACM paper's "6. REFERENCES" and a
# Spanish paper's "7. Bibliografía" (15 passages of the mixed-fields library) were evidence where
# their entries read less than LIST_SHARE as entries.
_BIBLIOGRAPHY = re.compile(
    r"^(?:\d+(?:\.\d+)*\.?|[IVXL]+\.)?\s*(?:references?(?: and notes)?|bibliography|literature(?: cited)?|works cited"
    r"|bibliograf[ií]a|referencias(?: bibliogr[aá]ficas)?|bibliographie|r[ée]f[ée]rences(?: bibliographiques)?"
    r"|literaturverzeichnis|literatur|refer[êe]ncias(?: bibliogr[aá]ficas)?|bibliografia|riferimenti bibliografici)$",
    re.I)


def _authors(text: str) -> int:
    return max(len(_SURNAME_INITIALS.findall(text)), len(_SURNAME_COMMA_INITIALS.findall(text)),
               len(_INITIALS_SURNAME.findall(text)))


def is_entry(unit: str) -> bool:
    """The unit reads as (part of) an entry of a reference list."""
    # Three names with initials, or two beside a year: "Hepatitis B and Hepatitis C." is two, not a list.
    authors = _authors(unit)
    if _NUMBERED_ENTRY.match(unit) or _LINK.search(unit) or authors >= 3:
        return True
    if not _YEAR.search(unit):
        return False
    return bool((authors >= 2 and _ENTRY_YEAR.search(unit)) or _VOLUME_PAGES.search(unit) or _VENUE.search(unit)
                or (_VOLUME_LONG_PAGES.search(unit) and authors >= 1))


def _weak_marks(unit: str) -> set[str]:
    marks = set()
    if _CITED_YEAR.search(unit):
        marks.add("year")
    if _VOLUME_COMMA_PAGES.search(unit):
        marks.add("pages")
    if _authors(unit):
        marks.add("author")
    return marks


def entry_marks(text: str, units: list[tuple[int, int, str]]) -> list[bool]:
    """Which of `text`'s units (chunking.text_units) are reference entries.

    A unit is one by its own marks (`is_entry`), or as part of a run of units with weak marks
    that together make an entry: a bracketed year and a volume's pages, with units of authors
    between them. A unit between two entries counts with them (a title).
    """
    # Code, tables and equations are never entries: their dates and times look like volumes and pages.
    strong = [kind == "text" and is_entry(text[a:b]) for a, b, kind in units]
    weak = [_weak_marks(text[a:b]) if kind == "text" else set() for a, b, kind in units]
    marked = list(strong)
    i = 0
    while i < len(units):
        j = i
        while j < len(units) and (weak[j] or strong[j]):
            j += 1
        if j - i >= 2 and {"year", "pages"} <= set().union(*weak[i:j]):
            marked[i:j] = [True] * (j - i)
        i = j + 1
    for i in range(1, len(units) - 1):
        if not marked[i] and marked[i - 1] and marked[i + 1]:
            marked[i] = True  # a title between two entries
    return marked


def entry_spans(text: str) -> list[tuple[int, int]]:
    """Spans of `text` that are reference entries (`entry_marks`)."""
    units = text_units(text)
    return [(a, b) for (a, b, _), m in zip(units, entry_marks(text, units)) if m]


def entry_share(text: str) -> float:
    """The share of `text`'s characters in reference entries."""
    size = len(text.strip())
    return sum(b - a for a, b in entry_spans(text)) / size if size else 0.0


def is_bibliography(section: str) -> bool:
    return bool(_BIBLIOGRAPHY.match(section.strip().strip("#").strip()))


def is_reference_list(text: str, section: str = "") -> bool:
    """A passage of a reference list: by its section's name, or by its text (LIST_SHARE entries)."""
    return is_bibliography(section) or entry_share(text) >= LIST_SHARE
