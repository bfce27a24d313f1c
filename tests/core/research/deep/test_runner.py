"""Deep research: loop control with a scripted model (stop rules, caps, reserve, retries,
malformed JSON, cancel); the budget's promise on a fake clock with a model whose calls cost
time by the token (too small a budget answers as standard mode does; a larger one is used
to ≥ 80 % and ends with a cited, checked answer; an answer cut at the deadline keeps its
complete claims); and one end-to-end run with the real tiny GGUF under --time 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from app.core import events
from app.core.events import Task
from app.core.records import ResearchResult
from app.core.research.deep.runner import RETRY_EXHAUSTED, Budget, DeepCancelled, DeepResearch, parse_time
from app.core.settings import DeepParams
from tests.support.chat import ScriptedChat, TimedChat
from tests.support.clock import FakeClock
from tests.support.paths import REPO


def deep_chat(decisions=(), cls: type[ScriptedChat] = ScriptedChat, **options) -> ScriptedChat:
    """The scripted model as these tests use it (tests/support/chat.py): loop decisions from the
    script, every passage scored 0.8, and a model that cannot keep to the claims' shape, so the
    answer is its free text ("Kestrels leave in mid September.", in one piece); it leaves a
    cancel for the loop to notice."""
    return cls(decisions=list(decisions), claims=False, answer="Kestrels leave in mid September.", stream="whole",
               hears_cancel=False, context_length=2048, name="", **options)


def deep_for(desk, chat, *, deep=False, minutes=5.0, clock=time.monotonic, task=None, params=None, **overrides):
    funnel = desk.funnel(overrides=overrides)
    funnel.chat_model = lambda: chat
    return DeepResearch(funnel, params or DeepParams(), task=task, deep=deep, time_minutes=minutes, clock=clock)


def recording_task():
    """A task whose events are kept, in order, for the test to read."""
    seen: list = []
    return Task(sink=seen.append), seen


QUESTION = "When do kestrels depart from alpine valleys in autumn?"


def test_budget_reserve_and_time_parsing():
    assert Budget(60.0).reserve_s == pytest.approx(18.0)  # the design's first guess, before any plan
    assert Budget(600.0).reserve_s == 90.0
    assert Budget(None).remaining() == float("inf")
    planned = Budget(60.0, answer_s=lambda: 41.0)  # the planner: what the answer takes on this machine
    assert planned.reserve_s == 41.0 and planned.research_remaining() == pytest.approx(19.0, abs=0.5)
    assert Budget(600.0, answer_s=lambda: 41.0).reserve_s == 41.0, "a fast answer leaves the rest to research"
    assert parse_time(None) == 5.0 and parse_time("unlimited") is None and parse_time("2") == 2.0
    with pytest.raises(ValueError):
        parse_time("-1")


def test_speed_meter_learns_the_cost_of_writing_from_mixed_calls():
    from app.core.research.deep.runner import SpeedMeter

    meter = SpeedMeter()
    assert meter.gen_cost == SpeedMeter.DEFAULT_GEN_COST  # nothing measured yet
    # A machine that reads 200 tokens/s and writes 20 tokens/s: writing costs 10 reads.
    for prompt, output in ((400, 4), (300, 120), (900, 60), (200, 200)):
        meter.record(prompt, output, prompt / 200 + output / 20)
    assert abs(meter.gen_cost - 10.0) < 0.01
    assert abs(meter.predict_s(1000, 100) - (1000 / 200 + 100 / 20)) < 0.05
    assert meter.describe()["output_tokens_per_s"] == 20.0

    same_mix = SpeedMeter()  # identical calls cannot tell reading from writing apart
    for _ in range(3):
        same_mix.record(100, 10, 1.0)
    assert same_mix.gen_cost == SpeedMeter.DEFAULT_GEN_COST


def test_speed_meter_expects_the_reply_lengths_it_has_seen():
    from app.core.research.deep.runner import SpeedMeter

    meter = SpeedMeter()
    assert meter.expected_output("decision", 220) == 220  # unknown: the limit
    meter.record(500, 55, 10.0, kind="decision", max_tokens=220)
    assert meter.expected_output("decision", 220) == 69  # 55 × 1.25
    assert meter.expected_output("score", 360) == 360, "each kind of call learns its own length"
    meter.record(500, 40, 9.0, kind="decision", max_tokens=220)
    assert meter.expected_output("decision", 220) == 69, "the longest reply seen sets the expectation"
    meter.record(500, 210, 30.0, kind="decision", max_tokens=220)
    assert meter.expected_output("decision", 220) == 220, "never more than the limit"


def test_no_gaps_stops_after_first_decision(fact_library):
    # Without a budget the design's stop rule stands (a budget is used to its deadline: below).
    run = deep_for(fact_library, deep_chat([{"gaps": []}]), minutes=None)
    result = run.run(QUESTION)
    assert len(result.extra["loop_decisions"]) == 1
    assert result.extra["methodology"]["stop_reason"] == "no gaps left"
    assert "## Methodology" in result.answer and result.extra["limits_hit"] == []


def test_iteration_cap_is_enforced_whatever_the_model_says(fact_library):
    always = [{"gaps": [f"gap {i}"], "nextSearchTopic": f"kestrel logger weight {i}"} for i in range(20)]
    standard = deep_for(fact_library, deep_chat(always)).run(QUESTION)
    assert len(standard.extra["loop_decisions"]) == 3 and "iteration cap" in standard.extra["limits_hit"]
    deep = deep_for(fact_library, deep_chat(always), deep=True).run(QUESTION)
    assert len(deep.extra["loop_decisions"]) == 7 and "iteration cap" in deep.extra["limits_hit"]


def test_failed_subquestion_is_retried_three_times_then_exhausted(fact_library):
    same = [{"gaps": ["volcanic ash composition"], "nextSearchTopic": "volcanic ash composition"}] * 10
    # A cutoff nothing reaches: every search for the gap comes back empty.
    run = deep_for(fact_library, deep_chat(same), deep=True, cutoff_evidence=0.97)
    result = run.run(QUESTION)
    tracking = {t["topic"]: t for t in result.extra["retry_tracking"]}
    assert tracking["volcanic ash composition"]["attempts"] == 3
    assert tracking["volcanic ash composition"]["status"] == RETRY_EXHAUSTED
    assert "all gaps exhausted" in result.extra["limits_hit"]
    assert RETRY_EXHAUSTED in result.answer


def test_malformed_decisions_retry_once_then_count_as_no_gaps(fact_library):
    chat = deep_chat(["this is not json", "{still not"])
    result = deep_for(fact_library, chat, minutes=None).run(QUESTION)
    (decision,) = result.extra["loop_decisions"]
    assert decision["malformed"] is True and decision["gaps"] == []
    assert result.answer.strip()


def _ids(evidence):
    return {(e.paper_id, e.page, e.char_start) for e in evidence}


def test_budget_too_small_for_a_round_answers_exactly_as_standard_mode(fact_library):
    # A model that reads 100 and writes 10 tokens/s: a standard answer (its first turn and key
    # sentences) takes ~25 s, a round ~50 s, so half a minute leaves no room for a round.
    clock = FakeClock()
    standard_funnel = fact_library.funnel()
    standard_funnel.chat_model = lambda: TimedChat(FakeClock())
    standard = standard_funnel.run(QUESTION)
    assert standard.claims and standard.citations

    chat = TimedChat(clock)
    run = deep_for(fact_library, chat, deep=True, minutes=0.5, clock=clock)
    result = run.run(QUESTION)
    assert run.answered_as_standard and not result.extra["loop_decisions"]
    assert "score" not in chat.kinds and "decide" not in chat.kinds  # no research round was started
    assert result.answer.split("\n\n## Methodology")[0] == standard.answer
    assert [(c.paper_id, c.page, c.support) for c in result.citations] == [(c.paper_id, c.page, c.support) for c in standard.citations]
    assert _ids(result.evidence) == _ids(standard.evidence)
    assert "time (too short for a research round)" in result.extra["limits_hit"]
    assert "answered as standard mode does" in result.extra["methodology"]["stop_reason"]
    assert "too short for a research round" in result.answer  # the report says so too


@pytest.mark.slow
def test_bigger_budget_is_used_to_its_deadline_and_ends_with_a_checked_cited_answer(wide_library):
    clock = FakeClock()
    # A slow machine (reads 50, writes 5 tokens/s): reading the library takes longer than the budget.
    # The model sees no gaps at once and judges citations unsupported: the search widens instead
    # of stopping, and the claims no passage supports are withdrawn and said to be (with
    # withdrawing off, test below, they stay marked). The library's 40 short pages all fit stage 2's
    # token budget, so evidence is counted in passages here (evidence_tokens=0): standard mode reads
    # 15 of them and leaves the rest for the rounds to find.
    chat = TimedChat(clock, read=50.0, write=5.0, verdicts=("supported", "supported", "unsupported", "unsupported"))
    run = deep_for(wide_library, chat, deep=True, minutes=5.0, clock=clock, cutoff_evidence=0.0, cutoff_summaries=0.0,
                   evidence_tokens=0)
    result = run.run(QUESTION)
    used = run.budget.elapsed()
    assert 0.8 * 300 <= used <= 1.1 * 300, used
    assert run.widened and not run.answered_as_standard
    assert "decide" in chat.kinds and "score" in chat.kinds
    assert _ids(run.standard_evidence) <= _ids(run.pool), "standard mode's evidence is always in the pool"
    fresh = ResearchResult(query=QUESTION)
    run._fill(fresh)  # the evidence the answer is written from, before focusing
    lead = [(e.paper_id, e.page, e.char_start) for e in fresh.evidence[: len(run.standard_evidence)]]
    assert lead == [(e.paper_id, e.page, e.char_start) for e in run.standard_evidence], \
        "the answer reads standard mode's passages first, in the funnel's order"
    assert len(fresh.evidence) > len(run.standard_evidence), "and what research added after them"
    assert result.claims and all(c.sources for c in result.claims)
    assert result.citations and all(c.support for c in result.citations), "every citation was checked"
    assert result.withdrawn and all(text not in result.answer.split("## Methodology")[0] for text in result.withdrawn)
    assert "withdrawn, no cited passage supporting" in result.answer
    assert "## Methodology" in result.answer and "the search widened" in result.answer


@pytest.mark.slow
def test_unsupported_citations_stay_marked_in_the_report_where_withdrawing_is_off(wide_library):
    clock = FakeClock()
    chat = TimedChat(clock, read=50.0, write=5.0, verdicts=("supported", "supported", "unsupported", "unsupported"))
    run = deep_for(wide_library, chat, deep=True, minutes=5.0, clock=clock, cutoff_evidence=0.0, cutoff_summaries=0.0,
                   withdraw_unsupported=False)
    result = run.run(QUESTION)
    assert not result.withdrawn and any(c.status == "unsupported" for c in result.citations)
    assert "not supported by the passage they cite" in result.answer


@pytest.mark.slow
def test_answer_cut_at_the_deadline_keeps_its_complete_claims_and_checks_them(wide_library):
    clock = FakeClock()
    # The answer writes 8x slower than the model measured (a busy machine): the deadline cuts it.
    chat = TimedChat(clock, read=50.0, write=5.0, claims_slowdown=8.0,
                     decisions=[{"gaps": ["g"], "nextSearchTopic": f"kestrel topic {i}"} for i in range(9)])
    run = deep_for(wide_library, chat, deep=True, minutes=5.0, clock=clock, cutoff_evidence=0.0, cutoff_summaries=0.0)
    result = run.run(QUESTION)
    assert "time (answer cut at the deadline)" in result.extra["limits_hit"]
    assert 1 <= len(result.claims) < len(TimedChat.CLAIMS)
    assert all(c.sources for c in result.claims), "complete claims carry their citations"
    assert result.citations and all(c.support == "supported" for c in result.citations), "and they were checked"
    assert not any(m.startswith("Stopped:") for m in result.messages), "a deadline is no user's stop"
    # Writing 8x slower than measured, one claim takes ~80 s: the cut comes at the first claim
    # that ends past the deadline, within the 110 % bench/deep.py holds runs to.
    assert run.budget.elapsed() <= 1.1 * 300, run.budget.elapsed()
    assert "cut at the time limit after" in result.answer


def test_cancel_keeps_gathered_evidence(fact_library):
    task, seen = recording_task()
    chat = deep_chat([{"gaps": ["x"], "nextSearchTopic": "logger weight"}] * 5)
    run = deep_for(fact_library, chat, deep=True, task=task)
    original = run.decide

    def decide_then_cancel(query, iteration):
        task.token.cancel()  # the user presses Cancel while the model decides
        return original(query, iteration)

    run.decide = decide_then_cancel
    with pytest.raises(DeepCancelled) as info:
        run.run(QUESTION)
    partial = info.value.partial
    assert partial.evidence and not partial.answer
    assert chat.decisions, "no round ran after the cancel"
    # The UI offers exactly this: a new run, with a fresh task, takes over what was gathered.
    report = deep_for(fact_library, chat, deep=True, minutes=None)
    report.resume(run)
    result = report.synthesize(partial)
    assert result.answer.strip() and "cancelled by the user" in result.extra["limits_hit"]
    assert result.extra["methodology"]["rounds"] == len(run.decisions)


@pytest.mark.slow
def test_deep_end_to_end_with_real_tiny_model_within_budget(fact_library, cli_env):
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "--library", str(fact_library.library.root), "research", "--deep", "--time", "1",
         "--json", QUESTION],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, **cli_env}, timeout=300)
    wall = time.monotonic() - started
    assert out.returncode == 0, out.stderr[-2000:]
    record = json.loads(out.stdout)
    for key in ("loop_decisions", "retry_tracking", "limits_hit", "methodology", "answer", "citations", "references"):
        assert key in record, key
    assert "## Methodology" in record["answer"]
    assert record["methodology"]["queries"] and record["evidence"]
    # Whether the plan ran rounds or answered as standard mode does (a loaded machine), the answer
    # is claim-bound, drawn from at least standard mode's evidence, and every citation was checked.
    assert record["methodology"]["standard_evidence"] > 0
    assert record["claims"] and all(c["support"] for v in record["claims"] for c in v["citations"])
    print(f"deep --time 1 wall {wall:.1f} s; limits {record['limits_hit']}; rounds {record['methodology']['rounds']}; "
          f"plan {record['methodology']['plan']}")
    assert wall <= 60 + 15, f"deep --time 1 took {wall:.1f} s"


class ToolCallingChat(ScriptedChat):
    """Stands in for LM Studio's act(): calls the search tool with scripted queries, in order."""

    supports_tools = True

    def __init__(self, queries, **kw):
        super().__init__(**kw)
        self.queries = list(queries)
        self.tool_replies: list[str] = []

    def act(self, messages, tools, *, max_rounds, max_tokens=400, cancelled=None):
        (tool,) = tools
        assert tool.name == "search_evidence" and "query" in tool.parameters
        # A model may ask for several calls in one round, so the rounds alone do not cap the searches.
        for query in self.queries:
            self.tool_replies.append(tool.run(query=query))
        return ["The evidence covers departure timing; nothing on ash."]


def test_tool_calling_loop_enforces_cap_and_retries_inside_the_tool(fact_library):
    queries = ["kestrel departure dates"] + ["volcanic ash composition"] * 4 + [f"extra {i}" for i in range(10)]
    chat = deep_chat(cls=ToolCallingChat, queries=queries)
    run = deep_for(fact_library, chat, deep=True, cutoff_evidence=0.5)
    result = run.run(QUESTION)
    decisions = result.extra["loop_decisions"]
    assert decisions and all(d["via"] == "tool call" for d in decisions)
    assert len(decisions) <= 7  # the deep cap, whatever the model asks for
    tracking = {t["topic"]: t for t in result.extra["retry_tracking"]}
    assert tracking["volcanic ash composition"]["attempts"] == 3
    assert tracking["volcanic ash composition"]["status"] == RETRY_EXHAUSTED
    assert any("already searched 3 times" in r for r in chat.tool_replies)  # the 4th try runs no search
    assert any("limit is reached" in r for r in chat.tool_replies)
    assert "iteration cap" in result.extra["limits_hit"]
    assert decisions[-1]["summary"].startswith("The evidence covers")
    assert "## Methodology" in result.answer


def test_lmstudio_sdk_accepts_our_tool_definition():
    """The LM Studio SDK's own parser takes the tool as LMStudioChat.act builds it."""
    import lmstudio as lms
    from lmstudio.json_api import ChatResponseEndpoint

    from app.core.models.base import Tool

    tool = Tool("search_evidence", "Search the papers.", {"query": "a short query"}, lambda query: f"found {query}")
    definition = lms.ToolFunctionDef(name=tool.name, implementation=tool.run, parameters={k: str for k in tool.parameters},
                                     description=tool.description)
    _, llm_tools = ChatResponseEndpoint.parse_tools([definition])
    assert list(llm_tools) == ["search_evidence"]
    assert llm_tools["search_evidence"][1]("kestrels") == "found kestrels"  # the SDK calls our implementation


def test_rounds_are_reported_as_typed_events_and_fold_into_the_run_log(fact_library):
    from app.core.research.deep.progress import DeepRunLog, RoundRecord

    task, seen = recording_task()
    same = [{"gaps": ["volcanic ash composition"], "nextSearchTopic": "volcanic ash composition", "summary": "Dates covered."}] * 10
    run = deep_for(fact_library, deep_chat(same), deep=True, minutes=None, task=task, cutoff_evidence=0.97)
    result = run.run(QUESTION)

    rounds = [e for e in seen if isinstance(e, events.Round)]
    assert rounds and all(isinstance(e.record, RoundRecord) and e.index == e.record.index for e in rounds)
    assert rounds[0].record.kind == "scope" and rounds[0].record.topic == QUESTION
    assert all(e.record.clock is not None and e.record.clock.total_s is None for e in rounds)  # unlimited
    last = {}
    for e in rounds:  # the newest snapshot of each round
        last[e.index] = e.record
    assert sorted(last) == [0, 1, 2, 3]
    assert all(r.state == "done" for r in last.values()), "every round ends"
    assert last[0].found > 0 and last[0].review == "Dates covered." and last[0].gaps_left == ("volcanic ash composition",)
    assert [last[i].found for i in (1, 2, 3)] == [0, 0, 0]
    assert not last[2].exhausted and last[3].exhausted, "the third empty attempt gives the gap up"
    assert any(isinstance(e, events.EvidenceFound) and e.evidence for e in seen)
    stages = [e.name for e in seen if isinstance(e, events.Stage)]
    assert stages.index("synthesis") < stages.index("check") and stages[-1] == "check"

    log = DeepRunLog()
    log.begin(QUESTION, None, cap=7)
    for e in seen:
        log.on_event(e)
    assert [r.index for r in log.rounds] == [0, 1, 2, 3] and log.phase == "synthesis"
    assert log.passages() == last[0].found and log.report_line == "Checking the citations…"
    log.finish(result)
    assert log.phase == "finished" and "all gaps exhausted" in log.report_line


@pytest.mark.slow
def test_the_plan_prices_the_answer_as_the_backend_runs_it(fact_library, tiny_models):
    """llama.cpp keeps the answer prompt's beginning, read when the model loads, and checks a pair
    by its probability of "yes": the plan counts neither that beginning nor written verdicts, but
    the passage around each pair's quote. A backend without either pays both. (Counting them priced a 2-minute run's answer at 36 s
    against the 13–21 s it took, and left no time for a research round: bench/deep.py.)"""
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.research.deep.budget import (
        CALL_OVERHEAD_S,
        JUDGE_PROMPT_TOKENS,
        JUDGE_TOKENS_PER_PAIR,
        PROBABILITY_CALL_S,
        PROBABILITY_JUDGE_TOKENS_PER_PAIR,
        PROMPT_OVERHEAD_TOKENS,
        VERDICT_TOKENS,
    )
    from app.core.research.check.support import JUDGE_CHOICES, judge_beginning, pair_messages
    from app.core.research.answer.prompt import answer_beginning, first_turn
    from app.core.settings import ModelConfig

    real = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048))
    try:  # what the real backend declares is what it does
        assert real.keeps_prefixes and real.gives_probabilities
        assert real.prefill(judge_beginning()) > 0
        probs = real.choice_probabilities(pair_messages("Kestrels leave in September.", "Kestrels depart in mid September."),
                                          JUDGE_CHOICES)
        assert probs is not None and sum(probs.values()) == pytest.approx(1.0)
    finally:
        real.close()

    class Plain(ScriptedChat):
        keeps_prefixes = gives_probabilities = False

    class Keeping(ScriptedChat):
        keeps_prefixes = gives_probabilities = True

    class Forgetting(Keeping):
        keeps_prefixes = False

    plans = {}
    for kind in (Plain, Keeping, Forgetting):
        deep = deep_for(fact_library, deep_chat(cls=kind), deep=True, minutes=2.0)
        deep._chat = deep.funnel.chat_model()
        for prompt, output, seconds in ((400, 4, 6.5), (40, 40, 2.0)):  # reads ~60 tokens/s, writes ~22
            deep.meter.record(prompt, output, seconds)
        plans[kind] = deep
    plain, keeping = plans[Plain], plans[Keeping]
    meter = keeping.meter
    # The probability judge reads each pair within its passage and writes nothing; the word judge
    # reads the instructions and each pair's quote, and writes a verdict for each.
    assert keeping.check_cost_s(3) == pytest.approx(3 * PROBABILITY_CALL_S + meter.predict_s(3 * PROBABILITY_JUDGE_TOKENS_PER_PAIR, 0))
    assert plain.check_cost_s(3) == pytest.approx(
        CALL_OVERHEAD_S + meter.predict_s(JUDGE_PROMPT_TOKENS + 3 * JUDGE_TOKENS_PER_PAIR, 10 + 3 * VERDICT_TOKENS))
    kept = keeping._chat.count_message_tokens(answer_beginning(*first_turn(keeping.funnel.params)))
    assert 0 < kept < PROMPT_OVERHEAD_TOKENS
    saved = plans[Forgetting].answer_cost_s() - keeping.answer_cost_s()
    assert saved == pytest.approx(meter.predict_s(kept, 0)), "the kept beginning is not read again"
    # Without probabilities there is no rating of the quotes to price, but a words judge.
    assert plain.answer_cost_s() > plain.check_cost_s(3) > 0
