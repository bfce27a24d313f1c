"""What is not evidence: the text of a paper that names a question's words but never answers it.

Each check decides one thing, told by layout and form (the same in every field), never by a
paper's own phrases. Its place is earned on `bench/ablate_evidence.py` (161 development questions,
each check switched off in turn; docs/research.md's table):

- **Front matter** (`is_front_matter`): contact lines, affiliations, bylines with degrees, the
  article's licence, copyright, keyword and classification lines, the editorial history, "how to
  cite", the article-type label. They sit beside the abstract and share the question's words;
  the first turn's window grew into "* Correspondence: …" and a keyword line was quoted as a key
  sentence. Kept: a licence or contact line that says where data or code are available.
- **Back matter** (`is_back_matter_section`, `is_back_matter_unit`): acknowledgements, author
  contributions, funding, competing interests (the journals' standard section names: ICMJE,
  CRediT, BMC / PLOS / Elsevier / Springer), by their heading or run in ("Funding: …"), and a
  publisher's "downloaded from" stamp. They say who did or paid for the work, never what it found.
  A data or code availability statement under them is evidence again (`opens_availability`).
  Front and back matter off in focusing: −2 questions with every fact focused, −1 in the first turn.
  Stage 2 drops a passage under a back-matter heading (`is_back_matter_passage`): off, 7 questions'
  stage-2 passages (the evidence pane, `--evidence-only`) hold back matter.
- **Reference entries** (`entry_marks`, `is_entry`): volume and pages, a DOI, an author list, a
  numbered author; a run of weak marks (a bracketed year, then pages); a title between two
  entries. Running text that cites has years but none of these. Off in focusing: facts unchanged,
  but 7 of 161 questions read reference entries.
- **Reference lists** (`is_reference_list`): a passage under a bibliography heading (any of the
  languages papers are written in) or LIST_SHARE entries by its text. Stage 2 drops them: off, 82
  questions' stage-2 passages hold one. The manuscript check's paper reading (check/locate.py,
  check/manuscript.py) leaves them out too.
- **Axis ticks** (`is_axis_ticks`): four or more numbers stepping evenly, standing apart, with a
  short label ("20 40 60 80 100 k: # of retrieved passages"); a model answered that the scores
  "were 0.00, 0.25, 0.50, 0.75, and 1.00". Off: 7 of 161 questions read ticks.

The patterns are one table (`_PATTERNS`, compiled once into `P`); "(?i)" opens those that read
any case.
"""

from __future__ import annotations

import re

from ...pdf.page_furniture import COPYRIGHT_NOTICE
from ...units import text_units

# The names of back-matter sections, as headings print them (singular or plural, US or UK spelling).
_BACK_NAMES = (r"acknowledge?ments?|acknowledge?ment of funding|author(?:s'?|'s)? contributions?|contributions? of (?:the )?authors?"
               r"|credit authorship contribution statement|funding(?: (?:information|sources?|statement))?|financial support"
               r"|financial disclosures?|sources? of funding|competing (?:financial )?interests?|conflicts? of interests?"
               r"(?: statement| disclosures?)?|declarations? of (?:competing )?interests?|disclosures?|disclosure statement"
               r"|ethics declarations?|consent for publication|publisher'?s note|author information"
               r"|additional information(?: and declarations)?|grant disclosures?"
               r"|author details|supplementary (?:information|materials?)|supporting information|additional files?")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}|{_MONTH}\s+\d|(?:19|20)\d\d\b|\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d)"
_CITED_YEAR = r"\((?:1[89]|20)\d\d[a-z]?\)"

_PATTERNS: dict[str, str] = {
    # -- front matter
    # An e-mail address, "Corresponding author", "Correspondence: …"; not "a one-to-one correspondence".
    "contact": r"(?i)[\w.+-]+@[\w-]+\.[a-z]{2,}|\bcorresponding authors?\b|\bcorrespondence(?:\s+to)?\s*:|\baddress correspondence\b|\borcid\b",
    "institution": r"\b(?:Universit(?:y|ät|é|à|at|ad|e)|Institut[eo]?|Department|Dept\.|College|School of|Hospital|"
                   r"Cent(?:er|re) for|Laboratory|Laboratoire|Faculty of)\b",
    # A byline's degree is followed by a comma or an author mark, never by a word ("MS patients").
    "degrees": r",\s*(?:MD|Ph\.?D|MPH|MBA|MBBS|MSc|MS|MSN|RN|DPhil|DrPH|FRCS|FACS)\s*(?:[,*†‡§¶✉]|$)",
    "says_available": r"(?i)\bavailab|\brequest|\bdata\b|\bcode\b|\bsoftware\b",
    # "Keywords:", "Index Terms—", "JEL codes:", "MSC 2010:"; a colon, a full stop or a dash follows
    # the label, or (in bold, PeerJ) a capitalised list of three or more: "Keywords matter …" is a sentence.
    "keywords": r"(?i)^\W*(?:key\s*-?words?|index\s+terms|jel(?:\s+classifications?)?(?:\s+codes?)?|"
                r"(?:msc|ams)(?:\s+(?:subject\s+)?classifications?)?(?:\s*\(?\d{4}\)?)?|subject\s+classifications?)"
                r"(?:\s*[:.—–-]|\s+(?=(?-i:[A-Z])[^,;]*[,;][^,;]*[,;]))",
    "cite_as": r"(?i)\bhow to cite this (?:article|paper)\b|\bcite this (?:article|paper) as\s*:|\bto cite this (?:article|version)\s*:",
    # The label a journal sets before the title ("RESEARCH ARTICLE …", "REVIEW Open Access").
    "article_type": r"^(?:(?:RESEARCH|ORIGINAL|REVIEW|BRIEF|SHORT|CASE|SYSTEMATIC REVIEW)(?: (?:ARTICLE|RESEARCH|PAPER|REPORT|COMMUNICATION))?"
                    r"|OPEN ACCESS|Open Access)(?: Open Access)?(?=\s|$)",
    "article_licence": r"(?i)\bcreative\s+commons\b|\bCC[ -]BY\b|\bopen[ -]access\s+article\b|\bpermits\s+unrestricted\s+use\b|"
                       r"\boriginal\s+(?:work|author\(?s?\)?(?:\s+and\s+source)?)\s+(?:is|are)\s+properly\s+(?:cited|credited)\b",
    # "Received: 4 September 2013", "Accepted for publication in JINST.", not "Received signal strength fell".
    "history": r"(?i)^\W*(?:received|accepted|published(?: online)?|revised|submitted)"
               rf"(?:\s*[:;)]|\s*$|\s+(?:on\s+)?{_DATE}|\s+(?:for publication|in (?:revised|final) form)\b)",
    # -- back matter
    "back_section": rf"(?i)^\W*(?:\d+(?:\.\d+)*\.?\s+)?(?:{_BACK_NAMES})\W*$",
    # Run in: the name, then a colon, a full stop, a dash or a line break, or after a space a capitalised
    # sentence, a bullet or an affiliation's mark ("Author details 1Project …").
    "back_run_in": rf"(?i)^\W*(?:{_BACK_NAMES})(?:\s*[:.—–-]\s*|[ \t]*\n|\s+(?=\d{{0,2}}(?-i:[A-Z])|[•·▪∙*]))",
    # A publisher's stamp names an address, unlike a method ("Sequences were downloaded from GenBank").
    "downloaded": r"(?i)^\W*(?:this (?:article|content|pdf) (?:was )?)?downloaded (?:from|by)\s+"
                  r"(?:https?://|www\.|\d{1,3}(?:\.\d{1,3}){3}\b|[\w-]+(?:\.[\w-]+)*\.(?:com|org|edu|net|gov)\b)",
    "availability": r"(?i)^\W*(?:(?:data|code|software|materials?)(?:,? (?:and )?(?:data|code|software|materials?))* "
                    r"availability|availability of (?:data|code|materials?)[\w ]*?)(?: statement)?\b",
    # Stage 2 sees a whole passage: a statement opens a line or follows a full stop or a colon.
    "holds_availability": r"(?:^|[\n.:]\s*)(?:Data|Code|Software|Materials?)(?:,? (?:and )?(?:data|code|software|materials?))* "
                          r"[Aa]vailability",
    # -- reference entries and lists
    "year": r"(?<![\d.])(?:1[89]|20)\d\d[a-z]?(?![\d.]\d)",
    # Volume and pages after the year ("2004, 40:958-64"), or a volume's page range ("24(8):1586–1591");
    # not times of day ("10:34:02").
    "volume_pages": r"(?<![\d.])(?:1[89]|20)\d\d[a-z]?\s*[,;]\s*\d{1,4}\s*(?:\([^()]{1,12}\))?\s*:\s*[A-Za-z]?\d{1,6}(?![:\d])"
                    r"|(?<![:\d])\d{1,4}\s*(?:\([^()]{1,12}\))?\s*:\s*[A-Za-z]?\d{1,6}\s*[-–]\s*[A-Za-z]?\d{1,6}(?![:\d])",
    "volume_long_pages": r"\b\d{1,4},\s*[A-Za-z]?\d{3,6}\s*[-–]\s*[A-Za-z]?\d{2,6}\b",  # "28, 9610–9618"
    # A DOI or an archive's identifier; a plain web address is not enough (software is cited with one).
    "link": r"(?i)\bdoi\s*:|\bdoi\s+10\.|\bdoi\.org|\barxiv\s*:|\bISBN\b|\bISSN\b|\[cited\b|\baccessed\s+(?:on\s+)?\d",
    "venue": r"(?i)\bIn\s+(?:Proc(?:eedings|\.)|[A-Z][A-Za-z]+\s+(?:Conference|Symposium|Workshop))\b|\bpp\.\s*\d|"
             r"\bpages\s+\d+\s*[-–]\s*\d+|\bvol(?:\.|ume)\s*\d",
    # Authors: "Hoff WS," (not "Type II,"), "Shadmehr, R.", "D. G. Feitelson".
    "surname_initials": r"\b[A-Z][A-Za-z'’\-]+\s+(?!(?:I{1,3}|IV|VI{0,3}|IX|X{1,3})\b)[A-Z]{1,3}(?=[,:.]|\s+(?:and|&)\b)",
    "surname_comma_initials": r"\b[A-Z][A-Za-z'’\-]+,\s+(?:[A-Z]\.\s?-?){1,3}(?![A-Za-z])",
    "initials_surname": r"(?<![A-Za-z.])(?:[A-Z]\.\s?-?){1,3}\s?[A-Z][a-z][A-Za-z'’\-]+(?=\d*(?:,|\.|\s+(?:and|&)\s))",
    # "12. Ovretveit J:", "[5] W. Cirne and": a number, then an author (not "2. Results In total…").
    "numbered_entry": r"^\s*(?:\[\d{1,3}\]|\d{1,3}\.)\s+(?:[A-Z][A-Za-z'’\-]+,?\s+(?:[A-Z]{1,3}\b|[A-Z]\.)|(?:[A-Z]\.\s?-?){1,3}[A-Z][a-z])",
    # Weak marks, which running text has too: a year in brackets, a volume and its pages after a comma.
    "cited_year": _CITED_YEAR,
    "entry_year": _CITED_YEAR + r"|[.,]\s(?:1[89]|20)\d\d[a-z]?[.,;:]",  # or set off: "Harris, A. W. 2015, in"
    "volume_comma_pages": r"\b\d{1,4}\s*(?:\([^()]{1,8}\))?,\s*[A-Za-z]?\d{1,6}\s*[-–]\s*[A-Za-z]?\d{1,6}\.?\s*$",
    # A reference list's heading, numbered or not ("6. REFERENCES", "VII. References", "7. Bibliografía").
    "bibliography": r"(?i)^(?:\d+(?:\.\d+)*\.?|[IVXL]+\.)?\s*(?:references?(?: and notes)?|bibliography|literature(?: cited)?|works cited"
                    r"|bibliograf[ií]a|referencias(?: bibliogr[aá]ficas)?|bibliographie|r[ée]f[ée]rences(?: bibliographiques)?"
                    r"|literaturverzeichnis|literatur|refer[êe]ncias(?: bibliogr[aá]ficas)?|bibliografia|riferimenti bibliografici)$",
    # -- axis ticks
    "tick": r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?![\w.]*\d)",
    "tick_gap": r"\s+(?:[A-Za-z]+\s+)?",  # ticks stand apart, or each after one word ("Feb 01 Feb 03")
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}

HISTORY_WORDS = 30  # a history line is short; a longer unit has run into the text after it
KEYWORD_LINE_WORDS = 40  # a keyword list; a longer unit has run into the text after it
AFFILIATION_WORDS = 15  # an affiliation line is short; a sentence naming a university is not one
LIST_SHARE = 0.6  # a passage this much reference entries (by characters) is a reference list
MIN_TICKS = 4  # three evenly spaced numbers happen in text ("1, 2 and 3"); four in a row rarely
LABEL_WORDS = 6  # words besides the ticks: an axis label ("k: # of retrieved passages")
# Typeset headings print the apostrophe curly ("Authors’ contributions") or as a prime.
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "′": "'", "`": "'"})


def is_front_matter(text: str) -> bool:
    """A contact line, a copyright notice, the article's licence, a byline with degrees, a keyword
    line, the editorial history, "how to cite", an article-type label, or an affiliation (an
    institution named in a short line that is not a sentence, or a list of two or more)."""
    words = len(text.split())
    if (P["keywords"].match(text) and words <= KEYWORD_LINE_WORDS) or (P["history"].match(text) and words <= HISTORY_WORDS):
        return True
    available = P["says_available"].search(text)
    if COPYRIGHT_NOTICE.search(text) or P["cite_as"].search(text):
        return True
    if (P["contact"].search(text) or P["article_licence"].search(text)) and not available:
        return True
    sentence = text.rstrip().endswith(".") and not text.rstrip().endswith(("Inc.", "Ltd.", "Dept."))
    if (P["article_type"].match(text) or P["degrees"].search(text)) and not sentence:
        return True
    institutions = len(P["institution"].findall(text))
    if not institutions or sentence:
        return False
    return words <= AFFILIATION_WORDS or (institutions >= 2 and "," in text)


def is_back_matter_section(section: str) -> bool:
    """The heading of a passage's section names back matter."""
    return bool(section) and bool(P["back_section"].match(section.translate(_APOSTROPHES).strip().strip("#").strip()))


def is_back_matter_unit(text: str) -> bool:
    """A sentence or paragraph that opens with a back-matter heading run into it, or a download stamp."""
    text = text.translate(_APOSTROPHES)
    return bool(P["back_run_in"].match(text) or P["downloaded"].search(text))


def opens_availability(text: str) -> bool:
    """The unit is, or opens with, a data or code availability heading: what follows is evidence."""
    return bool(P["availability"].match(text))


def is_back_matter_passage(section: str, text: str) -> bool:
    """A passage under a back-matter heading, which holds no data or code availability statement."""
    return is_back_matter_section(section) and not P["holds_availability"].search(text)


def is_paper_matter(text: str, kind: str) -> bool:
    """Front or back matter in a text unit, or in a block set apart ("Corresponding author\\nMary J. …");
    never a listing or a table, whose lines may hold an address ("Maintainer: Who <you@…>")."""
    if kind != "text" and text.startswith(("```", "|")):
        return False
    return is_front_matter(text) or is_back_matter_unit(text)


def _authors(text: str) -> int:
    return max(len(P[name].findall(text)) for name in ("surname_initials", "surname_comma_initials", "initials_surname"))


def is_entry(unit: str) -> bool:
    """The unit reads as (part of) an entry of a reference list."""
    # Three names with initials, or two beside a year: "Hepatitis B and Hepatitis C." is two, not a list.
    authors = _authors(unit)
    if P["numbered_entry"].match(unit) or P["link"].search(unit) or authors >= 3:
        return True
    if not P["year"].search(unit):
        return False
    return bool((authors >= 2 and P["entry_year"].search(unit)) or P["volume_pages"].search(unit) or P["venue"].search(unit)
                or (P["volume_long_pages"].search(unit) and authors >= 1))


def _weak_marks(unit: str) -> set[str]:
    marks = {"year"} if P["cited_year"].search(unit) else set()
    if P["volume_comma_pages"].search(unit):
        marks.add("pages")
    if _authors(unit):
        marks.add("author")
    return marks


def entry_marks(text: str, units: list[tuple[int, int, str]]) -> list[bool]:
    """Which of `text`'s units (units.text_units) are reference entries: by their own marks
    (`is_entry`), or as a run of units with weak marks that together make an entry (a bracketed
    year and a volume's pages, with units of authors between them), or between two entries (a title).
    Code, tables and equations never are: their dates and times look like volumes and pages."""
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
    return bool(P["bibliography"].match(section.strip().strip("#").strip()))


def is_reference_list(text: str, section: str = "") -> bool:
    """A passage of a reference list: by its section's name, or by its text (LIST_SHARE entries)."""
    return is_bibliography(section) or entry_share(text) >= LIST_SHARE


def _even_run(values: list[float]) -> tuple[int, int]:
    """The longest run of values stepping by one nonzero difference, as (start, length)."""
    best = (0, min(1, len(values)))
    i = 0
    while i < len(values) - 1:
        step = values[i + 1] - values[i]
        j = i + 1
        while j + 1 < len(values) and abs(values[j + 1] - values[j] - step) <= 1e-9 * max(1.0, abs(step)):
            j += 1
        if step and j - i + 1 > best[1]:
            best = (i, j - i + 1)
        i = j
    return best


def is_axis_ticks(unit: str) -> bool:
    """MIN_TICKS numbers stepping evenly, standing apart, with at most a short label beside them; never
    code and its output (R prints indices that step evenly), nor an equation's indices ("β0 + β1 · x1")."""
    text = unit.strip()
    if text.startswith("```"):
        return False
    found = list(P["tick"].finditer(text))
    start, length = _even_run([float(m.group().replace("−", "-")) for m in found])
    if length < MIN_TICKS:
        return False
    ticks = found[start:start + length]
    if not all(P["tick_gap"].fullmatch(text[a.end():b.start()]) for a, b in zip(ticks, ticks[1:])):
        return False
    rest = text[:ticks[0].start()] + " " + text[ticks[-1].end():]
    # The numbers between the ticks are removed with them; the label is what remains.
    return len([w for w in rest.split() if not P["tick"].fullmatch(w)]) <= LABEL_WORDS
