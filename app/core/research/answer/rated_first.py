"""Rate, then answer: the first turn reads the passages whose sentences the model rates best for
stating the answer (issue 48, item 1).

Without it the first turn reads the best passages in retrieval order (~300 tokens), and the
sentences are rated for answering the question only afterwards, to choose the key passages. On
the held-out bench (2026-11-28) the quotes held the answer for 32 % of the questions and the
model's own sentences for 11 %: the answering sentence was in the evidence, but often not in
what the model read before writing. Here the `rate_before_answer` best candidates by focus score
are rated first (the same P(yes) the key passages use, so those ratings are reused, not asked
twice), and the passages holding the best-rated ones lead the first turn. The cost is the
ratings before the first words: one short prompt per candidate, each sharing a cached prefix.
"""

from __future__ import annotations

import logging

from ...errors import ModelError
from ...models.base import ChatModel
from ...records import Evidence
from ..context import AnswerContext
from .key_sentences import answer_probabilities, quotable
from .question_asks import asks

log = logging.getLogger(__name__)


def rated_first(funnel: AnswerContext, chat: ChatModel, query: str, evidence: list[Evidence],
                candidates: int) -> tuple[list[Evidence], dict[str, float]]:
    """`evidence` reordered for the first turn: the passages of the best-rated sentences first,
    the rest in their order; and each rated sentence's P(yes). Unchanged where nothing is rated."""
    if candidates <= 0 or not chat.gives_probabilities:
        return evidence, {}
    found = quotable([], evidence, asks(query))[:candidates]
    if not found:
        return evidence, {}
    funnel.stage(3, "Stage 3: finding the sentences that answer the question…")
    try:
        probs = answer_probabilities(chat, query, [c.text for c in found], cancelled=funnel.cancelled)
    except ModelError as exc:  # the first turn reads in retrieval order, as without rating
        log.warning("rating the sentences before the answer failed (%s)", exc.message)
        return evidence, {}
    if probs is None:
        return evidence, {}
    best: dict[int, float] = {}
    for c, p in zip(found, probs):
        best[c.number] = max(best.get(c.number, 0.0), p)
    lead = sorted(best, key=lambda n: -best[n])
    by_number = {e.number: e for e in evidence}
    ordered = [by_number[n] for n in lead if n in by_number] + [e for e in evidence if e.number not in best]
    return ordered, {c.text: p for c, p in zip(found, probs)}
