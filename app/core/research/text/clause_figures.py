"""Figures stated clause by clause, and a claim that gives one to another clause's subject.

"Fifteen participants took part, seven from the rural hospital and eight from the urban
hospital." A claim that has eight from the rural hospital states every figure and every
name of that sentence, so the rules that figures and names must be stated pass it, and the
judge, which reads by closeness, passed it too (hand-labelled pair s41). Where a sentence
gives each of its clauses one figure, a clause's own words (those no other such clause
shares) say what its figure is about. A claim clause with one of those figures that uses
another clause's own words, and none of its figure's, has put the figure on the wrong thing.

A subject the clauses share but only the first spells out ("The assay had a sensitivity of 85%
and a specificity of 92%") counts as the first clause's own word, so a claim that names it is
not held to the pairing: the rule misses such a swap rather than flag a right claim.

This is the clause-by-clause twin of respectively.py, which pairs a list of figures with a
list of names; like it, it stays silent where it cannot pair.
"""

from __future__ import annotations

import re

from .citations import NUMBER_WORDS, word_stems
from .respectively import SENTENCE_BREAK, misassigned_figure, named_in, own_words

_PATTERNS: dict[str, str] = {
    "figure": r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)",
    # Clause breaks: punctuation followed by a space (not "1,234" or "3.5"), and conjunctions.
    "clause": r"(?i)[,;:]\s+|\s+(?:and|but|while|whereas|versus|vs\.)\s+",
    "reference": r"\[[^\]]*\]|\([^)]*\b(?:19|20)\d\d[a-z]?\)",  # "[9]", "(Smith et al. 2004)"
    "letters": r"[a-z]+",  # of the lower-cased clause: a count spelled out ("three")
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
# Counting words only: "one" is as often a pronoun ("the statistical one") as a figure.
_COUNTS = {w: v for w, v in NUMBER_WORDS.items() if w in
           {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "twenty"}}


def _figures(clause: str) -> list[str]:
    found = [f"{float(m.group()):g}" for m in P["figure"].finditer(clause)]
    return found + [_COUNTS[w] for w in P["letters"].findall(clause.lower()) if w in _COUNTS]


def _words(clause: str) -> set[str]:
    return word_stems(clause) - set(NUMBER_WORDS)


def clause_figures(sentence: str) -> list[tuple[str, str, set[str]]]:
    """(clause, figure, the clause's words) for each clause of the sentence that has exactly one
    figure; [] where the figures form a list ("2.17, 2.77 and 0.28 µg/ml for …, respectively"),
    whose "clauses" are bare figures: respectively.py pairs those."""
    if "respectively" in sentence.lower():
        return []
    out = []
    for clause in P["clause"].split(P["reference"].sub(" ", sentence)):
        figures = _figures(clause)
        if len(figures) == 1:
            words = _words(clause)
            if not words:
                return []
            out.append((clause.strip(" .;"), figures[0], words))
    return out


def misbound_figure(claim: str, quote: str, *, source: str = "passage") -> tuple[str, str] | None:
    """(the figure, why) where a clause of the claim gives a figure of the quote to another clause's
    subject; None if it does not, or cannot be told. `source` names the quote in the reason."""
    claimed = clause_figures(claim)
    if not claimed:
        return None
    for sentence in SENTENCE_BREAK.split(quote):
        stated = clause_figures(sentence)
        figures = [f for _, f, _ in stated]
        if len(set(figures)) < 2:
            continue
        bags = own_words([w for _, _, w in stated])
        for _, figure, words in claimed:
            if figures.count(figure) != 1:
                continue
            own = figures.index(figure)
            named = named_in(words, bags)
            if not bags[own] or own in named:
                continue  # the figure's own clause cannot be told, or the claim names it
            if named:  # the clause it is given to: the one whose own words the claim uses most fully
                other = max(named, key=named.__getitem__)
                return figure, f"the {source} gives {figure} in “{stated[own][0]}”, not in “{stated[other][0]}”"
    return None


def misplaced_figure(claim: str, quote: str, *, source: str = "passage") -> tuple[str, str] | None:
    """(the figure, why) where the claim gives a figure of the quote to another name: of a
    "respectively" list (respectively.py), or of another clause; None if not, or if it cannot be told."""
    return misassigned_figure(claim, quote, source=source) or misbound_figure(claim, quote, source=source)
