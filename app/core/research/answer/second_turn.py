"""The answer's second turn: the model reads the passages after the best ones and adds claims.

Off by default (`ResearchParams.key_sentences` quotes the best sentences instead, which costs
only the model's yes/no rating of a few candidates); on with `key_sentences = 0`, e.g. for a
model fast enough to read everything. The turn continues the first turn's conversation, so llama.cpp's cache keeps what was read. A small
model asked for more claims repeats its first one or the prompt's instructions: both are dropped.
"""

from __future__ import annotations

from typing import Callable

from ...models.base import ChatMessage, ChatModel
from ...paths import load_prompt
from ...records import Claim
from ..text.citations import key_stems
from ..text.question_reading import word_runs

Ask = Callable[..., tuple[str, "list[Claim] | None"]]  # synthesis._Writer.ask: streams, retries a broken structure

MORE_CLAIMS = 3  # supporting claims in the second turn: each costs ~35 tokens of writing and a check


def more_claims(ask: Ask, chat: ChatModel, conversation: list[ChatMessage], query: str, passages: str,
                numbers: list[int], claims: list[Claim]) -> list[Claim]:
    """The new claims of the second turn (none if they only repeat); the turn joins `conversation` if any are kept.

    `passages`: the other passages as the prompt shows them; `numbers`: every passage a claim may cite.
    """
    more = load_prompt("synthesis_more.md").format(query=query, evidence=passages, n=MORE_CLAIMS)
    conversation.append({"role": "user", "content": more})
    read = "\n".join(m["content"] for m in conversation[-3:] if m["role"] == "user")  # the first turn's and this one's
    reply, written = ask(chat, conversation, numbers, max_claims=MORE_CLAIMS, min_claims=0, min_sources=1,
                         fallback_ok=False, printed=read)
    kept: list[Claim] = []
    instructions = load_prompt("synthesis_more.md").format(evidence="", query="", n=MORE_CLAIMS)
    for c in written or []:  # a small model repeats itself, within the turn as well as across
        if not repeats(c, claims + kept) and not echoes(c.text, instructions):
            kept.append(c)
    if kept:
        conversation.append({"role": "assistant", "content": reply})
    else:
        conversation.pop()
    return kept


ECHO_WORDS = 5  # a run this long copied from the prompt's instructions is the prompt, not a claim


def echoes(text: str, instructions: str) -> bool:
    """True if the claim copies a run of words from the prompt's own instructions (a small model,
    asked for more claims than the passages hold, writes "…adding up to 3 further claims for the
    question…"). The question and the passages are left out of `instructions`: claims may repeat them."""
    return bool(word_runs(text, ECHO_WORDS) & word_runs(instructions, ECHO_WORDS))


REPEAT_SHARE = 0.8  # of a claim's key terms, in an earlier claim: it restates that claim


def repeats(claim: Claim, earlier: list[Claim], share: float = REPEAT_SHARE) -> bool:
    """True if the claim restates an earlier one (small models repeat their first claim when asked
    for more): `share` of its key terms and figures are in one earlier claim; a claim without any does too."""
    terms = key_stems(claim.text)
    if not terms:
        return True
    return any(len(terms & key_stems(c.text)) >= share * len(terms) for c in earlier)
