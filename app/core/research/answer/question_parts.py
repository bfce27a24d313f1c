"""A question's further parts, answered in a turn, or quoted, of their own when the first turn leaves them open.

Researchers ask two things at once: "what retention probabilities were used, and how far did
the error fall with dropout, ReLUs and max-norm?". Told to give each part its own claim
(synthesis_parts.md), the starter model answers the first part and often stops; the second part
is then answered only if a quoted sentence happens to state it. So the question is split into
its parts by its grammar, and a part that no claim of the first turn speaks to can get
- one more short turn (`part_turns`): the passages that bear on that part (scored against the
  part, not the whole question), then the part itself, and one claim. The turn continues the
  answer's conversation, so the passages read for the first claim are still in the model's cache;
- a quote of its own (`part_quotes`, key_sentences.answer_quotes): the sentence that bears best
  on the part, rated by the model against it.
Both are off for the starter model: measured on the answer bench, neither made more answers
right (the turn's claims were supported less often, the quotes were already there), see
settings.py and docs/research.md. They are kept for models that follow the instruction better.

The split is deliberately narrow: only where a new question clause begins, after "and" with a
question word ("…, and when does the sandwich collapse…") or, after ", and", with an auxiliary
("…, and do I still need src/Makevars…"), or after a question mark. A list inside one clause
("what do (1 | g1/g2), (1 | g1) + (1 | g2) and (x || g) mean?") stays one part: one claim can
answer it, and a split there would cut a name in two.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from ...models.base import ChatMessage, ChatModel, EmbeddingModel
from ...paths import load_prompt
from ...records import Claim, Evidence, ResearchResult
from ..context import AnswerContext
from ..text.citations import key_terms, stem
from ..evidence.first_turn_size import fit_within
from .second_turn import repeats


Ask = Callable[..., tuple[str, "list[Claim] | None"]]  # synthesis._Writer.ask

_WH = r"(?:what|how|why|when|where|which|who|whom|whose|whether)"
_AUX = r"(?:do|does|did|is|are|was|were|can|could|should|would|will|has|have|had)"
_NEW_CLAUSE = re.compile(rf",?\s+(?:and|or)\s+(?={_WH}\b)|,\s+and\s+(?={_AUX}\b)|\?\s+(?=[A-Z])", re.I)
MIN_PART_WORDS = 3  # "Where and when did Rcpp originate?" is one part: "Where" asks nothing alone
ANSWERED_SHARE = 0.5  # a part is answered when the claims hold this much of its own key terms


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


def _own_terms(part: str, others: list[str]) -> set[str]:
    """The part's key terms that the other parts do not share (stemmed): what only this part asks about."""
    shared = {stem(t) for o in others for t in key_terms(o)}
    return {stem(t) for t in key_terms(part)} - shared


def open_parts(question: str, claims: list[Claim]) -> list[str]:
    """The parts after the first that no claim speaks to: fewer than half of the part's own key
    terms appear in the claims. The first part is the first claim's."""
    parts = question_parts(question)
    said = {stem(t) for c in claims for t in key_terms(c.text)}
    out = []
    for i, part in enumerate(parts[1:], 1):
        own = _own_terms(part, parts[:i] + parts[i + 1:])
        if own and len(own & said) < ANSWERED_SHARE * len(own):
            out.append(part)
    return out


def part_evidence(part: str, evidence: list[Evidence], read: set[int], embedder: EmbeddingModel | None,
                  budget: int, cost: Callable[[Evidence], int]) -> list[Evidence]:
    """The passages the model has not read yet that bear best on `part`, up to `budget` tokens.

    A passage scores by its best kept sentence: the sentence's cosine to the part (where an
    embedder is loaded) plus the share of the part's key terms it holds."""
    unread = [e for e in evidence if e.number not in read and e.sentences]
    if not unread:
        return []
    sentences = [(e, s.text) for e in unread for s in e.sentences]
    scores = part_scores(part, [text for _, text in sentences], embedder)
    best: dict[int, float] = {}
    for (e, _), score in zip(sentences, scores):
        best[e.number] = max(best.get(e.number, -1.0), score)
    chosen = fit_within(sorted(unread, key=lambda e: -best[e.number]), budget, cost, at_least_one=True)
    return sorted(chosen, key=lambda e: e.number)


def part_scores(part: str, texts: list[str], embedder: EmbeddingModel | None) -> list[float]:
    """How well each text bears on `part`: the share of the part's key terms it holds, plus its
    cosine to the part where an embedder is loaded (the focus score is the whole question's)."""
    terms = {stem(t) for t in key_terms(part)}
    scores = np.array([len(terms & {stem(t) for t in key_terms(text)}) / max(1, len(terms)) for text in texts])
    if embedder is not None and texts:
        vecs = embedder.embed([part] + [text[:1200] for text in texts])
        scores = scores + vecs[1:] @ vecs[0]
    return [float(x) for x in scores]


def answer_part(ask: Ask, chat: ChatModel, conversation: list[ChatMessage], query: str, part: str,
                passages: str, numbers: list[int], claims: list[Claim]) -> tuple[list[Claim], bool]:
    """(the part's claim if it cites a passage and says something new, whether the model said no
    passage answers the part); the turn joins `conversation` if a claim is kept.

    `passages`: the new passages as the prompt shows them ("" if the best were read already);
    `numbers`: every passage the claim may cite; `claims`: the answer's claims so far (a part
    claim that only restates one of them is dropped)."""
    prompt = load_prompt("synthesis_part.md").format(
        query=query, part=part, evidence=f"More passages:\n\n{passages}\n\n" if passages else "")
    conversation.append({"role": "user", "content": prompt})
    reply, written = ask(chat, conversation, numbers, max_claims=1, min_claims=1, fallback_ok=False)
    kept = [c for c in written or [] if c.sources and not repeats(c, claims)]
    if kept:
        conversation.append({"role": "assistant", "content": reply})
    else:
        conversation.pop()
    return kept, bool(written) and not any(c.sources for c in written)


def answer_open_parts(funnel: AnswerContext, ask: Ask, chat: ChatModel, conversation: list[ChatMessage], result: ResearchResult,
                      claims: list[Claim], evidence: list[Evidence], read: set[int], show: Callable[[Evidence], str]) -> list[Claim]:
    """A claim for each further part of the question that `claims` leave open, up to `part_turns`.

    `read`: the passages of the first turn; `show`: a passage as the prompt shows it."""
    params, out = funnel.params, []
    if params.part_turns <= 0:
        return out
    read = set(read)
    for part in open_parts(result.query, claims)[: params.part_turns]:
        funnel.stage(3, f"Stage 3: answering “{part}”…")
        new = part_evidence(part, evidence, read, funnel.embedder, params.part_tokens,
                            lambda e: chat.count_tokens(show(e)) + 2)
        read |= {e.number for e in new}
        written, unanswered = answer_part(ask, chat, conversation, result.query, part,
                                          "\n\n".join(show(e) for e in new), sorted(read), claims + out)
        if unanswered:
            result.messages.append(f"Stage 3: no passage the model read answers “{part}”.")
        out += written
    return out
