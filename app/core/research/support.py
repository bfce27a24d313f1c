"""The support check: does the cited passage say what the claim says?

Each (claim, cited passage) pair gets a verdict — supported, partial, unsupported —
and a quote: the exact sentences of the passage that the claim rests on (what the
viewer highlights). Two judges, and the stricter one wins:

- **Specifics must agree** (rules, no model): every number in the claim must occur in
  the passage, and every specific name (genes, organisms, datasets, methods, software:
  words with capitals inside, letters mixed with digits, acronyms) must too. A missing
  number makes the pair unsupported; a missing name makes it at best partial. Shared
  topic words alone never make a pair supported — that is what misattributions share.
- **The model reads** the claim and the quote and answers with a constrained verdict
  (a JSON schema built from a pydantic model, so it cannot ramble). All pairs of an
  answer go in one short call; when the conversation that wrote the answer is passed
  in, the model's KV cache already holds the evidence and the claims, so only the
  question list is read anew.

`bench/support.py` measures how often this agrees with hand labels.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, create_model

from ..callbacks import IsCancelled
from ..errors import Cancelled, ModelError
from ..models.base import ChatMessage, ChatModel
from ..models.structured import json_schema
from ..paths import load_prompt
from ..records import Evidence, Support
from .citations import key_terms, stem
from .focus import split_sentences

log = logging.getLogger(__name__)

ORDER = {Support.UNSUPPORTED.value: 0, Support.PARTIAL.value: 1, Support.SUPPORTED.value: 2}
QUOTE_CHARS = 360  # the quote shown to the judge: one or two sentences


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


# -- quotes ------------------------------------------------------------------------

def quote_for(claim: str, e: Evidence) -> str:
    """The sentence(s) of the passage that share most with the claim (exact text of the passage).

    Candidates are the passage's focused sentences when it has them (what the model was
    shown), else all its sentences. A neighbouring second sentence is added when it
    brings claim terms the first lacks.
    """
    units = [(s.text, s.char_start) for s in e.sentences] or [(c.text, c.start) for c in split_sentences(e)]
    if not units:
        return e.text.strip()
    claim_terms = {stem(t) for t in key_terms(claim)} | set(_specifics(claim))
    def terms(text: str) -> set[str]:
        return {stem(t) for t in key_terms(text)} | set(_specifics(text))
    bags = [terms(t) for t, _ in units]
    scores = [len(claim_terms & b) for b in bags]
    best = max(range(len(units)), key=lambda i: (scores[i], -i))
    chosen = [best]
    for j in (best - 1, best + 1):
        if 0 <= j < len(units) and (claim_terms & bags[j]) - bags[best]:
            chosen.append(j)
            break
    return " ".join(units[i][0] for i in sorted(chosen))


# -- rules: specifics must agree ---------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:[.,]\d+)*(?:\.\d+)?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*[A-Za-z0-9]|[A-Za-z]")
_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "twelve": "12", "twenty": "20", "hundred": "100",
    "half": "50", "once": "1", "twice": "2", "single": "1", "double": "2", "triple": "3",
}
# Capitalised words that are ordinary English at a sentence start or in titles.
_COMMON_CAPS = set(
    """The A An In On For With This That These Those It Its We Our They Their There Here As At By From To Of And Or
    But If When While Where Which Who What How Why Both Each All Some Most Many More Less No Not Only Also However
    Thus Therefore Moreover Furthermore Table Figure Fig Section Appendix Eq Equation Chapter Model Models Method Methods
    Results Result Study Studies Paper Authors Author Data Using Use Used Compared Overall Finally First Second Third
    Although Because Since After Before During Under Over Between Among Within Without According Such Other Another
    Yes Non One Two Three Four Five I""".split()
)


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUMBER.finditer(text):
        raw = m.group().replace("−", "-").replace(",", "")
        try:
            value = float(raw)
        except ValueError:
            continue
        out.add(f"{value:g}")
    return out


def _passage_numbers(text: str) -> set[str]:
    nums = _numbers(text)
    words = {w.lower() for w in _WORD.findall(text)}
    nums |= {v for w, v in _NUMBER_WORDS.items() if w in words}
    # "64 %" and "0.64" state the same share.
    for n in list(nums):
        try:
            v = float(n)
        except ValueError:
            continue
        if 0 < v <= 100:
            nums.add(f"{v / 100:g}")
        if 0 < v < 1:
            nums.add(f"{v * 100:g}")
    return nums


def _specifics(text: str) -> list[str]:
    """Names a claim must not get wrong: mixed case, letters with digits, acronyms, Latin binomials' genus."""
    out = []
    words = _WORD.findall(text)
    for i, w in enumerate(words):
        inner_caps = any(ch.isupper() for ch in w[1:])
        has_digit = any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w)
        capitalised = w[0].isupper() and w not in _COMMON_CAPS and i > 0 and len(w) > 2
        if inner_caps or has_digit or capitalised:
            out.append(w.lower())
    return out


# Opposite word stems (matched as word prefixes, so "increased" ~ "increas"). A claim using one
# where the cited text uses only the other reverses what the passage says: the misattribution
# a shared topic hides best.
_OPPOSITES = [
    ("increas", "decreas"), ("higher", "lower"), ("larger", "smaller"), ("greater", "smaller"),
    ("positiv", "negativ"), ("rise", "fall"), ("rose", "fell"), ("rais", "lower"), ("above", "below"),
    ("earlier", "later"), ("faster", "slower"), ("longer", "shorter"), ("gain", "loss"), ("improv", "worsen"),
    ("improv", "deteriorat"), ("correlat", "uncorrelat"), ("significan", "insignifican"), ("significan", "nonsignifican"),
    ("toleran", "sensitiv"), ("overestimat", "underestimat"), ("maxim", "minim"), ("upper", "lower"),
    ("stabl", "unstabl"), ("accept", "reject"), ("includ", "exclud"), ("outperform", "underperform"),
    ("liberal", "conservativ"), ("cheap", "expensiv"), ("cheap", "demanding"), ("efficien", "inefficien"),
    ("consisten", "inconsisten"), ("bias", "unbias"), ("safe", "unsafe"), ("suitabl", "unsuitabl"),
    ("appropriat", "inappropriat"), ("benefit", "harm"), ("success", "fail"), ("strong", "weak"),
]


def reversed_direction(claim: str, quote: str) -> str:
    """A direction word of the claim whose opposite the quote uses instead ("" if none)."""
    cw = [w.lower() for w in _WORD.findall(claim)]
    qw = [w.lower() for w in _WORD.findall(quote)]

    def has(words: list[str], prefix: str, unless: str) -> bool:
        # "unless": the longer opposite that begins with this prefix ("uncorrelated" is not "correlated").
        return any(w.startswith(prefix) and not w.startswith(unless) for w in words)

    for a, b in _OPPOSITES:
        for x, y in ((a, b), (b, a)):
            if has(cw, x, y) and has(qw, y, x) and not has(qw, x, y) and not has(cw, y, x):
                return f"{x}… vs {y}…"
    return ""


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def check_specifics(claim: str, passage: str, *, context: str = "", quote: str = "") -> tuple[str, str, list[str]]:
    """(cap on the verdict, why, what is missing) from numbers and names the passage lacks.

    `context` is text the claim may legitimately take names from without the passage
    stating them (the question, the paper's title): "In lme4, …" cites a passage that
    says "the package".
    """
    claim_nums = _numbers(claim)
    have = _passage_numbers(passage) | _passage_numbers(context)
    # Years and one-digit counts in the claim that the passage spells out are common;
    # anything else missing is a number the passage does not state.
    missing_nums = sorted(n for n in claim_nums - have)
    passage_words = {stem(w.lower()) for w in _WORD.findall(passage + " " + context)}
    squashed = _squash(passage + " " + context)  # "quasi-Poisson" ~ "quasipoisson", "Fv/Fm" ~ "FvFm"
    missing_names = []
    for name in dict.fromkeys(_specifics(claim)):
        key = _squash(name)
        if stem(name) in passage_words or (key and key in squashed) or (key.endswith("s") and key[:-1] in squashed):
            continue
        missing_names.append(name)
    flipped = reversed_direction(claim, quote or passage)
    if missing_nums:
        return Support.UNSUPPORTED.value, f"the passage does not state {', '.join(missing_nums[:3])}", missing_nums + missing_names
    if flipped:
        return Support.UNSUPPORTED.value, f"the passage says the opposite ({flipped})", [flipped]
    if missing_names:
        # A specific name the cited text never uses is how a misattribution reads (another
        # gene, dataset, method or organism on the same topic): not supported.
        return Support.UNSUPPORTED.value, f"the passage does not name {', '.join(missing_names[:3])}", missing_names
    return Support.SUPPORTED.value, "", []


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
        quote = p.quote if len(p.quote) <= QUOTE_CHARS else p.quote[:QUOTE_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"{i}. Claim: {p.claim}\n   Cited text: \"{quote}\"")
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


def check_pairs(
    pairs: list[Pair],
    chat: ChatModel | None,
    *,
    conversation: list[ChatMessage] | None = None,
    context: str = "",
    cancelled: IsCancelled | None = None,
    timeout_s: float | None = None,
) -> list[Pair]:
    """Fill in quote, rule cap and verdict of every pair (the stricter judge wins).

    Without a chat model (or if it fails) the rules' verdict stands, marked as such.
    """
    for p in pairs:
        if not p.quote:
            p.quote = quote_for(p.claim, p.evidence)
        p.rule, p.rule_reason, p.missing = check_specifics(p.claim, p.evidence.text, context=context, quote=p.quote)
    verdicts = [""] * len(pairs)
    failure = ""
    # The stricter judge wins, so the model is asked only where the rules found nothing wrong:
    # a pair they already cap is decided (and each pair the model reads costs ~100 prompt tokens).
    ask = [i for i, p in enumerate(pairs) if p.rule == Support.SUPPORTED.value]
    if chat is not None and ask:
        try:
            answers = model_verdicts(chat, [pairs[i] for i in ask], conversation=conversation, cancelled=cancelled, timeout_s=timeout_s)
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
    return pairs
