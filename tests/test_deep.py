"""Deep research: loop control with a scripted model (stop rules, caps, reserve, retries,
malformed JSON, cancel) and one end-to-end run with the real tiny GGUF under --time 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from app.core.models.base import ChatModel
from app.core.research.deep import RETRY_EXHAUSTED, Budget, DeepCancelled, DeepResearch, parse_time
from app.core.settings import DeepParams
from tests.conftest import REPO


class ScriptedChat(ChatModel):
    """Answers loop decisions from a script, scores every passage 0.8, writes a cited answer."""

    context_length = 2048

    def __init__(self, decisions, clock=None, seconds_per_call=0.0, answer=None):
        self.decisions = list(decisions)
        self.clock = clock
        self.seconds_per_call = seconds_per_call
        self.answer = answer
        self.calls = 0

    def chat(self, messages, *, json_schema=None, on_token=None, cancelled=None, **kw):
        self.calls += 1
        if self.clock is not None:
            self.clock.advance(self.seconds_per_call)
        if json_schema is not None and "gaps" in json_schema["properties"]:
            d = self.decisions.pop(0) if self.decisions else {"gaps": []}
            return d if isinstance(d, str) else json.dumps(
                {"iteration": 0, "summary": "s", "shouldContinue": True, "nextSearchTopic": "", "timeRemainingMinutes": 1.0, **d})
        if json_schema is not None:
            n = messages[-1]["content"].count("[Source ")
            return json.dumps({"items": [{"source": i, "summary": "relevant", "score": 0.8} for i in range(1, n + 1)]})
        text = self.answer or "Kestrels leave in mid September."
        if on_token:
            on_token(text)
        return text


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t

    def advance(self, s):
        self.t += s


def deep_for(desk, chat, *, deep=False, minutes=5.0, clock=time.monotonic, cancelled=None, params=None, **overrides):
    funnel = desk.funnel(overrides=overrides)
    funnel.chat_model = lambda: chat
    return DeepResearch(funnel, params or DeepParams(), deep=deep, time_minutes=minutes, clock=clock, cancelled=cancelled)


QUESTION = "When do kestrels depart from alpine valleys in autumn?"


def test_budget_reserve_and_time_parsing():
    assert Budget(60.0).reserve_s == pytest.approx(18.0)
    assert Budget(600.0).reserve_s == 90.0
    assert Budget(None).remaining() == float("inf")
    assert parse_time(None) == 5.0 and parse_time("unlimited") is None and parse_time("2") == 2.0
    with pytest.raises(ValueError):
        parse_time("-1")


def test_speed_meter_learns_the_cost_of_writing_from_mixed_calls():
    from app.core.research.deep import SpeedMeter

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
    from app.core.research.deep import SpeedMeter

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
    run = deep_for(fact_library, ScriptedChat([{"gaps": []}]))
    result = run.run(QUESTION)
    assert len(result.extra["loop_decisions"]) == 1
    assert result.extra["methodology"]["stop_reason"] == "no gaps left"
    assert "## Methodology" in result.answer and result.extra["limits_hit"] == []


def test_iteration_cap_is_enforced_whatever_the_model_says(fact_library):
    always = [{"gaps": [f"gap {i}"], "nextSearchTopic": f"kestrel logger weight {i}"} for i in range(20)]
    standard = deep_for(fact_library, ScriptedChat(always)).run(QUESTION)
    assert len(standard.extra["loop_decisions"]) == 3 and "iteration cap" in standard.extra["limits_hit"]
    deep = deep_for(fact_library, ScriptedChat(always), deep=True).run(QUESTION)
    assert len(deep.extra["loop_decisions"]) == 7 and "iteration cap" in deep.extra["limits_hit"]


def test_failed_subquestion_is_retried_three_times_then_exhausted(fact_library):
    same = [{"gaps": ["volcanic ash composition"], "nextSearchTopic": "volcanic ash composition"}] * 10
    # A cutoff nothing reaches: every search for the gap comes back empty.
    run = deep_for(fact_library, ScriptedChat(same), deep=True, cutoff_evidence=0.97)
    result = run.run(QUESTION)
    tracking = {t["topic"]: t for t in result.extra["retry_tracking"]}
    assert tracking["volcanic ash composition"]["attempts"] == 3
    assert tracking["volcanic ash composition"]["status"] == RETRY_EXHAUSTED
    assert "all gaps exhausted" in result.extra["limits_hit"]
    assert RETRY_EXHAUSTED in result.answer


def test_malformed_decisions_retry_once_then_count_as_no_gaps(fact_library):
    chat = ScriptedChat(["this is not json", "{still not"])
    result = deep_for(fact_library, chat).run(QUESTION)
    (decision,) = result.extra["loop_decisions"]
    assert decision["malformed"] is True and decision["gaps"] == []
    assert result.answer.strip()


def test_time_budget_stops_research_and_keeps_the_synthesis_reserve(fact_library):
    clock = FakeClock()
    always = [{"gaps": ["more"], "nextSearchTopic": f"topic {i}"} for i in range(20)]
    chat = ScriptedChat(always, clock=clock, seconds_per_call=15.0)
    run = deep_for(fact_library, chat, deep=True, minutes=1.0, clock=clock)
    result = run.run(QUESTION)
    assert "time" in result.extra["limits_hit"]
    # Research stopped once less than the 18 s reserve was left; synthesis then ran.
    synth_start = run.budget.total_s - run.budget.reserve_s
    assert len(result.extra["loop_decisions"]) < 7
    assert result.answer.strip() and result.extra["methodology"]["time_used_s"] >= synth_start - 15


def test_cancel_keeps_gathered_evidence(fact_library):
    flag = {"stop": False}
    chat = ScriptedChat([{"gaps": ["x"], "nextSearchTopic": "logger weight"}] * 5)
    run = deep_for(fact_library, chat, deep=True, cancelled=lambda: flag["stop"])
    original = run.decide

    def decide_then_cancel(query, iteration):
        flag["stop"] = True
        return original(query, iteration)

    run.decide = decide_then_cancel
    with pytest.raises(DeepCancelled) as info:
        run.run(QUESTION)
    partial = info.value.partial
    assert partial.evidence and not partial.answer
    resumed = run.synthesize  # the UI offers exactly this
    flag["stop"] = False
    assert resumed(partial).answer.strip()


def test_deep_end_to_end_with_real_tiny_model_within_budget(fact_library, tmp_path, tiny_models):
    from app.core.settings import ModelConfig, Settings

    config = tmp_path / "cfg"
    Settings(
        chat=ModelConfig(path=str(tiny_models["chat"]), context_length=2048),
        embedding=ModelConfig(path=str(tiny_models["embedding"]), context_length=512),
    ).save(config / "settings.json")
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "--library", str(fact_library.library.root), "research", "--deep", "--time", "1",
         "--json", QUESTION],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "RESEARCH_DESK_CONFIG_DIR": str(config)}, timeout=300)
    wall = time.monotonic() - started
    assert out.returncode == 0, out.stderr[-2000:]
    record = json.loads(out.stdout)
    for key in ("loop_decisions", "retry_tracking", "limits_hit", "methodology", "answer", "citations", "references"):
        assert key in record, key
    assert "## Methodology" in record["answer"]
    assert record["methodology"]["queries"] and record["evidence"]
    print(f"deep --time 1 wall {wall:.1f} s; limits {record['limits_hit']}; rounds {record['methodology']['rounds']}")
    assert wall <= 60 + 15, f"deep --time 1 took {wall:.1f} s"


class ToolCallingChat(ScriptedChat):
    """Stands in for LM Studio's act(): calls the search tool with scripted queries, in order."""

    supports_tools = True

    def __init__(self, queries, **kw):
        super().__init__([], **kw)
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
    chat = ToolCallingChat(queries)
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
    assert llm_tools is not None
