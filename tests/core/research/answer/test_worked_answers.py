"""Worked answers: the first turn's examples keep the rules they teach, sit in the prompt's kept
beginning, and give way in a small context (research/answer/worked_answers.py)."""

from __future__ import annotations

import json
import re

import pytest

from app.core.models.base import ChatModel
from app.core.records import Evidence
from app.core.research.answer.claims import parse_claims
from app.core.research.answer.prompt import answer_beginning, claims_prompt, first_turn
from app.core.research.answer.worked_answers import fitting_turns, worked_examples, worked_turns
from app.core.events import Task
from app.core.settings import ResearchParams
from tests.support.answers import assert_cited_in_place

HEADER = re.compile(r"^\[(\d+)\] \([^,()]+, page \d+(?:; [^()]+)?\)$", re.M)
FIGURE = re.compile(r"\d+(?:[.,]\d+)?")


@pytest.mark.parametrize("example", worked_examples(), ids=lambda e: e[0][:40])
def test_each_worked_answer_keeps_the_rules_it_teaches(example):
    """Passages headed as the app heads them; a reply the schema reads, citing passages shown;
    every figure it states copied from a passage it cites."""
    question, passages, reply = example
    assert question.endswith("?") and "\n" not in question
    numbers = {int(n) for n in HEADER.findall(passages)}
    assert numbers == set(range(1, len(numbers) + 1)), "passages are numbered 1, 2, … in the app's header form"
    claims = parse_claims(reply, numbers)
    assert claims and all(c.sources for c in claims[:1])
    texts = dict(zip(sorted(numbers), re.split(HEADER, passages)[2::2]))
    for claim in claims:
        cited = " ".join(texts[n] for n in claim.sources)
        for figure in FIGURE.findall(claim.text):
            assert figure in cited, f"{figure!r} of {claim.text!r} is in no passage it cites"


@pytest.mark.parametrize("count", [0, 1, 2])
def test_the_kept_beginning_is_the_first_turns_prompt_up_to_its_question(count):
    template, fields = first_turn(ResearchParams())
    earlier = worked_turns(template, fields, count)
    passage = Evidence(number=1, paper_id="kestrel-migration", page=3, page_label="3", section="Results",
                       text="Kestrels left on 14 September.", score=0.7)
    prompt = claims_prompt("When do kestrels leave?", [passage], template=template, earlier=earlier, **fields)
    beginning = answer_beginning(template, fields, earlier=earlier)
    assert len(prompt) == len(beginning) == 2 + 2 * count
    assert prompt[:-1] == beginning[:-1]
    assert prompt[-1]["content"].startswith(beginning[-1]["content"])
    assert [m["role"] for m in earlier] == ["user", "assistant"] * count
    for (question, _, reply), (asked, answered) in zip(worked_examples(), zip(earlier[::2], earlier[1::2])):
        assert asked["content"].count(question) == 2  # in the template's two places, as a real question
        assert "Rules:" not in asked["content"]  # the rules are read once, in the real question's turn
        assert answered["content"] == reply


class _Counting:
    """Tokens as words: enough to see what fits a context."""

    def __init__(self, context_length: int, keeps_prefixes: bool = True) -> None:
        self.context_length, self.keeps_prefixes = context_length, keeps_prefixes

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    count_message_tokens = ChatModel.count_message_tokens


def test_worked_answers_give_way_in_a_small_context():
    template, fields = first_turn(ResearchParams())
    whole = sum(len(m["content"].split()) for m in worked_turns(template, fields, 2))
    assert len(fitting_turns(_Counting(3 * whole), template, fields, 2)) == 4
    assert len(fitting_turns(_Counting(3 * whole), template, fields, 5)) == 4  # the file's two, no more
    assert len(fitting_turns(_Counting(3 * whole), template, fields, 1)) == 2
    assert len(fitting_turns(_Counting(2 * whole), template, fields, 2)) == 2  # one fits, not both
    assert fitting_turns(_Counting(30), template, fields, 2) == []
    assert fitting_turns(_Counting(3 * whole, keeps_prefixes=False), template, fields, 2) == []  # read every time


class _Recording:
    """The real chat model, with the messages of each call kept."""

    def __init__(self, chat) -> None:
        self._chat, self.calls = chat, []

    def __getattr__(self, name):
        return getattr(self._chat, name)

    def chat(self, messages, **kwargs):
        self.calls.append(messages)
        return self._chat.chat(messages, **kwargs)


@pytest.mark.slow
def test_the_real_model_answers_after_the_worked_answers_its_context_holds(fact_library):
    """SmolLM2 in a 2,048-token context: the worked answers come before the question, and the
    model's claim cites only the passages it was shown."""
    real = fact_library.chat()
    recording = _Recording(real)
    fact_library.set_chat_model(recording)
    try:
        funnel = fact_library.funnel(Task(), overrides={"first_claim_tokens": 1})  # the default: two
        result = funnel.run("When do kestrels depart from alpine valleys in autumn?")
    finally:
        fact_library._chat = None
    first = recording.calls[0]
    template, fields = first_turn(funnel.params)
    earlier = fitting_turns(real, template, fields, funnel.params.worked_answers)
    assert len(earlier) == 4, "a 2,048-token context holds both worked answers"
    assert first[1:1 + len(earlier)] == earlier
    assert "kestrels" in first[len(earlier) + 1]["content"]
    assert real.count_message_tokens(earlier) <= real.context_length // 3
    assert_cited_in_place(result)
    assert any(not c.quoted for c in result.claims), "the model wrote no claim of its own"
