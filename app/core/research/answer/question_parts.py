"""A question's further parts, and the answer's note on a part nothing in it speaks to.

Researchers ask two things at once: "what retention probabilities were used, and how far did
the error fall with dropout, ReLUs and max-norm?". Told to give each part its own claim
(synthesis_parts.md), the starter model answers the first part and often stops. So the question
is split into its parts by its grammar, and a part whose own words neither the model's claims nor
the key passages use is named beneath the answer: the reader learns which part may be missing
rather than taking a partial answer for a whole one. (A turn of the model's own for each open
part, a key passage chosen for it and a claim for each part held by the grammar were measured
and not kept: docs/lab/.)

The split itself is in text/question_split.py.
"""

from __future__ import annotations

from ...records import Claim
from ..text.citations import key_terms, stem
from ..text.question_split import own_terms, question_parts

ANSWERED_SHARE = 0.5  # a part is answered when the claims hold this much of its own key terms


def open_parts(question: str, claims: list[Claim]) -> list[str]:
    """The parts after the first that no claim speaks to: fewer than half of the part's own key
    terms appear in the claims. The first part is the first claim's."""
    parts = question_parts(question)
    said = {stem(t) for c in claims for t in key_terms(c.text)}
    out = []
    for i, part in enumerate(parts[1:], 1):
        own = own_terms(part, parts[:i] + parts[i + 1:])
        if own and len(own & said) < ANSWERED_SHARE * len(own):
            out.append(part)
    return out


def missing_parts_note(missing: list[str]) -> str:
    """The answer's note naming the parts of the question whose own words nothing in it (claims
    and key passages) uses (`open_parts` of the answer's claims and key passages)."""
    named = " and ".join(f"“{part}”" for part in missing)
    these, its, it = ("these parts", "their", "them") if len(missing) > 1 else ("this part", "its", "it")
    # Said as the words tell it: a claim can answer a part in other words ("Monte Carlo" for "what
    # other option is available"), as 2 of the 4 questions so named in 32 development answers did.
    return (f"Answer: {these} of the question may be left unanswered: {named}. Neither the claims nor the "
            f"key passages use {its} words; ask {it} on {its} own to search for {it}.")
