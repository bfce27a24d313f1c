"""A claim that reads a table row back: decided by the row, not by the model's yes/no.

The starter model's yes/no judge reads a row unit poorly: "There are 21 female Alzheimer patients
who smoked more than 20 cigarettes daily" against `Female › Alzheimer · No. of cigarettes daily
None: 91 · … · No. of cigarettes daily >20: 21` got P(yes) 0.28, and the right answer was shown
struck through as unsupported. A row says exactly what it holds, so the rule can read it:

- the claim names the row (its name, or the long form of an abbreviated one, and its group's
  heading where the table sets one), and no other row of the passage more fully ("Baseline +
  augmentation" over "Baseline");
- every figure of the claim stands in the row: as a value, or in the name or the column header of a
  value the claim states ("20" of ">20");
- each value it states stands in the column the claim names best: the column with the largest
  share of what sets it apart from the row's other columns said in the claim (">20" among "None",
  "<10", "10–20", ">20"; "CMS" where other columns are ATLAS's; "Median" beside "IQR"; "FPS" where
  the claim spells it out, "frames per second"), so a figure given for another column does not pass;
- a correlation or association the claim calls negative (or positive) has values of that sign:
  "a strong negative correlation with CMS … 0.79" read the figure and turned its sign.

Where all of these hold the pair is supported by the rule and the model is not asked; otherwise the
check goes on as for any passage (the rules on specifics, then the model). The last family of
support_rules.FAMILIES ("table-row"); it earns its place on bench/tables.py --answer (the model's claims
citing a table: 0 → 5 of 13 supported, all five right) and decides none of bench/support.py's pairs.
"""

from __future__ import annotations

import re

from ...units import ABBR_SEP
from ...units import GROUP_SEP, SEP, is_caption_line, is_table_unit
from ..text.row_columns import joined_initials, label_cell, spelled_acronyms, terms as _terms
from ..text.citations import numbers_in

_RELATION = re.compile(r"\b(?:correlat|associat)", re.I)
_NEGATIVE = re.compile(r"\b(?:negative|negatively|inverse|inversely)\b", re.I)
_POSITIVE = re.compile(r"\b(?:positive|positively)\b", re.I)
_MINUS = re.compile(r"^\s*[-−–]\s*\d")


def states_row(claim: str, quote: str) -> bool:
    """Some row of `quote` (a row unit, or a table unit's rows one a line) states `claim` by the rule.

    Of rows whose names the claim says, only those it names most fully count: a claim about
    "the baseline with augmentation" names the row "Baseline + augmentation", not "Baseline"."""
    rows = [line for line in quote.splitlines() if SEP in line and not is_caption_line(line)]
    words = _terms(claim)
    said = words | spelled_acronyms(claim) | joined_initials(claim)  # "WebQuestions" says "WQ"
    named = {line: _named_terms(line, words) for line in rows}
    most = max(named.values(), default=0)
    return any(_row_states(claim, line, said) for line in rows if named[line] == most)


def _fields(line: str) -> list[str]:
    """The row's fields, its name first (not a table unit's "Table 1 (page 8)"); [] for a row
    without a name, which gives nothing for a claim to name."""
    fields = [f.strip() for f in line.split(SEP)][1 if is_table_unit(line) else 0:]
    return fields if fields and ": " not in fields[0] else []


def _named_terms(line: str, said: set[str]) -> int:
    """How many words of the row's name (its group's heading too) the claim says."""
    fields = _fields(line)
    return len(_terms(fields[0].replace(GROUP_SEP, " ").replace(ABBR_SEP, " ")) & said) if fields else 0


def _row_states(claim: str, line: str, said: set[str]) -> bool:
    """`said`: the claim's words as compared, and the acronyms they spell."""
    fields = _fields(line)
    if not fields:
        return False
    names = fields[0].split(GROUP_SEP)
    cells = [f.rsplit(": ", 1) for f in fields[1:] if ": " in f]
    # A row whose first cell is a setting shared by rows ("Single · Model: REALMNews · …") is named
    # by a short cell of words as well (row_columns.row_label).
    labels = [v for v in (label_cell(v) for _, v in cells) if v and _terms(v) <= said]
    if not all(_names(said, name) for name in names) and not labels:
        return False
    if not cells and len(fields) == 2:  # one value whose column head was not read: no other column to mistake
        cells = [["", fields[1]]]
    figures = numbers_in(claim)
    if not figures or not cells:
        return False
    common = set.intersection(*(_terms(head) for head, _ in cells))
    fit = [_fit(_terms(head) - common, said) for head, _ in cells]
    stated = [k for k, (_, value) in enumerate(cells) if numbers_in(value) & figures]
    # A value the claim names by its words as well ("on the GTX 680" of "GPU: GeForce GTX 680") describes
    # the row; it is not a figure given for a column, so its column need not be the one named best.
    given = [k for k in stated if not _named_value(cells[k][1], said)]
    if not given or (len(cells) > 1 and not all(fit[k] > 0 and fit[k] == max(fit) for k in given)):
        return False  # a value given for another column, or none the claim names
    if _turns_sign(claim, [cells[k][1] for k in stated]):
        return False
    accounted = set().union(*(numbers_in(cells[k][1]) | numbers_in(cells[k][0]) for k in stated),
                            *(numbers_in(n) for n in names))
    return figures <= accounted


def _turns_sign(claim: str, values: list[str]) -> bool:
    """The claim calls a correlation or association negative and a value it states is not, or positive
    and one is negative. Claims that say both, or name no relation, are not read for sign."""
    if not _RELATION.search(claim):
        return False
    negative, positive = bool(_NEGATIVE.search(claim)), bool(_POSITIVE.search(claim))
    if negative == positive:
        return False
    return any(bool(_MINUS.match(v)) != negative for v in values)


def _named_value(value: str, said: set[str]) -> bool:
    """A value that opens with a word, not a figure ("GeForce GTX 680", not "41 ms"), whose words the
    claim says."""
    words = {w for w in _terms(value) if not w[:1].isdigit()}
    return value.lstrip()[:1].isalpha() and bool(words) and words <= said


def _fit(distinct: set[str], said: set[str]) -> float:
    """How well the claim names a column: the share of what sets it apart that the claim says."""
    return len(distinct & said) / len(distinct) if distinct else 0.0


def _names(said: set[str], name: str) -> bool:
    """The claim names the row: all of its name's words, or the abbreviation, or at least half the
    words of the long form it was given ("the n-hexane fraction" for "n-hexane soluble fractions
    of the methanolic extract")."""
    short, _, long_form = name.partition(ABBR_SEP)
    if _terms(short) and _terms(short) <= said:
        return True
    words = _terms(long_form)
    return len(words & said) >= max(2, (len(words) + 1) // 2)
