"""Does the model's answer state what was asked? Support is not enough.

A claim can be supported by its passage and still beside the point (a true sentence of the right
paper about something else). The quotes' rating asks the model, for each of the best candidate
sentences, whether it states the answer to the question (P(yes), key_sentences.answer_probabilities);
the model's first claim is asked the same, right after (the question is in the model's cache).

The claim is beside the point where the best candidate's P(yes) exceeds the claim's by
`ANSWER_MARGIN`: a relative test, since what a model's P(yes) means differs between models, and the
best candidate says what this question's evidence allows. Such a claim is written again once
(rewrite.py) and the new one kept only where it is supported at least in part and rated higher;
otherwise it stays, with a note saying the key passages may answer better.
"""

from __future__ import annotations

import logging
import re

from ...callbacks import IsCancelled
from ...errors import ModelError
from ...models.base import ChatModel
from ...records import ResearchResult, Support
from .key_sentences import answer_probabilities

log = logging.getLogger(__name__)

ANSWER_MARGIN = 0.3  # the best candidate sentence's P(yes) above the claim's, where the claim is beside the point


def answer_probability(chat: ChatModel, query: str, text: str, *, cancelled: IsCancelled | None = None) -> float | None:
    """The model's P(yes) that `text` states the answer to `query`; None where the backend gives none or fails."""
    try:
        probs = answer_probabilities(chat, query, [text], cancelled=cancelled)
    except ModelError as exc:
        log.warning("rating the answer failed (%s); it is not checked for answering the question", exc.message)
        return None
    return probs[0] if probs else None


def beside_the_point(claim_p: float | None, best_p: float | None) -> bool:
    """The papers hold a sentence rated clearly better than the claim for answering the question."""
    return claim_p is not None and best_p is not None and best_p - claim_p >= ANSWER_MARGIN


def answer_note(claim_p: float, best_p: float) -> str:
    return (f"Answer check: the model's answer may not state what was asked (rated {claim_p:.2f} for answering the "
            f"question, against {best_p:.2f} for the best sentence of the papers); see the key passages.")


# -- a green mark means "answers, and is supported" (issue 78, item 6) ----------------------------------
#
# A claim the passage supports is marked green only where it also answers what was asked. Two reads
# tell it does not: the rule below, where the question names a coded name (letters with digits: a
# protein "SmD1", a mutation "D215W", an estimator "HC3") that neither the claim nor the sentences it
# rests on speak of, while the claim speaks of another; and the model's own rating of the claim for
# answering the question (the P(yes) above, read for every claim the check found supported), where
# the papers hold a sentence rated clearly better. Figures: docs/lab/2026-12-07-check-travel.md.

_CODED = re.compile(r"\b[A-Za-z][A-Za-z-]*\d[\w-]*\b")


def coded_names(text: str) -> set[str]:
    """The text's names made of letters and digits ("SmD1", "D215W", "lme4"), lower-cased."""
    return {m.group().lower().rstrip("-") for m in _CODED.finditer(text)}


def off_question(query: str, claim: str, quote: str = "") -> str:
    """Why the claim does not answer the question by the rule ("" where the rule cannot tell): the
    question names coded names, the claim names others, and neither the claim nor its `quote` (the
    sentences it rests on) any of the question's. "PRMT5 does" citing "SmD1 is methylated by PRMT5"
    answers "Which enzyme methylates SmD1?"; "Gem2 binds the SMN complex" does not."""
    asked, said = coded_names(query), coded_names(claim)
    if not asked or not said - asked:
        return ""
    read = f"{claim} {quote}".lower()
    if any(a in read for a in asked):
        return ""
    return f"it speaks of {', '.join(sorted(said))}; the question asks about {', '.join(sorted(asked))}"


def mark_off_point(result: ResearchResult, best_answer: float | None) -> int:
    """Note on each of the model's supported claims that does not answer the question why not
    (`Claim.off_point`), by the rule or by its rating; returns how many were noted."""
    noted = 0
    for i, claim in enumerate(result.claims):
        claim.off_point = ""
        if claim.quoted or claim.support != Support.SUPPORTED.value:
            continue
        quote = " ".join(c.quote for c in result.citations if c.claim == i)
        claim.off_point = off_question(result.query, claim.text, quote) or (
            "the papers hold a sentence that answers the question better (see the key passages)"
            if beside_the_point(claim.answers, best_answer) else "")
        noted += bool(claim.off_point)
    return noted


def rate_off_point(chat: ChatModel | None, result: ResearchResult, *, on: bool,
                   cancelled: IsCancelled | None = None) -> int:
    """Mark the model's supported claims that do not answer the question (mark_off_point): each is
    rated for answering it, as the direct answer is, where the answer check is `on` and the papers'
    sentences were rated (the question is in the model's cache: one short read a claim)."""
    best = result.extra.get("best_answer_p")
    if on and chat is not None and best is not None:
        for claim in result.model_claims():
            if claim.support == Support.SUPPORTED.value and claim.answers is None:
                claim.answers = answer_probability(chat, result.query, claim.text, cancelled=cancelled)
    return mark_off_point(result, best)
