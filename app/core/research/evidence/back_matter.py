"""A paper's back matter is not evidence: acknowledgements, author contributions, funding,
competing interests, and the "downloaded from" lines a publisher stamps on every page.

They name the paper's subject and its people ("This work was funded by the Wheat Initiative
grant for heat-stress metabolomics"; "A.B. designed the heat-stress experiments"), so they
match a question's words and were quoted as the support of a claim about a study's design.
They say who did or paid for the work, never what it found.

Told by layout, the same in every field: the section they sit under (the heading the extractor
read: `is_back_matter_section`), or a run-in heading that opens the paragraph ("Funding: …",
"Author contributions. …", "Acknowledgements We thank …": `is_back_matter_unit`). The heading
names are the standard section names of journals' back matter (ICMJE, CRediT, the BMC / PLOS /
Elsevier / Springer templates), not phrases of one paper. A data or code availability
statement is kept: researchers ask where the data are.
"""

from __future__ import annotations

import re

from .front_matter import is_front_matter

# The names of back-matter sections, as headings print them (singular or plural, US or UK spelling).
_NAMES = (r"acknowledge?ments?|acknowledge?ment of funding|author(?:s'?|'s)? contributions?|contributions? of (?:the )?authors?"
          r"|credit authorship contribution statement|funding(?: (?:information|sources?|statement))?|financial support"
          r"|financial disclosures?|sources? of funding|competing (?:financial )?interests?|conflicts? of interests?"
          r"(?: statement| disclosures?)?|declarations? of (?:competing )?interests?|disclosures?|disclosure statement"
          r"|ethics declarations?|consent for publication|publisher'?s note|author information"
          r"|additional information(?: and declarations)?|grant disclosures?"
          r"|author details|supplementary (?:information|materials?)|supporting information|additional files?")
_SECTION = re.compile(rf"^\W*(?:\d+(?:\.\d+)*\.?\s+)?(?:{_NAMES})\W*$", re.I)
# A run-in heading: the name, then a colon, a full stop or a dash, a line break, or after a space
# a capitalised sentence ("Acknowledgements We thank the field staff …"), a list's bullet
# ("Author Contributions • A.W. performed …") or an affiliation's mark ("Author details 1Project …").
_RUN_IN = re.compile(rf"^\W*(?:{_NAMES})(?:\s*[:.—–-]\s*|[ \t]*\n|\s+(?=\d{{0,2}}(?-i:[A-Z])|[•·▪∙*]))", re.I)
# The stamp a publisher's server adds to a downloaded copy, on every page: it opens the line and
# names an address ("Downloaded from https://academic.oup.com/… by guest", "This content
# downloaded from 128.42.0.1"), unlike a method ("Sequences were downloaded from GenBank").
_DOWNLOADED = re.compile(r"^\W*(?:this (?:article|content|pdf) (?:was )?)?downloaded (?:from|by)\s+"
                         r"(?:https?://|www\.|\d{1,3}(?:\.\d{1,3}){3}\b|[\w-]+(?:\.[\w-]+)*\.(?:com|org|edu|net|gov)\b)", re.I)


# Typeset headings print the apostrophe curly ("Authors’ contributions": 6 of the 30 mixed-fields
# papers) or as a prime; the names above spell it straight.
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "′": "'", "`": "'"})


# A data or code availability statement under a back-matter section ("Additional information and
# declarations" holds Funding, Author Contributions, Data Availability…) is evidence again.
_AVAILABILITY = re.compile(r"^\W*(?:(?:data|code|software|materials?)(?:,? (?:and )?(?:data|code|software|materials?))* "
                           r"availability|availability of (?:data|code|materials?)[\w ]*?)(?: statement)?\b", re.I)


# Stage 2 sees a whole passage: it holds such a statement where one opens a line or follows a
# full stop or a colon ("… no role in the study. Data Availability The following …").
_HOLDS_AVAILABILITY = re.compile(r"(?:^|[\n.:]\s*)(?:Data|Code|Software|Materials?)(?:,? (?:and )?(?:data|code|software|materials?))* "
                                 r"[Aa]vailability")


def is_back_matter_passage(section: str, text: str) -> bool:
    """A passage under a back-matter heading, which holds no data or code availability statement."""
    return is_back_matter_section(section) and not _HOLDS_AVAILABILITY.search(text)


def opens_availability(text: str) -> bool:
    """The unit is, or opens with, a data or code availability heading: what follows is evidence."""
    return bool(_AVAILABILITY.match(text))


def is_back_matter_section(section: str) -> bool:
    """The heading of a passage's section names back matter."""
    return bool(section) and bool(_SECTION.match(section.translate(_APOSTROPHES).strip().strip("#").strip()))


def is_back_matter_unit(text: str) -> bool:
    """A sentence or paragraph that opens with a back-matter heading run into it, or a download stamp."""
    text = text.translate(_APOSTROPHES)
    return bool(_RUN_IN.match(text) or _DOWNLOADED.search(text))


def is_paper_matter(text: str, kind: str) -> bool:
    """Front or back matter (a contact or history line, a licence, acknowledgements…) in a text
    unit, or in a block set apart ("Corresponding author\nMary J. …"); never a listing or a
    table, whose lines may hold an address ("Maintainer: Who <you@…>")."""
    if kind != "text" and text.startswith(("```", "|")):
        return False
    return is_front_matter(text) or is_back_matter_unit(text)
