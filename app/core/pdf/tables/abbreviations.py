"""A table's abbreviations read out in its rows: "VS = vincristine sulphate · LC50 (µg/ml): 0.28".

Tables name their rows and columns in short forms the table's notes define ("VS: vincristine
sulphate (Std.), HF: n-hexane soluble fractions …"; "BMI, body mass index; HR, hazard ratio").
A row unit read alone kept only the short form, so a question about "the positive control" or
"the n-hexane fraction" did not match it, and a model reading "VS · LC50: 0.28" could not say
what the control was. Here a row name or column header that reads as an abbreviation, and that
its page defines in a table note's form, is written with its long form.

Two forms are read. A note on the table's page — the abbreviation, then ":", "=" or "," and the
long form up to ";" or "." (after ":" and "=", a "," too), as journals of every field set them;
the long form must be words, not figures or another abbreviation of the table. And the running
text's first use, on the table's page or a page before it — the long form, then the abbreviation
in brackets ("the positive control vincristine sulphate (VS)"), read by acronyms.py. A note on the
table's page wins over the running text.
"""

from __future__ import annotations

import re

from ...text.acronyms import flatten
from ...units import ABBR_SEP

MAX_LONG = 80  # characters: a long form is a name, not a sentence
_RUNNING = {"and", "or", "but", "which", "that", "while", "whereas", "with", "where", "when", "as", "is", "are", "was", "were"}
_SHORT = re.compile(r"^(?=(?:.*[A-Z]){2})[A-Za-z0-9αβγδ/+-]{2,8}$")  # "VS", "AQF", "FV/FM", "IL-6": two capitals at least


def is_abbreviation(cell: str) -> bool:
    return bool(_SHORT.match(cell.strip())) and not cell.strip().isdigit()


def note_definitions(text: str, wanted: set[str]) -> dict[str, str]:
    """{"VS": "vincristine sulphate"} for each of `wanted` that `text` defines in a note's form."""
    flat = flatten(text)
    out: dict[str, str] = {}
    for short in sorted(wanted, key=len, reverse=True):
        for m in re.finditer(rf"(?<![\w/-]){re.escape(short)}\s*([:=,])\s+", flat):
            before = flat[:m.start()].rstrip().lower()
            in_list = before.endswith((";", ":", "abbreviations"))
            long_form = _long_form(flat[m.end():], m.group(1), wanted, in_list)
            if long_form:
                out[short] = long_form
                break
    return out


def _long_form(rest: str, mark: str, wanted: set[str], in_list: bool) -> str:
    """The long form opening `rest`; "" where it reads as running text. After a comma ("BMI, body
    mass index;") it must end a list item: a ";" after it, or one before the abbreviation."""
    stops = r";|\.\s|\.$" if mark == "," else r";|,\s|\.\s|\.$"
    m = re.match(rf"(.{{3,{MAX_LONG}}}?)({stops})", rest)
    if m is None or (mark == "," and not in_list and m.group(2) != ";") or re.search(r"[\[\]=:<>]", m.group(1)):
        return ""
    words = re.sub(r"\s*\((?:std|standard|ref)\.?\)\s*$", "", m.group(1).strip(), flags=re.I)  # "(Std.)"
    tokens = words.split()
    if not tokens or not tokens[0][:1].isalpha() or tokens[0].lower() in _RUNNING or any(t.strip("(),") in wanted for t in tokens):
        return ""
    if sum(any(ch.isdigit() for ch in t) for t in tokens) * 2 > len(tokens):  # figures, not a name
        return ""
    return words


def defined_in(text: str, names: list[str], earlier: dict[str, str] | None = None) -> dict[str, str]:
    """The long forms `text` (the table's page) gives for those of `names` that are abbreviations;
    `earlier`: those the paper's running text defined in brackets up to this page (acronyms.py)."""
    wanted = {n.strip() for n in names if n and is_abbreviation(n)}
    found = {short: long for short, long in (earlier or {}).items() if short in wanted}
    return found | note_definitions(text, wanted)


def spelled(cell: str, defined: dict[str, str]) -> str:
    """The cell with its long form where it is a defined abbreviation: "VS = vincristine sulphate"."""
    long_form = defined.get(cell.strip())
    return f"{cell}{ABBR_SEP}{long_form}" if long_form and long_form.lower() != cell.lower() else cell
