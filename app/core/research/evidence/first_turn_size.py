"""The answer's first turn, sized to how fast the chat model reads on this machine.

The first claim waits while the model reads the question and the best passage's window, and a
larger window holds the answer more often (bench/focus.py; docs/lab/). So every answer times its
first turn's reading, the chat model keeps the figures, and the next answer's window is what the
model reads in `first_claim_read_s`: never less than `first_claim_tokens` (a slower machine gets
its first claim later, not worse), never more than `first_claim_max_tokens`.

The same speeds size the rest of the answer for whichever model is chosen: before a model has
answered here, the speeds `models rate` measured for it stand in (`Rated`). The evidence it reads
grows from `focus_tokens` to what the model reads in `evidence_read_s`, up to `focus_max_tokens`
(within its context, funnel.evidence_budget); the answer's time limit grows to a few times what
reading that evidence and writing the answer takes a slow model, never below the setting.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from ...models.base import ChatModel
from ...records import Evidence

if TYPE_CHECKING:
    from ...settings import ResearchParams

TIMEOUT_MARGIN = 4.0  # an answer's time limit: this many times its expected reading and writing
SAMPLES = 5  # the median of the last few answers: one slow answer (a busy machine) does not shrink the next
MIN_TOKENS = 40  # a read this short is mostly the call's fixed cost, not reading


def record_reading(chat: ChatModel, tokens: int, seconds: float) -> None:
    """One answer's first turn read `tokens` new prompt tokens in `seconds` (to its first token)."""
    if tokens >= MIN_TOKENS and seconds > 0:
        chat.read_speeds = (*chat.read_speeds, tokens / seconds)[-SAMPLES:]


@dataclass(frozen=True)
class Rated:
    """What `models rate` measured for the chosen model on this machine (None: not rated)."""

    read_tps: float | None = None
    write_tps: float | None = None


def reading_speed(chat: ChatModel | None, rated: Rated = Rated()) -> float | None:
    """Prompt tokens a second this model has read in recent answers; before the first, what
    `models rate` measured; None where neither is known."""
    if chat is None or not chat.read_speeds:
        return rated.read_tps
    return statistics.median(chat.read_speeds)


def evidence_tokens(params: "ResearchParams", tokens_per_s: float | None) -> int:
    """The answer's evidence tokens for a model that reads `tokens_per_s`: the setting at least."""
    floor = params.focus_tokens
    if tokens_per_s is None or params.evidence_read_s <= 0:
        return floor
    return max(floor, min(params.focus_max_tokens, int(tokens_per_s * params.evidence_read_s)))


def answer_timeout(params: "ResearchParams", read_tps: float | None, write_tps: float | None, evidence: int) -> float:
    """The answer's time limit: the setting, or more for a model too slow to read and write within it."""
    if not read_tps or not write_tps:
        return params.synthesis_timeout_s
    expected = evidence / read_tps + params.claims_max_tokens / write_tps
    return max(params.synthesis_timeout_s, round(TIMEOUT_MARGIN * expected))


def first_turn_tokens(params: "ResearchParams", tokens_per_s: float | None) -> int:
    """The first turn's evidence tokens for a model that reads `tokens_per_s` (None: not measured yet)."""
    floor = params.first_claim_tokens
    if floor <= 0 or tokens_per_s is None or params.first_claim_read_s <= 0:
        return floor  # one prompt (0), not measured yet, or sizing turned off
    return max(floor, min(params.first_claim_max_tokens, int(tokens_per_s * params.first_claim_read_s)))


def sized(params: "ResearchParams", chat: ChatModel | None, rated: Rated = Rated(),
          keep: Collection[str] = ()) -> "ResearchParams":
    """`params` with the first turn, the evidence and the time limit sized to the model's measured
    speeds (`keep`: fields the caller set for this question, left as they are)."""
    speed = reading_speed(chat, rated)
    sizes = {"first_claim_tokens": first_turn_tokens(params, speed), "focus_tokens": evidence_tokens(params, speed)}
    sizes["synthesis_timeout_s"] = answer_timeout(params, speed, rated.write_tps, sizes["focus_tokens"])
    changed = {k: v for k, v in sizes.items() if k not in keep and v != getattr(params, k)}
    return replace(params, **changed) if changed else params


def tokens_read(chat: ChatModel, messages: list, beginning: list) -> int:
    """New prompt tokens of a first turn: all of it, less the beginning that a backend keeping
    prefixes has read once already (`ChatModel.prefill`)."""
    whole = chat.count_tokens("\n".join(m["content"] for m in messages))
    kept = chat.count_tokens("\n".join(m["content"] for m in beginning)) if chat.keeps_prefixes else 0
    return max(0, whole - kept)


def split_first(evidence: list[Evidence], budget: int, cost: Callable[[Evidence], int]) -> tuple[list[Evidence], list[Evidence]]:
    """The best passages up to `budget` tokens (at least one) for the first claim, and the rest."""
    if budget <= 0:
        return evidence, []
    first, spent = [], 0
    for e in evidence:
        if first and spent + cost(e) > budget:
            break
        first.append(e)
        spent += cost(e)
    return first, evidence[len(first):]


def fit_within(evidence: list[Evidence], budget: int, cost: Callable[[Evidence], int]) -> list[Evidence]:
    """The passages, in their order, that fit `budget` tokens: one that would overflow is passed
    over and a smaller one after it may still fit."""
    out, spent = [], 0
    for e in evidence:
        if spent + cost(e) > budget:
            continue
        out.append(e)
        spent += cost(e)
    return out
