"""Does the model's answer state what was asked? Support is not enough.

The support check asks whether the cited passage states the claim. A claim can be supported and
still beside the point: asked for a growth rate, the model wrote a true sentence of the right
paper about the strain's origin, and the check marked it supported. The quotes' rating already
asks the model, for each of the best candidate sentences, "does this sentence state the answer
to the question: the number, name, method, result or reason asked for?" (P(yes),
key_sentences.answer_probabilities). The model's first claim, its direct answer, is asked the
same question in the same words, right after (the question is in the model's cache, so it costs
one short read).

The claim is beside the point where the papers hold a sentence rated clearly better than it:
the best candidate's P(yes) exceeds the claim's by `ANSWER_MARGIN`. A relative test, not a
cut-off on the claim's own P(yes): what a model's P(yes) means differs between models, and the
best candidate says what this question's evidence allows. Such a claim is written again once
from the key passages and the sentences it cited (rewrite.py) and kept only where the new one is
supported at least in part and rated higher; otherwise it stays, with a note saying the key
passages may answer better.
"""

from __future__ import annotations

import logging

from ...callbacks import IsCancelled
from ...errors import ModelError
from ...models.base import ChatModel
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
