"""A table as the model reads it: the rows and the columns the question names first.

A row unit lists every column of its table ("Thoracic surgery · Interprofessional SS Median:
0.404 · … · Specialty-specific Experience Circulator-service Median: 0.355"). Asked for the
circulating nurses' median, the starter model reported the row's first figure, 0.404. In the
answer's prompt the fields whose column header shares the most words with the question come
right after the row's name, and the rest follow in their order. Likewise a table's rows: given
its caption line and three rows, the model reported the first row's statistic for the row the
question named ("…for the additive model"), so the rows the question names come first, after the
caption line. Only the prompt changes: the stored evidence, the quotes and the viewer keep the
table as printed.
"""

from __future__ import annotations

import re

from ...table_abbreviations import ABBR_SEP
from ...tables import SEP, is_caption_line, row_name
from .citations import STOP_WORDS, stem

MIN_FIELDS = 3  # a row of two columns is read whole at a glance
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*|\d+(?:\.\d+)?")


def header_words(text: str) -> set[str]:
    """The text's words as column headers are matched: short ones too ("CMS", "Ki", "SS"), a
    hyphenated word also by its parts where they are words ("circulator-service")."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        parts = [word] + (word.split("-") if "-" in word and not any(c.isdigit() for c in word) else [])
        out |= {stem(w.lower()) for w in parts if len(w) >= 2 and w.lower() not in STOP_WORDS}
    return out


def named_columns_first(line: str, query: str) -> str:
    """The row `line` with the fields whose header shares the most words with `query` first,
    after its name; the line as it is where it is not a row, has fewer than MIN_FIELDS fields,
    or no header shares a word."""
    if not row_name(line) or is_caption_line(line):
        return line
    fields = line.split(SEP)
    asked = header_words(query)
    scores = {k: len(header_words(f.split(": ", 1)[0]) & asked) for k, f in enumerate(fields) if ": " in f}
    best = max(scores.values(), default=0)
    if len(scores) < MIN_FIELDS or best == 0:
        return line
    start = min(scores)
    lead = [k for k in sorted(scores) if scores[k] == best]
    order = list(range(start)) + lead + [k for k in range(start, len(fields)) if k not in lead]
    return SEP.join(fields[k] for k in order)


def names_row(query: str, name: str) -> bool:
    """The question names the row: its name, or the long form its table's notes give it ("VS =
    vincristine sulphate"), stands in the question as a word or words of its own. Row names are
    often short codes ("HF", "YR/FE") that key terms leave out."""
    return any(len(n) >= 2 and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", query, re.I) is not None
               for n in name.split(ABBR_SEP))


def named_rows_first(lines: list[str], query: str) -> list[int]:
    """The order to read a table's lines in: the lines that are not rows (its caption line) where
    they are, then the rows the question names, then the other rows in their order."""
    rows = [k for k, line in enumerate(lines) if row_name(line) and not is_caption_line(line)]
    named = [k for k in rows if names_row(query, row_name(lines[k]))]
    if not named or len(named) == len(rows):
        return list(range(len(lines)))
    it = iter(named + [k for k in rows if k not in named])
    return [next(it) if k in rows else k for k in range(len(lines))]
