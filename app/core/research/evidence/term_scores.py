"""The question's terms in the candidate sentences: each sentence's share of them, and a passage's.

A term is a stem of the question's key words (citations.key_terms), weighted by how rare it is
among the candidate sentences (IDF), less where the papers' titles hold it; an acronym the
passages define stands for its words. Focusing (focus.py) scores each sentence by its share, and
orders the passages partly by `coverage`: the share all of a passage's sentences hold together.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ...acronyms import definitions
from ..text.citations import key_terms, stem

# A question's words that are in the titles of the papers it draws on ("Which negatives does
# dense passage retrieval train with?", "…the index of a zoo series?") say which paper, and the
# stages before found it by them; within the paper they are on every other sentence and tell
# nothing about which one answers. At full weight, "In this section, we evaluate our Dense
# Passage Retriever" outscored the sentences on in-batch and BM25 negatives. At 0.3 (bench/focus.py,
# 89 r-papers and 25 mixed-fields questions): gold facts in the focused evidence 77.5 -> 79.8 % and
# 72 -> 76 %, in the first turn 48.3 -> 50.6 % and 36 % unchanged; any weight from 0 to 0.5 did as well.
TITLE_TERM_WEIGHT = 0.3
# A question often names a topic that the paper names once, in a heading, and then reports under
# it without repeating: "Impact of Coronavirus Disease 2019 Pandemic" over "Overall, median teaming
# scores were significantly lower … before March 1, 2020". So a question's term in a sentence's
# section heading counts for the sentence, at this weight. bench/focus.py: gold facts in the first
# turn 47 -> 48 of 89 r-papers questions (0.3 alike, 1.0 none), mixed fields unchanged; giving the
# embedder the heading as well lost 2 of 25 mixed-fields and 2 r-papers questions' facts.
HEADING_TERM_WEIGHT = 0.5
_ACRONYM = re.compile(r"\b[A-Z][A-Za-z]{1,9}\b")


class Scored(Protocol):
    """A candidate sentence as scored here (focus._Candidate)."""

    text: str
    heading: str
    lexical: float
    hits: frozenset[str]


@dataclass(frozen=True)
class TermWeights:
    """The question's terms and their weights, for the candidates of one question."""

    idf: dict[str, float]  # each term's weight (IDF, the title's terms less)
    asked: list[set[str]]  # the terms of the question, and of its ask where it has one
    totals: list[float]  # the summed weight of each


def _matches(term: str, bag: set[str]) -> bool:
    """The term, or a word sharing its first 5+ letters as a whole prefix ("depart" ~ "departure")."""
    if term in bag:
        return True
    if len(term) < 5:
        return False
    return any(len(w) >= 5 and (w.startswith(term) or term.startswith(w)) for w in bag)


def _terms(text: str, spelled: dict[str, set[str]]) -> set[str]:
    """The text's term stems, with the words of each acronym it uses that the passages define.

    Researchers ask in words ("the surgeon-scrub teaming scores"); after defining them, papers
    state results in the acronyms ("median SS and SC scores were 0.08 and 0.06"), which are too
    short to be terms. bench/focus.py, gold facts in the focused evidence: 76 -> 80 % on mixed
    fields, 79.8 -> 80.9 % on r-papers, first turn unchanged. Spelling the acronyms out for the
    embedder as well lost a gold page on mixed fields (96 -> 92 %), so only the terms see them.
    """
    terms = {stem(t) for t in key_terms(text)}
    if spelled:
        for token in set(_ACRONYM.findall(text)) & spelled.keys():
            terms |= spelled[token]
    return terms


def lexical_scores(query: str, candidates: Sequence[Scored], titles: str = "", ask: str = "") -> TermWeights | None:
    """Share of the question's terms in each sentence, rarer terms weighing more (IDF over the
    candidates), and those of the papers' `titles` less (TITLE_TERM_WEIGHT). With `ask` (the
    question without its frame, focus.ASK_SCORING), the better of the two shares. Each candidate
    keeps the question's terms it holds (`hits`); the weights are returned for `coverage`."""
    if not candidates:
        return None
    defined = definitions(" ".join(c.text for c in candidates))
    spelled = {acronym: {stem(t) for t in key_terms(words)} for acronym, words in defined.items()}
    asked = [terms for terms in (_terms(query, spelled), _terms(ask, spelled) if ask else set()) if terms]
    if not asked:
        return None
    q_terms = set().union(*asked)
    bags = [_terms(c.text, spelled) for c in candidates]
    hits = [{t for t in q_terms if _matches(t, bag)} for bag in bags]
    n = len(bags)
    idf = {t: math.log(1 + n / (1 + sum(t in h for h in hits))) for t in q_terms}
    title_bag = {stem(t) for t in key_terms(titles)}
    for t in q_terms:
        if _matches(t, title_bag):
            idf[t] *= TITLE_TERM_WEIGHT
    totals = [sum(idf[t] for t in terms) or 1.0 for terms in asked]
    in_heading: dict[str, set[str]] = {}
    for c, h in zip(candidates, hits):
        c.hits = frozenset(h)
        if c.heading not in in_heading:
            bag = _terms(c.heading, spelled)
            in_heading[c.heading] = {t for t in q_terms if _matches(t, bag)}
        heading_only = in_heading[c.heading] - h
        c.lexical = max((sum(idf[t] for t in h & terms) + HEADING_TERM_WEIGHT * sum(idf[t] for t in heading_only & terms)) / total
                        for terms, total in zip(asked, totals))
    return TermWeights(idf, asked, totals)


def coverage(units: Sequence[Scored], weights: TermWeights | None) -> float:
    """The share of the question's terms (the better of question and ask) that the units hold
    together, rarer terms weighing more: a passage that answers both parts of a question holds
    both parts' terms, though no one of its sentences may hold more than half."""
    if weights is None or not units:
        return 0.0
    held = frozenset().union(*(u.hits for u in units))
    return max(sum(weights.idf[t] for t in held & terms) / total for terms, total in zip(weights.asked, weights.totals))
