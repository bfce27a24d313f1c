"""The support check: does the cited passage say what the claim says?

Each (claim, cited passage) pair gets a verdict — supported, partial, unsupported —
and a quote: the exact sentences of the passage that the claim rests on (what the
viewer highlights). Two judges, and the stricter one wins:

- **The rules** (support_rules.FAMILIES, no model): figures, specific names and the direction
  of an effect must agree, a reason the passage does not give caps a claim at partial; a
  pair the rules fail is decided without the model, and a claim that names a table row and
  gives its figures for their own columns is supported without it (table_row_rule.py).
- **The model reads** the claim and the quote. Where the backend exposes the next
  token's probabilities (llama.cpp in-process), each pair is one yes/no question and
  the verdict is cut from P(yes); the question's fixed beginning is read once and
  restored from the model's cache for every pair. Other backends answer in words: all
  pairs of an answer in one call constrained to a verdict schema, continuing the
  conversation that wrote the answer so the evidence is already in the server's cache.

`bench/support.py` measures how often this agrees with hand labels.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, create_model

from ...callbacks import IsCancelled
from ...errors import Cancelled, ModelError
from ...models.base import ChatMessage, ChatModel
from ...models.catalog import JudgeCutoffs
from ...models.structured import json_schema
from ...paths import load_prompt
from ...records import Evidence, Support
from .support_rules import check_specifics, quote_for

log = logging.getLogger(__name__)

ORDER = {Support.UNSUPPORTED.value: 0, Support.PARTIAL.value: 1, Support.SUPPORTED.value: 2}
QUOTE_CHARS = 360  # the quote shown to the word judge: one or two sentences
# The probability judge reads the quote within its passage: up to this many characters of the
# passage around it (~150 tokens). On bench/support.py's pairs the rules pass, the judge told
# supported from unsupported pairs better reading the passage than the quote alone.
JUDGE_CHARS = 600


@dataclass
class Pair:
    """One claim and one passage it cites."""

    claim: str
    evidence: Evidence
    quote: str = ""
    rule: str = Support.SUPPORTED.value  # the rules' cap on the verdict
    rule_reason: str = ""
    verdict: str = ""
    reason: str = ""
    missing: list[str] = field(default_factory=list)
    confidence: float | None = None  # the model's P(the text states the claim), where the backend gives it
    contradicts: bool = False  # the rules found the passage stating otherwise (support_rules.Finding)
    judged: str = ""  # the part of the claim the model judges where the rules cap the rest (Finding.judged)
    settled: bool = False  # the rules decided it supported; the model is not asked (Finding.settled)

    @property
    def asked(self) -> str:
        """What the model is asked about: the claim, or its part the rules left to it."""
        return self.judged or self.claim

    @property
    def for_model(self) -> bool:
        """The model judges this pair: the rules found nothing wrong, or left part of it to the model.
        The stricter verdict wins, so a pair the rules capped otherwise is decided."""
        return (self.rule == Support.SUPPORTED.value and not self.settled) or bool(self.judged)


# -- the model's verdict -------------------------------------------------------------

# The schema's enum: Support's values, in this order (the order the grammar lists them).
VerdictName: Any = Literal[Support.SUPPORTED.value, Support.PARTIAL.value, Support.UNSUPPORTED.value]


def verdicts_model(n: int) -> type[BaseModel]:
    """One verdict per pair, each naming its pair: the 1.5B starter model kept track of the
    pairs far better this way than with a bare list of verdicts (bench/support.py: 15 vs 10 of
    21 supported pairs accepted, at ~8 more tokens a pair)."""
    item = create_model("VerdictItem", pair=(int, ...), verdict=(VerdictName, ...))
    return create_model("VerdictsReply", verdicts=(list[item], Field(min_length=n, max_length=n)))


def verdict_schema(n: int) -> dict[str, Any]:
    """JSON schema for `n` verdicts (see `verdicts_model`)."""
    return json_schema(verdicts_model(n))


class _VerdictRead(BaseModel):
    """One verdict as read back. Lenient on purpose (a backend may ignore the schema): an item
    without a usable pair number counts by its position, an unknown verdict as none."""

    model_config = ConfigDict(coerce_numbers_to_str=True)

    pair: StrictInt | None = None
    verdict: str = ""


class _VerdictsRead(BaseModel):
    verdicts: list[Any] = []


def read_verdicts(reply: str, n: int) -> list[str]:
    """The verdict per pair of a reply ("" where it gave none, or all "" if it is not the schema's shape)."""
    try:
        items = _VerdictsRead.model_validate_json(reply).verdicts
    except ValidationError as exc:
        log.warning("support check: the model's verdicts are unreadable (%s)", exc.errors()[0]["msg"])
        return [""] * n
    out = [""] * n
    for k, raw in enumerate(items):
        try:
            item = _VerdictRead.model_validate(raw)
        except ValidationError:
            continue  # not a verdict object: that pair stays undecided
        idx = item.pair - 1 if item.pair is not None and 1 <= item.pair <= n else k
        if 0 <= idx < n and not out[idx]:
            out[idx] = item.verdict
    return out


def judge_prompt(pairs: list[Pair]) -> str:
    lines = []
    for i, p in enumerate(pairs, 1):
        quote = _clip(p.quote)
        lines.append(f"{i}. Claim: {p.asked}\n   Cited text: \"{quote}\"")
    return load_prompt("support_check.md").format(pairs="\n".join(lines), n=len(pairs))


def model_verdicts(
    chat: ChatModel,
    pairs: list[Pair],
    *,
    conversation: list[ChatMessage] | None = None,
    cancelled: IsCancelled | None = None,
    timeout_s: float | None = None,
) -> list[str]:
    """The model's verdict per pair ("" where it gave none)."""
    if not pairs:
        return []
    messages: list[ChatMessage] = list(conversation or [{"role": "system", "content": load_prompt("support_system.md").strip()}])
    messages.append({"role": "user", "content": judge_prompt(pairs)})
    reply = chat.chat(
        messages,
        max_tokens=24 + 24 * len(pairs),  # ~15 tokens an item, more where a model spaces its JSON
        temperature=0.0,
        json_schema=verdict_schema(len(pairs)),
        cancelled=cancelled,
        timeout_s=timeout_s,
    )
    return read_verdicts(reply, len(pairs))


# -- the model's verdict as a probability (backends that expose one) -------------------

# The model reads one pair at a time and is asked a yes/no question; the verdict comes from
# how likely its first word is "yes", not from the word it would write. A small model writes
# "yes" for most claims on the passage's topic; held to a confidence it separates better.
# Both cut-offs are set on bench/support.py's hand-labelled pairs. On the 78 pairs constructed from
# passages, 0.50 agreed with the labels on 88 % (1 of 41 misattributions passed). But on 53 pairs
# of the starter model's own claims (answers to development questions, labelled blind to the check)
# it agreed on 58 % and passed 6 of 11 misattributions: the model's wrong claims reuse the
# passage's words ("the HC0 estimator is limited to the cross-section case" where the passage says
# it of vcovHC) and get P(yes) 0.5-0.68. At 0.65 (bench/support.py, all 131 pairs): 1 of 11 passes
# on those, 0 of 41 on the constructed ones, 18 of 26 of the model's supported claims are accepted
# (7 of the 21 constructed paraphrases); agreement 73 % against 76 %, but a green mark on the
# model's claims is right about 9 times in 10 instead of 6: a mark a researcher can trust at a
# glance is worth a doubtful one more to open. Between 0.50 and 0.65 lies "partial" (7 of the 10
# claims labelled partial). Chosen on either half of the pairs (at most one misattribution and one
# unsupported claim in ten passed), the cuts came out 0.65/0.50 and 0.65/0.45.
# These are the starter model's cut-offs; the catalog holds them per chat model (`"judge"`, set on
# the model by the factory as `ChatModel.judge_cutoffs`), and a model without them gets these.
SUPPORTED_AT = 0.65  # P(yes) at or above: supported
PARTIAL_AT = 0.50  # P(yes) at or above (and below SUPPORTED_AT): partial; below: unsupported
DEFAULT_JUDGE = JudgeCutoffs(supported=SUPPORTED_AT, partial=PARTIAL_AT)
JUDGE_CHOICES = ["yes", "no"]


def pair_messages(claim: str, text: str) -> list[ChatMessage]:
    """The judge's prompt for one pair: the fixed instruction first (read once, then restored
    from the model's cache for every later pair), the cited text and the claim last."""
    system = load_prompt("support_judge_system.md").strip()
    user = load_prompt("support_judge.md").strip().format(quote=_clip(text, JUDGE_CHARS), claim=claim)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def judge_text(p: Pair, limit: int = JUDGE_CHARS) -> str:
    """What the probability judge reads for a pair: the quote with as much of its passage (the
    sentences the answer was written from) around it as fits in `limit` characters. A quote alone
    loses what its sentences refer to ("This strategy leads to…")."""
    text = " ".join((p.evidence.focus_text if p.evidence.sentences else p.evidence.text).split())
    quote = " ".join(p.quote.split())
    if len(text) <= limit:
        return text
    at = text.find(quote) if quote else -1
    if at < 0 or len(quote) >= limit:
        return _clip(quote, limit) if quote else _clip(text, limit)
    start = max(0, min(at - (limit - len(quote)) // 2, len(text) - limit))
    window = text[start : start + limit]
    if start > 0:  # begin and end on whole words
        window = "… " + window.split(" ", 1)[-1]
    if start + limit < len(text):
        window = window.rsplit(" ", 1)[0] + " …"
    return window


def claim_text(group: list[Pair]) -> str:
    """What the judge reads for all the passages one claim cites, in one read: each passage's
    window around its quote, the windows sharing `JUDGE_CHARS` (at least a quote's length each)."""
    if len(group) == 1:
        return judge_text(group[0])
    limit = max(QUOTE_CHARS, JUDGE_CHARS // len(group))
    return "\n\n".join(judge_text(p, limit) for p in group)


def judge_beginning() -> list[ChatMessage]:
    """What every pair's prompt begins with (`ChatModel.prefill`)."""
    system = load_prompt("support_judge_system.md").strip()
    return [{"role": "system", "content": system},
            {"role": "user", "content": load_prompt("support_judge.md").split("{quote}", 1)[0].rstrip()}]


def verdict_for(p_yes: float, cutoffs: JudgeCutoffs | None = None) -> str:
    """The verdict for the judge's P(yes), cut where the model's catalog entry says (else the defaults)."""
    cuts = cutoffs or DEFAULT_JUDGE
    if p_yes >= cuts.supported:
        return Support.SUPPORTED.value
    return Support.PARTIAL.value if p_yes >= cuts.partial else Support.UNSUPPORTED.value


def support_probability(chat: ChatModel, claim: str, text: str, *, cancelled: IsCancelled | None = None) -> float | None:
    """How likely the model finds that the cited `text` states `claim` and no more (None: the backend cannot tell)."""
    probs = chat.choice_probabilities(pair_messages(claim, text), JUDGE_CHOICES, cancelled=cancelled)
    return None if probs is None else probs["yes"]


def probability_verdicts(chat: ChatModel, pairs: list[Pair], *, cancelled: IsCancelled | None = None,
                         per_claim: bool = False) -> list[str] | None:
    """The verdict per pair from the model's confidence; None if the backend gives none.
    `per_claim`: one read for all the passages a claim cites (`claim_text`), its verdict each pair's."""
    chat.prefill(judge_beginning())
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        groups.setdefault(p.asked if per_claim else str(i), []).append(i)
    out = [""] * len(pairs)
    for members in groups.values():
        group = [pairs[i] for i in members]
        p_yes = support_probability(chat, group[0].asked, claim_text(group), cancelled=cancelled)
        if p_yes is None:
            return None
        for i in members:
            pairs[i].confidence = p_yes
            out[i] = verdict_for(p_yes, chat.judge_cutoffs)
    return out


def judge_of(chat: ChatModel) -> ChatModel:
    """The model that judges `chat`'s claims: the judge the settings name, else the model itself."""
    return chat.judge or chat


def uncalibrated_note(chat: ChatModel | None) -> str:
    """The answer's note where its judge gave no probabilities: verdicts in words, set by no calibration."""
    judge = judge_of(chat) if chat is not None else None
    if judge is None or judge.gives_probabilities:
        return ""
    return (f"Support check: the judge ({judge.name or 'the chat model'}) gives no probabilities, so it judged "
            "in words, uncalibrated (`research-desk models calibrate` measures how far it agrees with hand labels).")


def _clip(quote: str, limit: int = QUOTE_CHARS) -> str:
    return quote if len(quote) <= limit else quote[:limit].rsplit(" ", 1)[0] + " …"


def check_pairs(
    pairs: list[Pair],
    chat: ChatModel | None,
    *,
    conversation: list[ChatMessage] | None = None,
    context: str = "",
    cancelled: IsCancelled | None = None,
    timeout_s: float | None = None,
    per_claim: bool = False,
) -> list[Pair]:
    """Fill in quote, rule cap and verdict of every pair (the stricter judge wins).

    Without a chat model (or if it fails) the rules' verdict stands, marked as such.
    `per_claim`: the probability judge reads all the passages a claim cites at once (one read a claim).
    """
    for p in pairs:
        if not p.quote:
            p.quote = quote_for(p.claim, p.evidence, context)
    verdicts = [""] * len(pairs)
    for i, p in enumerate(pairs):
        found = check_specifics(p.claim, p.evidence.text, context=context, quote=p.quote)
        p.rule, p.rule_reason, p.missing, p.contradicts, p.judged, p.settled = found
        if p.settled:  # a claim that reads a table row back is decided by the row (support_rules.FAMILIES)
            verdicts[i], p.reason = Support.SUPPORTED.value, p.rule_reason
    failure = ""
    # The stricter judge wins, so the model is asked only where the rules found nothing wrong:
    # a pair they already cap is decided (and each pair the model reads costs ~100 prompt tokens).
    # A claim capped for its reason alone is partial only if the model finds the rest stated.
    ask = [i for i, p in enumerate(pairs) if p.for_model and not verdicts[i]]
    if chat is not None and ask:
        try:
            asked = [pairs[i] for i in ask]
            judge = judge_of(chat)
            answers = probability_verdicts(judge, asked, cancelled=cancelled, per_claim=per_claim)
            if answers is None:  # a backend that gives no probabilities answers in words, all pairs in one call
                # (continuing the answer's conversation only where the judge wrote it: it is in that server's cache)
                answers = model_verdicts(judge, asked, conversation=conversation if judge is chat else None,
                                         cancelled=cancelled, timeout_s=timeout_s)
            for i, v in zip(ask, answers):
                verdicts[i] = v
        except Cancelled:
            raise
        except ModelError as exc:  # a failed check must not lose the answer: rules decide, and say so
            failure = exc.message
            log.warning("support check: the model's verdicts failed (%s); the rules decide", exc.message)
    for i, (p, v) in enumerate(zip(pairs, verdicts)):
        if v not in ORDER and p.rule != Support.SUPPORTED.value and chat is not None and not failure:
            v, p.reason = p.rule, p.rule_reason  # decided by the rules above; their reason is the note
        if v not in ORDER:
            v = p.rule
            p.reason = "checked by rules only" + (f" (the model's check failed: {failure})" if failure else "")
            if p.rule_reason:
                p.reason = f"{p.rule_reason}; {p.reason}"
        p.verdict = min(v, p.rule, key=ORDER.__getitem__)
        if ORDER[p.rule] < ORDER[v]:
            p.reason = p.rule_reason
        elif p.verdict != Support.SUPPORTED.value and not p.reason:
            p.reason = "the model judged the cited text not to state this" if p.verdict == Support.UNSUPPORTED.value else "the cited text states only part of this"
            if p.confidence is not None:
                p.reason += f" (the model's confidence that it does: {p.confidence:.0%})"
    return pairs
