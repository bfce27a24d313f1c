"""Running the answer engine with a stand-in chat model, and what every answer must hold."""

from __future__ import annotations

import json
import re

from app.core.events import Task
from app.core.models.base import ChatModel


def answer_with(desk, chat: ChatModel, question: str, overrides: dict | None = None):
    """(result, events) of one question answered by `chat` in place of the desk's model."""
    desk.set_chat_model(chat)
    events: list = []
    try:
        return desk.funnel(Task(sink=events.append), overrides=overrides).run(question), events
    finally:
        desk._chat = None


def assert_cited_in_place(result) -> None:
    """Every claim cites only passages the prompt showed, and every citation's tag stands in the answer where it points."""
    assert result.claims, result.messages
    numbers = {e.number for e in result.evidence}
    assert all(set(c.sources) <= numbers for c in result.claims)
    for c in result.citations:
        assert result.answer[c.start : c.end] == f"[{c.paper_id}, page {c.page}]"


def judge_and_restate(restated: str | None, believed: str):
    """A scripted reply (for ScriptedChat's `replies`): the rewriting prompt gets `restated` (None:
    it copies the first sentence it is shown); the support check finds supported only the pairs
    whose claim is `believed`."""

    def reply(messages):
        text = messages[-1]["content"]
        if "Sentences from the researcher's papers" in text:
            if restated is None:  # copy the first quoted sentence, as a small model may
                return json.dumps({"claim": re.search(r"^- “(.*)”$", text, flags=re.M).group(1) + "."})
            return json.dumps({"claim": restated})
        claims = re.findall(r"^\d+\. Claim: (.*)$", text, flags=re.M)
        return json.dumps({"verdicts": [{"pair": i, "verdict": "supported" if c == believed else "unsupported"}
                                        for i, c in enumerate(claims, 1)]})

    return reply
