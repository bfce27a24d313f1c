"""A table printed twice in the evidence: once as the page's text runs its cells together, once as rows.

PyMuPDF's text of a page gives a table's cells one after another ("CIFAR-10 3 conv + 2 fully
connected layers 12.6 ± 0.1 12.5 ± 0.1"), with the column headers far above them; where the table
was also read as units (tables.py), its rows name each cell's column ("Bernoulli dropout: 12.6 ±
0.1 · Gaussian dropout: 12.5 ± 0.1"). With both in the evidence the model read the run-together
text first and gave the Bernoulli column's error for the Gaussian one. A sentence of the running
text that holds a row's figures in the row's order, on the row's page, is that table's text: the
row speaks for it, and focusing leaves it out.
"""

from __future__ import annotations

import re

from ...records import Evidence
from ...pdf.tables.rows import row_cells
from ...units import is_caption_line, is_table_unit

_FIGURE = re.compile(r"\d+(?:\.\d+)?")
MIN_FIGURES = 3  # a row with fewer figures could be any sentence's ("12.5 ± 0.1")…
# …and three whole numbers any listing's ("rnorm(10, 0, 100)"): a run of integers needs four.
MIN_WHOLE_FIGURES = 4


def row_figures(line: str) -> list[str]:
    """The figures of a table row's cells as printed, in order (its name, then each value): not the
    columns' names, which the page prints once above the rows (table_rows.row_cells)."""
    return _FIGURE.findall(" ".join(row_cells(line)))


def _holds_run(figures: list[str], run: list[str]) -> bool:
    n = len(run)
    return any(figures[k:k + n] == run for k in range(len(figures) - n + 1))


def echoes(text: str, runs: list[list[str]]) -> bool:
    """The text holds one of the rows' figure runs, in order, with nothing between them."""
    figures = _FIGURE.findall(text)
    return any(_holds_run(figures, run) for run in runs)


def table_rows_by_page(evidence: list[Evidence]) -> dict[tuple[str, int], list[list[str]]]:
    """The figure runs of the table rows in the evidence, by (paper, page)."""
    out: dict[tuple[str, int], list[list[str]]] = {}
    for e in evidence:
        if not is_table_unit(e.text):
            continue
        for line in e.text.split("\n"):
            if line.strip() and not is_caption_line(line):
                run = row_figures(line)
                if len(run) >= (MIN_FIGURES if any("." in f for f in run) else MIN_WHOLE_FIGURES):
                    out.setdefault((e.paper_id, e.page), []).append(run)
    return out
