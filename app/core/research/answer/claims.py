"""Claim-bound answers: the schema the model writes to, and what is read back as it streams.

With structured output (the schema built from a pydantic model, `claims_model`) the model answers
as `{"claims": [{"text": …, "sources": [3, 5]}, …]}`, the sources held to the numbers of the
passages it was shown (an enum), so every claim carries its own citations.

`ClaimStream` reads the reply as it is written and hands over each claim the moment
its closing brace arrives, so the answer view fills claim by claim. `claim_sentence`
renders a claim as prose citing `[PAPER_ID, page N]`, the form the rest of the app reads.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ...units import text_units
from ...models.structured import json_schema
from ...records import Claim, Evidence
from ...text.wording import trim_repetition

MAX_CLAIMS = 6
MAX_SOURCES = 3
MAX_CLAIM_CHARS = 400  # one sentence, not a paragraph: claims are checked one by one
# A small model copying a long list can loop on it ("… mannose, rhipocephalin, stigmasta-4,22-
# diene-3,6-diol, ergostane-3,6-diol, ergost-4-ene-3,6-dione, … mannose, rhipocephalin, …") until
# the length cap: a claim is cut where a run of this many words comes again...
CLAIM_LOOP_WORDS = 8
# ...a third time, or a second time in a claim the cap stopped. A claim that answers two parts in
# parallel says its run twice and ends: "The squareness of the Z22 block corresponds to the
# Blanchard and Kahn (1980) order condition, and the non-singularity of the Z22 block corresponds
# to the Blanchard and Kahn (1980) rank condition." was cut to "…, and the non-singularity …".
LOOP_TIMES = 3


def claims_model(numbers: list[int], *, min_items: int = 1, max_items: int = MAX_CLAIMS, min_sources: int = 0) -> type[BaseModel]:
    """The reply model for an answer as claims citing the given passage numbers.

    `min_sources=1` makes every claim cite (supporting claims); the direct answer may cite
    none, so that "the passages do not answer this" can be said.
    """
    allowed = sorted(set(numbers))
    source: Any = Literal[tuple(allowed)] if allowed else int
    claim = create_model(
        "ClaimItem",
        text=(str, Field(max_length=MAX_CLAIM_CHARS)),
        sources=(list[source], Field(min_length=min_sources, max_length=MAX_SOURCES)),
    )
    return create_model("ClaimsReply", claims=(list[claim], Field(min_length=min_items, max_length=max_items)))


def claims_schema(numbers: list[int], *, min_items: int = 1, max_items: int = MAX_CLAIMS, min_sources: int = 0) -> dict[str, Any]:
    """JSON schema for an answer as claims citing the given passage numbers (see `claims_model`)."""
    return json_schema(claims_model(numbers, min_items=min_items, max_items=max_items, min_sources=min_sources))


class _ClaimRead(BaseModel):
    """One claim as read back. Lenient where the schema is strict, on purpose: a backend that
    ignores the schema (or a claim cut from a stream) loses only its bad parts — sources it
    was never shown, repeats — rather than the whole answer."""

    model_config = ConfigDict(coerce_numbers_to_str=True)

    text: str = ""
    sources: list[Any] = []


class _ReplyRead(BaseModel):
    claims: list[Any]


def parse_claims(reply: str, numbers: set[int]) -> list[Claim]:
    """The claims of a complete reply; raises ValueError if it is not the schema's shape."""
    try:
        data = _ReplyRead.model_validate_json(reply)
    except ValidationError as exc:  # also a ValueError; this message names what is wrong
        raise ValueError(f"the reply has no list of claims ({exc.error_count()} problem(s))") from None
    return [c for c in (_claim(item, numbers) for item in data.claims) if c is not None]


def _claim(item: Any, numbers: set[int]) -> Claim | None:
    try:
        read = _ClaimRead.model_validate(item)
    except ValidationError:
        return None  # not a claim object: skipped, the others stand
    capped = len(read.text) >= MAX_CLAIM_CHARS
    text, looped = trim_repetition(" ".join(read.text.split()), CLAIM_LOOP_WORDS, 2 if capped else LOOP_TIMES)
    if capped and not looped:
        text = whole_sentences(text)
    if not text:
        return None
    sources: list[int] = []
    for n in read.sources:
        if isinstance(n, int) and n in numbers and n not in sources:
            sources.append(n)
    return Claim(text=text, sources=sources)


def whole_sentences(text: str) -> str:
    """A claim the schema's length cap (MAX_CLAIM_CHARS) cut off, back to its last whole sentence;
    one cut inside its only sentence keeps its whole words, marked as cut ("…")."""
    text = text.rstrip()
    if text.endswith((".", "!", "?", "”", '"', ")")):
        return text
    sentences = text_units(text)  # chunking's sentence split (abbreviations such as "et al." kept)
    if len(sentences) > 1:
        return text[: sentences[-2][1]]
    return text.rsplit(" ", 1)[0].rstrip(",;: ") + " …"  # the cap may fall inside a word


_PARTIAL_TEXT = re.compile(r'\{\s*"text"\s*:\s*"((?:[^"\\]|\\.)*)')
_OPEN_ESCAPE = re.compile(r'(?<!\\)(?:\\\\)*\\(?:u[0-9a-fA-F]{0,3})?$')


def partial_text(item: str) -> str:
    """The text of a claim object still being written, as far as it is certain.

    `item` is the object from its opening brace. The text is given the way `claim_sentence`
    will render it (whitespace collapsed), less what may still change: trailing spaces and a
    final stop, before which the citations go. "" until the "text" value has begun.
    """
    m = _PARTIAL_TEXT.match(item)
    if m is None:
        return ""
    raw = _OPEN_ESCAPE.sub("", m.group(1))
    try:
        text = json.loads(f'"{raw}"')
    except json.JSONDecodeError:
        return ""
    return " ".join(text.split()).rstrip(".!?").rstrip()


class ClaimStream:
    """Feed it the reply token by token; it calls `on_claim` with each claim once complete,
    and `on_text` with the text of the claim being written as it grows (for the screen).

    A small scanner over the JSON text: it tracks strings (and escapes) and brace depth,
    and parses each object that closes at the depth of the claims array's items.
    """

    def __init__(self, numbers: set[int], on_claim: Callable[[Claim], None] | None = None,
                 on_text: Callable[[str], None] | None = None) -> None:
        self.numbers = numbers
        self.on_claim = on_claim
        self.on_text = on_text
        self.claims: list[Claim] = []
        self._text: list[str] = []
        self._pos = 0
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._item_start: int | None = None

    def feed(self, piece: str) -> None:
        self._text.append(piece)
        buf = "".join(self._text)
        for i in range(self._pos, len(buf)):
            ch = buf[i]
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._in_string = False
                continue
            if ch == '"':
                self._in_string = True
            elif ch in "{[":
                self._depth += 1
                # depth 1: the reply object; 2: the claims array; 3: one claim object.
                if ch == "{" and self._depth == 3:
                    self._item_start = i
            elif ch in "}]":
                if ch == "}" and self._depth == 3 and self._item_start is not None:
                    self._emit(buf[self._item_start : i + 1])
                    self._item_start = None
                self._depth -= 1
        self._pos = len(buf)
        if self.on_text is not None and self._item_start is not None:
            text = partial_text(buf[self._item_start :])
            if text:
                self.on_text(text)

    def _emit(self, text: str) -> None:
        try:
            claim = _claim(json.loads(text), self.numbers)
        except json.JSONDecodeError:
            return  # the final parse of the whole reply decides
        if claim is not None:
            self.claims.append(claim)
            if self.on_claim is not None:
                self.on_claim(claim)


def cite_tag(e: Evidence) -> str:
    return f"[{e.paper_id}, page {e.page}]"


KEY_PASSAGES = "**Key passages**"  # the heading over the quoted sentences, beneath the model's answer


def claim_separator(claims: list[Claim], index: int) -> str:
    """What goes before `claims[index]` (an index past the end: a claim of the model still being
    written): the direct answer stands alone, the model's further claims follow as one paragraph,
    and the quoted sentences are a list under their own heading, set apart as evidence."""
    if index < len(claims) and claims[index].quoted:
        if any(c.quoted for c in claims[:index]):
            return "\n- "
        return ("\n\n" if index else "") + KEY_PASSAGES + "\n\n- "
    return "" if index == 0 else ("\n\n" if index == 1 else " ")


def split_stop(text: str, quoted: bool = False) -> tuple[str, str]:
    """(claim text without its final stop, the stop): citations go before the stop. A key passage
    is an item of a list, in quotation marks, and takes no stop after its citation."""
    text = text.rstrip()
    if quoted:
        return text, ""
    if text and text[-1] in ".!?":
        return text[:-1].rstrip(), text[-1]
    return text, "."


def claim_sentence(claim: Claim, by_number: dict[int, Evidence]) -> str:
    """One claim as a sentence with its citations before the final stop (synthesis.render gives the same text)."""
    text, stop = split_stop(claim.text, claim.quoted)
    tags = "".join(" " + cite_tag(by_number[n]) for n in dict.fromkeys(claim.sources) if n in by_number)
    return f"{text}{tags}{stop}"
