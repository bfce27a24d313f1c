"""A question's parts, split where a new question clause begins, and its ask without the frame it
opens with (where to look: "In the Malawi hospital study, …").

Researchers ask two things at once: "what retention probabilities were used, and how far did
the error fall with dropout, ReLUs and max-norm?". The split is deliberately narrow: only where a
new question clause begins, after "and" with a question word ("…, and when does the sandwich
collapse…") or, after ", and", with an auxiliary ("…, and do I still need src/Makevars…"), or
after a question mark. A list inside one clause ("what do (1 | g1/g2), (1 | g1) + (1 | g2) and
(x || g) mean?") stays one part: one claim can answer it, and a split there would cut a name in two.
"""

from __future__ import annotations

import re

from .citations import key_terms, stem

_WH = r"(?:what|how|why|when|where|which|who|whom|whose|whether)"
_AUX = r"(?:do|does|did|is|are|was|were|can|could|should|would|will|has|have|had)"
_NEW_CLAUSE = re.compile(rf",?\s+(?:and|or)\s+(?={_WH}\b)|,\s+and\s+(?={_AUX}\b)|\?\s+(?=[A-Z])", re.I)
# A question that opens by saying where to look ("In the Malawi hospital study, how many
# outpatients…?", "According to the paper on rural development, how did…?", "When the tuner was
# mounted on the cavity, how was…?"): the frame ends at the comma before the question word.
_QUESTION_WORD = rf"(?:{_WH}|{_AUX}|to what)"
_FRAME = re.compile(
    r"^(?:in|for|according to|from|within|across|among|on|when|while|after|before|using|with|at|during|"
    rf"compared (?:with|to))\b[^?]*?,\s+(?={_QUESTION_WORD}\b)", re.I)
MIN_PART_WORDS = 3  # "Where and when did Rcpp originate?" is one part: "Where" asks nothing alone


def question_parts(question: str) -> list[str]:
    """The question's parts in order; one part for a question that asks one thing."""
    parts: list[str] = []
    for piece in _NEW_CLAUSE.split(question.strip()):
        piece = piece.strip(" ,;?")
        if not piece:
            continue
        if parts and (len(piece.split()) < MIN_PART_WORDS or len(parts[-1].split()) < MIN_PART_WORDS):
            parts[-1] = f"{parts[-1]} and {piece}"
        else:
            parts.append(piece)
    return parts or [question.strip()]


def question_ask(question: str) -> str:
    """The question without the frame it opens with (where to look), or "" where it has none."""
    m = _FRAME.match(question.strip())
    return question.strip()[m.end():] if m else ""


def own_terms(part: str, others: list[str]) -> set[str]:
    """The part's key terms (stemmed) that the other parts do not share: what only this part asks about."""
    shared = {stem(t) for o in others for t in key_terms(o)}
    return {stem(t) for t in key_terms(part)} - shared
