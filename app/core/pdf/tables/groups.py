"""Row labels a table prints once for several rows, given back to each row they name.

A row unit has to read on its own ("Table 2 · Single · Retriever: DPR · Top-20 NQ: 78.4"), but
tables set some labels once for a group of rows, and the reader of cells saw such a label as a
row of its own with every other cell empty, which was dropped:

- a **group heading** on its own line above its rows ("Female", then "Alzheimer 91 7 15 21";
  "Scale uncertainties:");
- a **spanning label** set in the first column at the middle of its rows, on a line between two
  of them or on one of their lines, the first cell of the others left blank ("Single" and "Multi"
  for the training regime of a retriever's rows);
- a row name **wrapped** over two lines, its values on one of them ("Systematic uncertainty (sum
  in" | "quadrature)"; "ATLAS ECAL non-linearity /" | "CMS photon non-linearity");
- a **part of the row above**, its name set after a dash ("bi-LSTM 0.89", then "– sol-gel 0.87");
- **standard errors** set under their estimates, in parentheses, on a line with no name
  ("(Intercept) 1.029 …" | "(0.024) …"): read alone, a row of bare errors.

Which is which is told from the layout and the punctuation that any table's typesetting shares
(a line's vertical place against its neighbours', a name left open by "/" or "(", a lowercase
start), not from words of one paper. A blank first cell takes a label only from a spanning label
beside it: a table whose first column is blank for some rows without one (a zinc ion in a column
of residues) keeps its blank.
"""

from __future__ import annotations

import re
from typing import Callable

from ...units import GROUP_SEP

Rect = tuple[float, float, float, float]

_PATTERNS: dict[str, str] = {
    "errors": r"^[(\[][^()\[\]]*\d[^()\[\]]*[)\]]$",  # "(0.024)", "[0.12, 0.31]"
    "open_end": r"(?i)(?:[/&,(–-]|\b(?:and|or|of|in|for|with|to|the|a|an))$",
    "not_a_label": r"(?i)^(?:[(*†‡§¶]|notes?\b|source\b|abbreviations?\b)",
    # A row set as a part of the row above by a leading dash ("Baseline 1", then "– solid-state", "– sol-gel").
    "sub_row": r"^[–—-]\s+([^\W\d_].*)$",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
NEAR = 1.6  # × a row's height, a row apart: how far a spanning label reaches (rows are set ~1.2-1.4 heights apart)


def regroup(cells: list[list[str]], rects: list[Rect]) -> tuple[list[list[str]], list[Rect], list[str]]:
    """The rows with their once-printed labels given back: label-only lines folded into the rows
    they name, error lines into their estimates' row. Returns (cells, rects, group heading of each
    row, "" where none). A row with one cell that names nothing is left for the caller to drop."""
    cells, rects = _fold_errors(cells, rects)
    cells, rects = _fold_wrapped_names(cells, rects)
    cells, rects = _spread_spanning_labels(cells, rects)
    return _apply_headings(cells, rects)


def _label_only(row: list[str]) -> bool:
    return bool(row) and bool(row[0]) and not any(row[1:])


def _blank_first(row: list[str]) -> bool:
    """A row of values with no name of its own (a line of column names is not one)."""
    return bool(row) and not row[0] and any(re.search(r"\d", c) for c in row[1:])


def _centre(rect: Rect) -> float:
    return (rect[1] + rect[3]) / 2


def union(a: Rect, b: Rect) -> Rect:
    """The rectangle around both."""
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def fold_into_above(cells: list[list[str]], rects: list[Rect],
                    joins: Callable[[list[str], list[str]], bool]) -> tuple[list[list[str]], list[Rect]]:
    """The rows with each one that `joins(row above, row)` joined to the row above, cell by cell
    (its rectangle too); rows with no cell filled are left out."""
    out: list[list[str]] = []
    out_rects: list[Rect] = []
    for row, rect in zip(cells, rects):
        if out and joins(out[-1], row):
            out[-1] = [(a + " " + b).strip() for a, b in zip(out[-1], row)]
            out_rects[-1] = union(out_rects[-1], rect)
        elif any(row):
            out.append(list(row))
            out_rects.append(rect)
    return out, out_rects


def _fold_errors(cells: list[list[str]], rects: list[Rect]) -> tuple[list[list[str]], list[Rect]]:
    """A nameless line of bracketed figures joins the row above, cell by cell ("1.029 (0.024)")."""
    def errors_of(above: list[str], row: list[str]) -> bool:
        values = [c for c in row[1:] if c]
        return bool(row) and not row[0] and bool(values) and all(P["errors"].match(c) for c in values) and any(above[1:])

    return fold_into_above(cells, rects, errors_of)


def _fold_wrapped_names(cells: list[list[str]], rects: list[Rect]) -> tuple[list[list[str]], list[Rect]]:
    """A label-only line that ends a name the row above left open, or opens one the row below
    ends, is that row's name: joined to it."""
    out: list[list[str]] = []
    out_rects: list[Rect] = []
    carry: tuple[str, Rect] | None = None  # an opening left for the next row
    for row, rect in zip(cells, rects):
        row = list(row)
        if carry is not None:
            if row and row[0] and any(row[1:]):
                row[0] = _join(carry[0], row[0])
                rect = union(carry[1], rect)
            else:  # nothing to open: the line stands as it was
                out.append([carry[0]] + [""] * (len(row) - 1))
                out_rects.append(carry[1])
            carry = None
        if _label_only(row) and out and out[-1][0] and any(out[-1][1:]) and _ends_open_name(out[-1][0], row[0]):
            out[-1][0] = _join(out[-1][0], row[0])
            out_rects[-1] = union(out_rects[-1], rect)
            continue
        if _label_only(row) and P["open_end"].search(row[0]):
            carry = (row[0], rect)
            continue
        out.append(row)
        out_rects.append(rect)
    if carry is not None:
        out.append([carry[0]] + [""] * (max((len(r) for r in cells), default=1) - 1))
        out_rects.append(carry[1])
    return out, out_rects


def _join(first: str, rest: str) -> str:
    """Two lines of one name: a word broken at a hyphen ("resid-" | "ual") is one word again."""
    if first.endswith("-") and rest[:1].islower() and first[-2:-1].isalpha():
        return first[:-1] + rest
    return f"{first} {rest}"


def _ends_open_name(above: str, line: str) -> bool:
    """`line` goes on with the name `above`: it starts in lower case, or `above` left a
    parenthesis open ("Systematic uncertainty (sum in" | "quadrature)")."""
    return line[:1].islower() or above.count("(") > above.count(")") or bool(P["open_end"].search(above))


def _spread_spanning_labels(cells: list[list[str]], rects: list[Rect]) -> tuple[list[list[str]], list[Rect]]:
    """Blank first cells take the label set across their rows: the nearest label that shares a
    band with a blank-first row beside it (a label line between two rows overlaps them; a label on
    one of the group's lines has blank-first rows on both sides), within `NEAR` rows."""
    out = [list(r) for r in cells]
    n = len(out)
    spans: list[int] = []
    for i, row in enumerate(out):
        if not row or not row[0]:
            continue
        above = i > 0 and _blank_first(out[i - 1])
        below = i + 1 < n and _blank_first(out[i + 1])
        if _label_only(row) and ((above and _overlaps(rects[i], rects[i - 1]))
                                 or (below and _overlaps(rects[i], rects[i + 1]))):
            spans.append(i)
        elif any(row[1:]) and above and below:
            spans.append(i)
    if not spans:
        return out, list(rects)
    for i, row in enumerate(out):
        if not _blank_first(row):
            continue
        height = max(1.0, rects[i][3] - rects[i][1])
        j = min(spans, key=lambda s: abs(_centre(rects[s]) - _centre(rects[i])))
        between = range(min(i, j) + 1, max(i, j))
        # the rows between must be the same group: blank-first or the other label lines
        if abs(_centre(rects[j]) - _centre(rects[i])) <= NEAR * height * (len(between) + 1) and all(
                _blank_first(out[k]) or k in spans for k in between):
            row[0] = out[j][0]
    # a label line that named its rows is said in them now
    kept = [k for k, r in enumerate(out) if not (k in spans and _label_only(r))]
    return [out[k] for k in kept], [rects[k] for k in kept]


def _overlaps(a: Rect, b: Rect) -> bool:
    return min(a[3], b[3]) - max(a[1], b[1]) > 0


def _apply_headings(cells: list[list[str]], rects: list[Rect]) -> tuple[list[list[str]], list[Rect], list[str]]:
    """A label-only line with rows under it heads them, up to the next such line; it is said in
    each row's unit as the group's name."""
    out: list[list[str]] = []
    out_rects: list[Rect] = []
    groups: list[str] = []
    heading = parent = ""
    for k, (row, rect) in enumerate(zip(cells, rects)):
        if _label_only(row) and _heads_rows(row[0], cells[k + 1:]):
            heading, parent = row[0].rstrip(" :"), ""
            continue
        group = heading
        sub = P["sub_row"].match(row[0]) if row else None
        if sub:  # "– sol-gel" under "bi-LSTM": the bi-LSTM's score on sol-gel sentences
            row = [sub.group(1), *row[1:]]
            group = GROUP_SEP.join(g for g in (heading, parent) if g)
        elif row and row[0] and any(row[1:]):
            parent = row[0]
        out.append(row)
        out_rects.append(rect)
        groups.append(group if any(row[1:]) else "")
    return out, out_rects, groups


def _heads_rows(label: str, after: list[list[str]]) -> bool:
    """A heading names rows of values after it, and reads as a name: not a note, a source line or
    a sentence (one ending in a full stop)."""
    if P["not_a_label"].match(label) or label.endswith(".") or len(label.split()) > 8:
        return False
    return bool(after) and bool(after[0]) and bool(after[0][0]) and any(after[0][1:])
