"""Words broken at a line's end: joined, or kept hyphenated, as the document itself spells them.

A paragraph's lines are joined into one (pdf_layout), and a line that ends in a hyphen leaves a
choice: "compu-" + "tation" is one word cut by the typesetter, "velocity-" + "dependent" a
compound that happened to break at its own hyphen. Judged by case alone (join lower-case
pieces, keep the hyphen before a capital), 99 compounds in the 59 papers of the two bench
corpora came out as one word ("velocitydependent", "withinsubject", "domainwall") and 21
names kept a hyphen they do not have ("GRO-BID", "Page-Rank", "Mr-Bayes"): words a reader sees
in a quote and a search for "GROBID" does not find. The paper nearly always spells the word
again somewhere on one line, so its own spelling decides; case decides only where it does not.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

_WORD = re.compile(r"[A-Za-z][A-Za-z-]*[A-Za-z]")  # a word as set within a line, compounds whole
_TAIL = re.compile(r"[A-Za-z]+$")
_HEAD = re.compile(r"[A-Za-z]+")


def document_words(page_texts: Iterable[str]) -> Counter:
    """How often the document spells each word (lower case) within a line. A word broken at a
    line's end counts as its two pieces, so it never votes for its own spelling."""
    words: Counter = Counter()
    for text in page_texts:
        words.update(w.lower() for w in _WORD.findall(text))
    return words


def join_hyphenated(line: str, nxt: str, words: Counter | None = None) -> str:
    """`line`, which ends in a hyphen after a letter, joined with the next line `nxt`."""
    before, after = _TAIL.search(line[:-1]), _HEAD.match(nxt)
    if words and before and after:
        joined = words[(before.group() + after.group()).lower()]
        hyphenated = words[f"{before.group()}-{after.group()}".lower()]
        if joined != hyphenated:
            return line[:-1] + nxt if joined > hyphenated else line + nxt
    if line[-2].islower() and nxt[:1].islower():
        return line[:-1] + nxt  # typesetting: drop the hyphen
    return line + nxt  # a compound or a name ("Newton-Raphson")
