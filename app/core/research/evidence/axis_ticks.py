"""A figure's axis ticks, which the page's text layer holds as if they were numbers of the text.

A plot's axes come out of the PDF as lines such as "0.00 0.25 0.50 0.75 1.00" or "20 40 60 80 100
k: # of retrieved passages". They share the question's terms through their axis labels and sit
beside the results, so focusing kept them: asked how familiar operating-room teams were, the first
window held the same tick line eight times, and the model answered that the teaming scores "were
0.00, 0.25, 0.50, 0.75, and 1.00". The values a reader wants are in the text or a table, never
in the ticks, so a unit that is ticks is not evidence.

A unit is ticks when four or more of its numbers in a row step evenly (the same difference each
time), stand apart from each other, and what is left besides them is a short label. Code and its output are left alone
(R prints indices that step evenly), and so is prose that counts ("Sections 2, 3, 4, and 5").
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?![\w.]*\d)")
MIN_TICKS = 4  # three evenly spaced numbers happen in text ("1, 2 and 3"); four in a row rarely
_GAP = re.compile(r"\s+(?:[A-Za-z]+\s+)?")
LABEL_WORDS = 6  # words besides the ticks: an axis label ("k: # of retrieved passages")


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
    text = unit.strip()
    if text.startswith("```"):
        return False
    found = list(_NUMBER.finditer(text))
    start, length = _even_run([float(m.group().replace("−", "-")) for m in found])
    if length < MIN_TICKS:
        return False
    ticks = found[start:start + length]
    # Ticks stand apart, or each after one word ("Feb 01 Feb 03"); an equation's indices do not
    # ("β0 + β1 · x1 + β2 · x2 + β3 · x3").
    if not all(_GAP.fullmatch(text[a.end():b.start()]) for a, b in zip(ticks, ticks[1:])):
        return False
    rest = text[:ticks[0].start()] + " " + text[ticks[-1].end():]
    # The numbers between the ticks are removed with them; the label is what remains.
    words = [w for w in rest.split() if not _NUMBER.fullmatch(w)]
    return len(words) <= LABEL_WORDS
