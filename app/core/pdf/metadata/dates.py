"""The publication date printed on the first page, judged by what the words around it say.

Every date or year on the front matter, the page margins and footnotes is a candidate with a
weight: the arXiv stamp and "Published:"/"This version:" dates weigh most, then a journal line
("Journal 15 (2014) 1929–1958", "Ann Surg 2023;277"), then a copyright line, then accepted and
received dates, then any date. Years in the body text (citations) are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_YEAR = r"((?:19|20)\d{2})"

# (weight, pattern for the words before the date), read in any case
_CUES = [(weight, re.compile(pattern, re.I)) for weight, pattern in (
    (5, r"\b(published|publication date|this version(?: (?:was )?(?:compiled|built|generated|updated|posted))?|date of publication|"
        r"available online|(?:typeset|compiled|built|generated|rendered)(?: on)?)\b\W{0,3}(online\W{0,3})?(on\W{0,3})?$"),
    (4, r"\b(draft version|version of|issue date|date)\b\W{0,3}$"),
    (3, r"(©|\(c\)|\bc⃝|copyright)\W{0,3}$"),
    (2, r"\baccepted\b\W{0,3}(for publication\W{0,3})?(on\W{0,3})?$"),
    # An archive's "posted"/"uploaded" date is when the file went online there, not the paper's date.
    (1, r"\b(received|submitted|revised|first version|posted|uploaded|deposited)\b.{0,20}$"),
)]


_PATTERNS: dict[str, str] = {
    "date_mdy": "(?i)" + _MONTH + r"\s+(\d{1,2})(?:\s*[-–]\s*\d{1,2})?(?:st|nd|rd|th)?,?\s+" + _YEAR + r"\b",
    "date_dmy": r"(?i)\b(\d{1,2})(?:st|nd|rd|th)?\.?\s+" + _MONTH + r",?\s+" + _YEAR + r"\b",
    "date_iso": r"\b" + _YEAR + r"-(0[1-9]|1[0-2])-([0-2]\d|3[01])\b",
    "month_year": r"(?i)\b" + _MONTH + r",?\s+" + _YEAR + r"\b",
    "any_year": r"(?<![\d.])" + _YEAR + r"(?![\d])",
    "arxiv_stamp": r"(?i)arxiv:\S+\s+\[[^\]]+\]\s+(\d{1,2})\s+" + _MONTH + r"\s+" + _YEAR,
    # A journal or proceedings line: a year in brackets beside volume or page numbers, or beside
    # volume/issue words. "(1986)" after a name, or "1998, 2005" in a list, is a citation instead.
    "journal_year": r"(?i)\d[a-z]?[,:]?\s*\(" + _YEAR + r"\)|\(" + _YEAR + r"\)\s*[,:;]?\s*\d"
                    + r"|\b" + _YEAR + r"\s*[;,]\s*(?!(?:19|20)\d{2}\b)\d"
                    + r"|\bvol(?:ume)?\.?\s*\d+(?:\s*[,(]?\s*(?:no|number|issue|iss)\.?\s*\d+\)?)?\D{0,16}?" + _YEAR
                    + r"|\b(?:volume|vol\.?)\s+" + _YEAR
                    + r"|[a-z]{2}\.?\s+" + _YEAR + r"\s*,\s*\d+\s*[,:]",
    # A line that holds nothing but a date ("October 31, 2022", "2006" under the author block) dates
    # the document, as report and vignette title blocks do; "(2006)." is a citation cut by a line end.
    "date_line": r"(?i)^(?:date\s*:?\s*)?(?:(?:\d{1,2}\.?\s+)?" + _MONTH + r",?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?)?" + _YEAR + r"\.?$",
    # "a modified version of Zeileis (2004), published in …": vignettes and preprints say where
    # the paper appeared, while their PDF metadata dates the file's last build. "Hothorn et al.
    # (2008a)": a letter tells two papers of a year apart.
    "published_as": r"(?i)\b(?:published|version of|reprint of|appeared)\b(?:[^.]|\.(?!\s+[A-Z])){0,160}?\b(19[5-9]\d|20\d{2})[a-z]?\b",
    # A "cite this article as" line quotes the paper's own reference, year included, after a list of
    # authors that may be long ("Citation: Agyeman-Duah JNA, Theurer A, … (2014) Understanding …").
    "cite_as": r"(?i)\b(?:cite (?:this (?:article|paper) )?as|how to cite(?: this (?:article|paper))?|citation|reference)\s*:"
               r"[^()]{0,240}?\(" + _YEAR + r"[a-z]?\)",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


@dataclass
class DateFound:
    value: str  # ISO date or year
    weight: int
    position: int


def _month(name: str) -> int:
    name = name.lower().rstrip(".")[:3]
    return next(i + 1 for i, m in enumerate(_MONTHS) if m.startswith(name))


def _iso(y: int, m: int, d: int) -> str:
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return str(y)


def _plausible(year: str) -> bool:
    return 1900 <= int(year) <= date.today().year + 1


def _dates_in(text: str) -> list[tuple[int, int, str]]:
    """(start, end, value) of the dates and years written in `text`, full dates first."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match, value: str) -> None:
        if any(a <= m.start() < b for a, b in taken):
            return
        taken.append((m.start(), m.end()))
        found.append((m.start(), m.end(), value))

    for m in P["date_mdy"].finditer(text):
        add(m, _iso(int(m.group(3)), _month(m.group(1)), int(m.group(2))))
    for m in P["date_dmy"].finditer(text):
        add(m, _iso(int(m.group(3)), _month(m.group(2)), int(m.group(1))))
    for m in P["date_iso"].finditer(text):
        add(m, _iso(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in P["month_year"].finditer(text):
        add(m, m.group(2))
    for m in P["any_year"].finditer(text):
        add(m, m.group(1))
    return sorted((f for f in found if _plausible(f[2][:4])), key=lambda f: f[0])


def candidates(front_text: str, stamp_text: str) -> list[DateFound]:
    """Weighted dates in the front matter text (header, title block, footnotes, margins)."""
    out: list[DateFound] = []
    m = P["arxiv_stamp"].search(stamp_text)
    if m:
        out.append(DateFound(_iso(int(m.group(3)), _month(m.group(2)), int(m.group(1))), 6, -1))
    flat = " ".join(front_text.split())
    offset = 0
    for line in front_text.splitlines():
        if P["date_line"].match(line.strip()):
            value = _first_date(line) or P["any_year"].search(line).group(1)
            if _plausible(value[:4]):
                out.append(DateFound(value, 4, offset))
        offset += len(line.split()) and len(" ".join(line.split())) + 1
    m = P["cite_as"].search(flat)
    if m:
        out.append(DateFound(m.group(1), 4, m.start()))
    m = P["published_as"].search(flat)
    if m:
        out.append(DateFound(_first_date(m.group(0)) or m.group(1), 4, m.start()))
    for start, end, value in _dates_in(flat):
        before = flat[max(0, start - 40):start]
        weight = 0 if len(value) == 4 else 1  # a bare year counts least
        for w, rx in _CUES:
            if rx.search(before):
                weight = max(weight, w)
                break
        out.append(DateFound(value, weight, start))
    for m in P["journal_year"].finditer(flat):
        year = next(g for g in m.groups() if g)
        if _plausible(year):
            out.append(DateFound(year, 4, m.start()))
    return out


def first_full_date(text: str) -> str:
    return _first_date(text)


def _first_date(text: str) -> str:
    full = [v for _, _, v in _dates_in(text) if len(v) > 4]
    return full[0] if full else ""


def best(found: list[DateFound]) -> DateFound | None:
    if not found:
        return None
    top = max(f.weight for f in found)
    picks = sorted((f for f in found if f.weight == top), key=lambda f: f.position)
    pick = picks[0]
    # Prefer the full date of the same year when one was written with the same weight.
    for f in picks:
        if f.value[:4] == pick.value[:4] and len(f.value) > len(pick.value):
            return f
    return pick


def metadata_date(info: dict[str, str]) -> str:
    for key in ("creationDate", "modDate"):
        m = re.match(r"(?:D:)?((?:19|20)\d{2})(\d{2})?(\d{2})?", info.get(key, ""))
        if m:
            y, mo, d = m.groups()
            return _iso(int(y), int(mo), int(d)) if mo and d else y
    return ""
