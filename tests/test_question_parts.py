"""A question's further parts: split by grammar, and a turn of their own when the first turn leaves them open."""

from __future__ import annotations

import json
import re

import pytest

from app.core.events import ClaimWritten, Stage, Task
from app.core.records import Claim, Evidence, Sentence
from app.core.research.answer.question_parts import open_parts, part_evidence, question_parts
from tests.test_answer_engine import ScriptedChat, answer_with, assert_cited_in_place


@pytest.mark.parametrize("question, parts", [
    ("In the dropout paper's MNIST experiments, what retention probabilities were used and how far did the error fall with ReLUs?",
     ["In the dropout paper's MNIST experiments, what retention probabilities were used", "how far did the error fall with ReLUs"]),
    ("What does Rcpp.package.skeleton put into DESCRIPTION, and do I still need src/Makevars to link against Rcpp?",
     ["What does Rcpp.package.skeleton put into DESCRIPTION", "do I still need src/Makevars to link against Rcpp"]),
    ("Which temperatures were used for the heat-stressed plants? When was the treatment started?",
     ["Which temperatures were used for the heat-stressed plants", "When was the treatment started"]),
    # a list inside one clause, and a question word too short to ask anything alone, stay one part
    ("In lme4 model formulas, what do (1 | g1/g2), (1 | g1) + (1 | g2) and (x || g) mean?",
     ["In lme4 model formulas, what do (1 | g1/g2), (1 | g1) + (1 | g2) and (x || g) mean"]),
    ("Where and when did Rcpp originate, and what happened to the classic API?",
     ["Where and when did Rcpp originate", "what happened to the classic API"]),
    # "and" before a verb that is not a question of its own does not split
    ("How were mice housed and fed during the 12-week diet?", ["How were mice housed and fed during the 12-week diet"]),
    ("Which gene was knocked out and is expressed in the liver?", ["Which gene was knocked out and is expressed in the liver"]),
])
def test_a_question_is_split_where_a_new_question_clause_begins(question, parts):
    assert question_parts(question) == parts


def test_a_part_is_open_until_a_claim_speaks_to_it():
    question = "What LC50 did the n-hexane fraction give, and how does it compare with the positive control?"
    answered = [Claim("The n-hexane fraction gave an LC50 of 2.17 µg/ml, higher than the positive control vincristine (0.28 µg/ml).")]
    assert open_parts(question, answered) == []
    first_only = [Claim("The n-hexane fraction gave an LC50 of 2.17 µg/ml.")]
    assert open_parts(question, first_only) == ["how does it compare with the positive control"]
    assert open_parts("What LC50 did the n-hexane fraction give?", first_only) == []


def _passage(number: int, page: int, text: str) -> Evidence:
    sentences = [Sentence(s, 0, len(s)) for s in re.split(r"(?<=\.) ", text)]
    return Evidence(number, "paper", page, str(page), "", text, 0.5, sentences=sentences)


def test_the_part_gets_the_unread_passages_that_bear_on_it(fact_library):
    passages = [
        _passage(1, 2, "Dropout nets used a retention probability of 0.5 for hidden units and 0.8 for input units."),
        _passage(2, 5, "The network was trained with stochastic gradient descent and momentum 0.95."),
        _passage(3, 6, "The test error fell from 1.60% without dropout to 1.35% with dropout and 1.06% with max-norm."),
        _passage(4, 9, "Restricted Boltzmann machines were pretrained layer by layer."),
    ]
    embedder = fact_library.funnel().embedder
    cost = lambda e: len(e.text.split())  # noqa: E731 - words stand in for tokens here
    chosen = part_evidence("how far did the test error fall with max-norm", passages, {1}, embedder, budget=20, cost=cost)
    assert [e.number for e in chosen] == [3]  # the passage read in the first turn is not offered again
    wider = part_evidence("how far did the test error fall with max-norm", passages, {1}, embedder, budget=60, cost=cost)
    assert 3 in {e.number for e in wider} and 1 not in {e.number for e in wider}
    assert part_evidence("how far did the error fall", passages, {1, 2, 3, 4}, embedder, budget=60, cost=cost) == []


def _cite(fragment: str, text: str):
    """A scripted reply that cites the passage whose text holds `fragment`, as the prompt numbers it."""
    def reply(messages):
        prompt = "\n".join(m["content"] for m in messages)
        numbers = [int(n) for n, body in re.findall(r"^\[(\d+)\] \([^)]*\)\n(.*)$", prompt, re.M) if fragment in body]
        return json.dumps({"claims": [{"text": text, "sources": numbers[-1:]}]})
    return reply


def test_an_open_part_gets_its_own_turn_with_the_passages_for_it(fact_library):
    question = "How fast did the glacier front retreat, and how was the retreat measured?"
    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    part = _cite("Drone photogrammetry measures", "The retreat was measured by drone photogrammetry.")
    chat = ScriptedChat([first, part])
    result, events = answer_with(fact_library, chat, question, {"first_claim_tokens": 1, "part_turns": 2})
    asked = chat.calls[1]["messages"]
    assert asked[: len(chat.calls[0]["messages"])] == chat.calls[0]["messages"]  # the same conversation, kept in cache
    new = asked[-1]["content"]
    assert "how was the retreat measured" in new and "Drone photogrammetry measures" in new
    assert "38 metres" not in new  # the first turn's passage is in the cache, not shown again
    assert chat.calls[1]["schema"]["properties"]["claims"]["maxItems"] == 1
    assert [c.text for c in result.claims][:2] == ["The glacier front retreated 38 metres per year.",
                                                    "The retreat was measured by drone photogrammetry."]
    method = next(c for c in result.citations if c.claim == 1)
    assert method.page == 1 and "Drone photogrammetry" in next(e.text for e in result.evidence if e.number == method.evidence_number)
    assert any(isinstance(e, Stage) and "how was the retreat measured" in e.detail for e in events)


def test_a_part_no_passage_answers_is_named_not_claimed(fact_library):
    question = "How fast did the glacier front retreat, and how was the retreat measured?"
    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    unanswered = json.dumps({"claims": [{"text": "The passages do not say how the retreat was measured.", "sources": []}]})
    result, _ = answer_with(fact_library, ScriptedChat([first, unanswered]), question, {"first_claim_tokens": 1, "part_turns": 2})
    assert [c.text for c in result.claims if not c.quoted] == ["The glacier front retreated 38 metres per year."]
    assert any("how was the retreat measured" in m and "no passage" in m for m in result.messages), result.messages


def test_parts_answered_in_the_first_turn_get_no_turn_and_turns_are_off_by_default(fact_library):
    question = "How fast did the glacier front retreat, and how was the retreat measured?"
    both = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]},
                                  {"text": "The retreat was measured by drone photogrammetry.", "sources": [1]}]})
    chat = ScriptedChat([both])
    answer_with(fact_library, chat, question, {"first_claim_tokens": 1, "part_turns": 2})
    assert all("Your claims so far" not in m["content"] for c in chat.calls for m in c["messages"])
    one = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    chat = ScriptedChat([one])
    answer_with(fact_library, chat, question, {"first_claim_tokens": 1})  # off by default for the starter model
    assert all("Your claims so far" not in m["content"] for c in chat.calls for m in c["messages"])


def test_an_open_part_with_the_real_model(fact_library):
    events: list = []
    result = fact_library.funnel(Task(sink=events.append), overrides={"first_claim_tokens": 1, "key_sentences": 2, "part_turns": 2}).run(
        "When do kestrels depart from alpine valleys in autumn, and how were the birds tracked?")
    assert_cited_in_place(result)
    # The part gets a turn exactly when the claims written before it leave it open.
    tracked = "how were the birds tracked"
    at = next((i for i, e in enumerate(events) if isinstance(e, Stage) and tracked in e.detail), None)
    before = [e.claim for e in events[: at if at is not None else len(events)] if isinstance(e, ClaimWritten) and not e.claim.quoted]
    assert (at is not None) == bool(open_parts(result.query, before)), (before, result.messages)


def test_a_part_claim_that_restates_the_first_is_dropped(fact_library):
    question = "How fast did the glacier front retreat, and how was the retreat measured?"
    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    again = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    result, _ = answer_with(fact_library, ScriptedChat([first, again]), question, {"first_claim_tokens": 1, "part_turns": 2})
    assert [c.text for c in result.claims if not c.quoted] == ["The glacier front retreated 38 metres per year."]
    assert not any("no passage" in m for m in result.messages)  # it cited a passage: not a part nothing answers


def test_a_deep_plan_prices_the_turns_of_the_questions_further_parts(fact_library):
    from app.core.research.deep.deep import DeepResearch
    from app.core.research.deep.deep_budget import CALL_OVERHEAD_S, CLAIM_TOKENS, PART_OPEN_SHARE, PART_PROMPT_TOKENS
    from app.core.settings import DeepParams

    def plan(question_parts: int, **overrides) -> DeepResearch:
        funnel = fact_library.funnel(overrides={"check_support": False, **overrides})
        chat = ScriptedChat([])
        funnel.chat_model = lambda: chat
        deep = DeepResearch(funnel, DeepParams(), deep=True, time_minutes=2.0)
        deep._chat = chat
        deep.meter.record(400, 4, 6.5)
        deep.meter.record(40, 40, 2.0)
        deep.further_parts = question_parts - 1
        return deep

    one, two, three = plan(1, part_turns=2), plan(2, part_turns=2), plan(3, part_turns=1)
    turn = two.meter.predict_s(250 + PART_PROMPT_TOKENS, CLAIM_TOKENS) + CALL_OVERHEAD_S  # read, write, one call
    assert two.answer_cost_s() - one.answer_cost_s() == pytest.approx(PART_OPEN_SHARE * turn, rel=0.05)
    assert three.answer_cost_s() == pytest.approx(two.answer_cost_s(), rel=0.01)  # one turn at most
    assert plan(2).answer_cost_s() == pytest.approx(one.answer_cost_s())  # off by default: nothing to price


def test_an_open_part_gets_the_first_quote_scored_by_that_part():
    from app.core.research.answer.key_sentences import key_sentences

    evidence = [_passage(1, 3, "The glacier front retreated 38 metres per year between 2015 and 2021."),
                _passage(2, 1, "Glacier fronts in the Alps retreated faster after 2015 than before."),
                _passage(3, 2, "We flew a quadcopter at 120 metres altitude and processed images with structure from motion.")]
    claims = [Claim("The glacier front retreated 38 metres per year.", [1])]
    prior = lambda texts: [1.0 if "quadcopter" in t else 0.1 for t in texts]  # noqa: E731 - "how was the retreat measured"
    assert [q.sources for q in key_sentences(claims, evidence, 1, prior=prior)] == [[3]]
    assert [q.sources for q in key_sentences(claims, evidence, 2, skip=frozenset({3}))] == [[2]]
    assert key_sentences(claims, evidence, 0, prior=prior) == []  # every quote went to the parts


def test_open_parts_are_quoted_first_in_an_answer(fact_library):
    question = "How fast did the glacier front retreat, and how was the retreat measured?"
    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    result, _ = answer_with(fact_library, ScriptedChat([first]), question, {"first_claim_tokens": 1, "part_quotes": 2})
    quotes = [c for c in result.claims if c.quoted]
    assert quotes and "Drone photogrammetry measures glacier retreat" in quotes[0].text
    assert len({n for q in quotes for n in q.sources}) == len(quotes)  # a passage quoted for a part is not quoted again


def test_part_quotes_with_the_real_model_rate_each_open_part(fact_library):
    events: list = []
    result = fact_library.funnel(Task(sink=events.append), overrides={"first_claim_tokens": 1, "part_quotes": 2}).run(
        "When do kestrels depart from alpine valleys in autumn, and how were the birds tracked?")
    assert result.claims, result.messages
    ratings = sum(isinstance(e, Stage) and "choosing the sentences" in e.detail for e in events)
    first_turn = [e.claim for e in events if isinstance(e, ClaimWritten) and not e.claim.quoted]
    # llama.cpp gives probabilities: one rating for each open part, one for the whole question
    assert ratings == 1 + len(open_parts(result.query, first_turn)), (first_turn, ratings)
    for c in result.citations:
        if result.claims[c.claim].quoted:
            assert c.support == "supported" and c.quote in next(e.text for e in result.evidence if e.number == c.evidence_number)
