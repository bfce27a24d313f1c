"""Which lines of a table unit (its caption line and rows, tables.py) focusing keeps.

Prose is kept as a run of sentences around the best one (focus._window), since a sentence leans on
its neighbours. A table's rows do not: each names its columns ("Single · Model: REALMNews · NQ:
40.4 · WQ: 40.7"). The run around a table unit's best line, nearly always its caption, kept the rows
printed under the caption, and a long caption (DPR's Table 4 caption line is 133 tokens of a
window's 180) left room for none else: asked for REALM's WebQuestions accuracy, the model read
DPR's rows. So the best-scoring row comes first, then the caption line where it fits beside it,
then the other rows from the table's top, where a sorted table puts the answer to "which rose the
most?" (the wheat paper's L-tryptophan, first of its Table 3).

A row the question names (row_columns.named_rows: by its words, without its author-year citation,
by the parts of a joined name, "three" for "3") comes before the best-scoring one: the TrustRank
paper's row "3" ("propagated up to three links away") scored below rows 1 and 2.

bench/tables.py (the row in the focused evidence): on twelve table questions written in session 19
from tables nobody had tuned for (v01-v12), 6 -> 7 of 12 (8 with not_evidence.py's numbered and
non-English headings); the 38 earlier development table questions and the answer bench's five
unchanged. bench/focus.py --split development: the same facts on the three development sets.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence


class Line(Protocol):
    order: int  # position within the unit
    kind: str  # "text" for the caption line (focus.split_sentences), "block" for a row
    score: float
    text: str


def table_window(lines: Sequence[Line], room: int, count: Callable[[str], int],
                 named: Sequence[int] = ()) -> tuple[list[int], int]:
    """The kept lines' positions in page order and their cost in tokens; ([], 0) where the best row
    (or a caption alone) does not fit `room`. `named`: the positions of the rows the question names
    (row_columns.named_rows), which come before the best-scoring one."""
    caption = [u for u in lines if u.kind == "text" and u.order == 0]
    rows = sorted((u for u in lines if u not in caption), key=lambda u: (u.order not in named, -u.score))
    picked: list[int] = []
    cost = 0
    lead = [u for u in rows if u.order in named] or rows[:1]
    for u in [*lead, *caption, *sorted(rows[len(lead):], key=lambda u: u.order)]:
        extra = count(u.text) + 1
        if cost + extra <= room:
            picked.append(u.order)
            cost += extra
        elif not picked:
            return [], 0
    return sorted(picked), cost
