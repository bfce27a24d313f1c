"""The question's words that no paper of the library mentions.

A library without the paper asked about still yields passages on the question's other words, and
the model answers from them with citations the check passes; the cutoffs cannot tell. A word of
the question that no paper contains can (each word is looked up in the library's full-text index,
which stems: "zoos" finds "zoo"). But the right paper may say a word in other words, so the answer
carries a caution (`caution`) only where both hold: a word no paper contains, and no passage
within 1.5 times the evidence cutoff (bench figures: docs/lab/). The words are kept either way
(`--json`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..text.citations import STOP_WORDS

# Beyond the key-term stop list (STOP_WORDS): words a question is made of and papers need not
# contain, and the English stop words the full-text index leaves out (a lookup of one finds nothing).
_QUESTION_WORDS = set("""
    tell explain give list name find compare summarise summarize according get got way ways kind kinds type
    types thing things much many often mean means meant myself our ours ourselves you your yours yourself
    yourselves him his himself she her hers herself itself theirs themselves doing because until against
    before after above below down out off again further once here few own too just now don doesn didn shouldn
    isn aren wasn weren couldn wouldn won haven hasn hadn""".split())
WEAK_EVIDENCE = 1.5  # the best passage's cosine below this many times the evidence cutoff: none is close
_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script: the index folds "é" to "e" itself
MIN_LETTERS = 3


def question_words(query: str) -> list[str]:
    """The words of `query` worth looking up, in order, each once: three letters or more (or a
    name with digits, "HC4"), not a number, not a word every question or paper uses."""
    out: dict[str, str] = {}
    for word in _WORD.findall(query):
        lower = word.lower()
        if lower.isdigit() or len(lower) < MIN_LETTERS or lower in STOP_WORDS or lower in _QUESTION_WORDS:
            continue
        out.setdefault(lower, word)
    return list(out.values())


def unmentioned(query: str, mentioned: Callable[[str], bool]) -> list[str]:
    """The words of `query` (question_words) for which `mentioned(word)` is false."""
    return [w for w in question_words(query) if not mentioned(w)]


def named(words: list[str]) -> str:
    """The words as the answer's notes name them: “zoo”, “quokka”."""
    return ", ".join(f"“{w}”" for w in words)


def caution(words: list[str], best_cosine: float, evidence_cutoff: float) -> str:
    """The sentence above the answer where the library may not hold it ("" where it does)."""
    if not words or best_cosine >= WEAK_EVIDENCE * evidence_cutoff:
        return ""
    return (f"No paper in the library mentions {named(words)}, and no passage comes close to the question: "
            "the answer draws on the nearest passages, which may not answer it.")
