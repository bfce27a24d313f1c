"""Words broken at a line's end, and sentences at a block's end: joined as the document reads.

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


def document_words(page_texts: Iterable[str]) -> Counter:
    """How often the document spells each word (lower case) within a line. A word broken at a
    line's end counts as its two pieces, so it never votes for its own spelling."""
    words: Counter = Counter()
    for text in page_texts:
        words.update(w.lower() for w in P["word"].findall(text))
    return words


def join_hyphenated(line: str, nxt: str, words: Counter | None = None) -> str:
    """`line`, which ends in a hyphen after a letter, joined with the next line `nxt`."""
    before, after = P["tail"].search(line[:-1]), P["head"].match(nxt)
    if words and before and after:
        joined = words[(before.group() + after.group()).lower()]
        hyphenated = words[f"{before.group()}-{after.group()}".lower()]
        if joined != hyphenated:
            return line[:-1] + nxt if joined > hyphenated else line + nxt
    if line[-2].islower() and nxt[:1].islower():
        return line[:-1] + nxt  # typesetting: drop the hyphen
    return line + nxt  # a compound or a name ("Newton-Raphson")


def join_lines(line: str, nxt: str, words: Counter | None = None) -> str:
    """Two lines of one paragraph as one: a break after a letter's hyphen by `join_hyphenated`, else a space."""
    if line.endswith("-") and len(line) >= 2 and line[-2].isalpha():
        return join_hyphenated(line, nxt, words)
    return f"{line} {nxt}"


# -- sentences cut at a block's end ------------------------------------------------------

_PATTERNS: dict[str, str] = {
    "word": r"[A-Za-z][A-Za-z-]*[A-Za-z]",  # a word as set within a line, compounds whole
    "tail": r"[A-Za-z]+$",
    "head": r"[A-Za-z]+",
    "finished": r"[.!?:;][\"”’')\]]*$",
    "wordlike": r"[(\[“\"]?[^\W\d_]{2,}[)\]”\",;]*",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def unfinished(text: str) -> bool:
    """Whether `text` stops before its sentence does (no full stop or other sentence end)."""
    return bool(text) and not P["finished"].search(text)


def runs_on(paragraph: str, text: str) -> bool:
    """Whether `text` goes on with the sentence `paragraph` left unfinished: a column's or a text
    block's end that fell mid-sentence ("… which can" | "be answered from …"). Kept apart, the two
    halves were two sentences to focusing, quoting and search (about 16 a paper in the bench
    corpora). Both sides must read as words, not as pieces of a formula or a figure's labels
    ("j=1" | "prj(1 −p)"), which MuPDF also sets as blocks of their own."""
    last = paragraph.rsplit("\n", 1)[-1]
    return bool(text[:1].islower() and unfinished(last)
                and _words(last.split()[-4:]) >= 3 and _words(text.split()[:4]) >= 3)


def _words(tokens: list[str]) -> int:
    return sum(1 for t in tokens if P["wordlike"].fullmatch(t))
