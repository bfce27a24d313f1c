"""Worked answers: invented questions answered as the first turn should answer, read by the chat
model as earlier turns of its conversation (`synthesis_worked.md`).

They sit in the answer's fixed beginning (`answer_prompt.answer_beginning`), which a backend that
keeps prefixes reads once when the model loads; from then on they cost no reading time, only
context. Each is put in the real question's template from its "Question:" on, so the model sees
the question it is asked in the form its examples had, and reads the rules once, with it.
"""

from __future__ import annotations

import re
from functools import cache

from ...models.base import ChatMessage, ChatModel
from ...paths import load_prompt

PROMPT = "synthesis_worked.md"
CONTEXT_SHARE = 3  # worked answers take at most this part of the context: a small one keeps its room for the evidence
_HEADING = re.compile(r"^## (Question|Passages|Reply)\s*$", re.M)


@cache
def worked_examples(name: str = PROMPT) -> tuple[tuple[str, str, str], ...]:
    """(question, passages, reply) of each worked answer in the file, in order."""
    text = load_prompt(name)
    parts = _HEADING.split(text)[1:]  # the note above the first heading is for engineers
    fields = [(parts[i], parts[i + 1].strip()) for i in range(0, len(parts), 2)]
    examples = []
    for k in range(0, len(fields) - 2, 3):
        (h1, question), (h2, passages), (h3, reply) = fields[k:k + 3]
        if (h1, h2, h3) != ("Question", "Passages", "Reply"):
            raise ValueError(f"{name}: a worked answer is Question, Passages, Reply in that order")
        examples.append((question, passages, reply))
    if len(fields) % 3:
        raise ValueError(f"{name}: a worked answer is missing its passages or its reply")
    return tuple(examples)


def worked_turns(template: str, fields: dict | None = None, count: int = 0) -> list[ChatMessage]:
    """The first `count` worked answers as user and assistant turns, each question in `template`
    from where its question begins: the rules, read once in the real question's turn, are not
    repeated (they cost context, and the kept beginning's length slows all reading after it)."""
    body = load_prompt(template)
    body = body[body.index("Question: {query}"):]
    turns: list[ChatMessage] = []
    for question, passages, reply in worked_examples()[:max(0, count)]:
        turns.append({"role": "user", "content": body.format(query=question, evidence=passages, **(fields or {}))})
        turns.append({"role": "assistant", "content": reply})
    return turns


def fitting_turns(chat: ChatModel, template: str, fields: dict | None, wanted: int) -> list[ChatMessage]:
    """The first `wanted` worked answers' turns, fewer where they would take more than a third of
    the chat model's context; none for a backend that does not keep prefixes, which would read
    them again with every question."""
    if not chat.keeps_prefixes:
        return []
    for count in range(wanted, 0, -1):
        turns = worked_turns(template, fields, count)
        if chat.count_message_tokens(turns) <= chat.context_length // CONTEXT_SHARE:
            return turns
    return []
