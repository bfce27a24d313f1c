"""Deep research: an agentic loop under a time budget (DESIGN.md, "Deep research").

Round 0 scopes the library and scores evidence for the question. Each later
round asks the model for a loop decision (JSON held to a schema: gaps, next
search topic, …) and runs one `search_evidence` for the chosen gap. The code,
not the model, enforces the stop rules: no gaps left, the time budget (minus
the synthesis reserve), the iteration cap, every open gap exhausted after 3
failed attempts.

The budget keeps its promise: a deep run never returns less than a standard
answer. Standard mode's own evidence (stage 2) is always in the pool, and the
synthesis reserve is the predicted cost of a standard answer on this machine
(from the model's measured speed: reading the focused evidence, writing the
claims, the support check). A budget too small for one research round plus that
reserve skips the loop and answers exactly as standard mode does, and says so.
A larger budget is used to its research deadline: when the model sees no gaps
while time is left, the search widens (the question across the whole library,
then within each shortlisted paper) instead of stopping early. An answer cut at
the deadline keeps its complete claims, which carry their citations, and they
are checked as any answer is.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from ..callbacks import IsCancelled
from ..errors import Cancelled, ModelError, ModelTimeout, ResearchDeskError
from ..library import CONTENT_CHUNKS
from ..models.base import ChatModel, Tool
from ..paths import load_prompt
from ..records import Evidence, ResearchResult, Support
from ..wording import plural
from ..settings import DeepParams
from . import retrieval
from .funnel import Funnel, is_bibliography

RETRY_EXHAUSTED = "RETRY_EXHAUSTED"
SCORE_BATCH = 4  # passages per scoring call: fits a 2k-token context with room to answer
SCORE_PASSAGE_CHARS = 1200  # each passage is clipped to this in a scoring prompt
SCORE_TOKENS_PER_PASSAGE = 90  # a scoring reply's token limit per passage (summary and score)

# What a standard answer reads and writes besides the evidence (synthesis.py): the prompt's
# system text and instructions, the second turn of a two-phase answer, and the support
# check's list of (claim, quote) pairs with its verdicts.
PROMPT_OVERHEAD_TOKENS = 320
SECOND_TURN_TOKENS = 120
JUDGE_PROMPT_TOKENS = 130  # the check's instructions
JUDGE_TOKENS_PER_PAIR = 110  # a claim and its quote (a sentence or two) in the check's prompt
VERDICT_TOKENS = 6  # one verdict in the check's JSON list ("partial", …)
CLAIM_TOKENS = 50  # one claim as the model writes it: a sentence, its sources, the JSON around them
SOURCES_PER_CLAIM = 1.3  # (claim, cited passage) pairs per claim: what the check reads
CALL_OVERHEAD_S = 1.0  # per model call: the chat template, the JSON schema's grammar
MIN_RESERVE_S = 5.0
MIN_ANSWER_TOKENS = 96  # the smallest answer a deadline shrinks to: one or two claims
MIN_EVIDENCE_TOKENS = 300
# Speed assumed before any call is measured (prompt-token equivalents per second): slow on
# purpose, so an unmeasured machine gets the larger reserve, never a cut-off answer.
CONSERVATIVE_RATE = 50.0

LOOP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "iteration": {"type": "integer"},
        "summary": {"type": "string"},
        "gaps": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "shouldContinue": {"type": "boolean"},
        "nextSearchTopic": {"type": "string"},
        "timeRemainingMinutes": {"type": "number"},
    },
    "required": ["iteration", "summary", "gaps", "shouldContinue", "nextSearchTopic", "timeRemainingMinutes"],
}

SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "integer"},
                    "summary": {"type": "string"},
                    "score": {"type": "number"},
                },
                "required": ["source", "summary", "score"],
            },
        }
    },
    "required": ["items"],
}


# -- time ------------------------------------------------------------------------
@dataclass
class Budget:
    """The run's clock: total budget, synthesis reserve, and the research deadline.

    The reserve is what the final answer needs on this machine (`answer_s`: the
    planner's prediction of a standard answer's seconds, from the model's measured
    speed); research stops when the time left drops below it. Without a planner it
    is the design's first guess, min(1.5 min, 0.3 × budget): a fixed share either
    starved the answer on a slow machine (18 s of a 1-minute budget, where the
    starter model needs ~60 s) or left a quarter of the budget unused on a fast one.
    """

    total_s: float | None  # None: unlimited (the iteration cap still applies)
    clock: Callable[[], float] = time.monotonic
    start: float = field(default=0.0)
    answer_s: Callable[[], float] | None = None

    def __post_init__(self) -> None:
        self.start = self.clock()

    def design_reserve_s(self) -> float:
        # min(1.5 min, 0.3 x budget); with no budget, still keep 1.5 min in hand.
        return 90.0 if self.total_s is None else min(90.0, 0.3 * self.total_s)

    @property
    def reserve_s(self) -> float:
        if self.answer_s is None or self.total_s is None:
            return self.design_reserve_s()
        return max(MIN_RESERVE_S, self.answer_s())

    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float:
        return math.inf if self.total_s is None else self.total_s - self.elapsed()

    def research_remaining(self) -> float:
        return self.remaining() - self.reserve_s

    def research_over(self) -> bool:
        return self.research_remaining() <= 0


# -- model speed -----------------------------------------------------------------
class SpeedMeter:
    """Learns the chat model's speed on this machine from the calls it makes.

    Two costs: seconds per prompt token read and per token written. On CPUs
    llama.cpp reads a prompt several times faster than it writes, and how many
    times depends on the model and the machine, so the ratio is fitted (least
    squares over the calls so far) once the calls differ enough to tell the two
    apart; until then it is DEFAULT_GEN_COST. `rate()` is in "prompt-token
    equivalents per second", with a written token counted as `gen_cost` read ones.
    """

    DEFAULT_GEN_COST = 6.0
    MIN_SECONDS = 0.001  # a call timed shorter counts as this long (a very fast model, or a test's stand-in)

    OUTPUT_MARGIN = 1.25  # a call of a kind seen before is expected to write up to 1.25 × its longest reply

    def __init__(self) -> None:
        self.samples: list[tuple[int, int, float]] = []
        self._output_share: dict[str, float] = {}  # kind of call → longest reply ÷ its token limit

    def record(self, prompt_tokens: int, output_tokens: int, seconds: float, *, kind: str = "", max_tokens: int = 0) -> None:
        if seconds >= 0:
            self.samples.append((prompt_tokens, max(1, output_tokens), max(self.MIN_SECONDS, seconds)))
        if kind and max_tokens > 0:
            self._output_share[kind] = max(self._output_share.get(kind, 0.0), output_tokens / max_tokens)

    def expected_output(self, kind: str, max_tokens: int) -> int:
        """Tokens a call of this kind will likely write: the token limit until one has been seen.

        Predicting every call from its limit (220 tokens for a loop decision that
        measured ~60) stopped 2-minute runs at 77 s. A call that does write more
        than expected is cut at the research deadline, so the budget still holds.
        """
        share = self._output_share.get(kind)
        if share is None:
            return max_tokens
        return min(max_tokens, max(16, math.ceil(share * self.OUTPUT_MARGIN * max_tokens)))

    @property
    def gen_cost(self) -> float:
        fit = self._fit()
        return self.DEFAULT_GEN_COST if fit is None else min(40.0, max(1.5, fit[1] / fit[0]))

    @property
    def measured(self) -> bool:
        return bool(self.samples)

    def rate(self, default: float = 150.0) -> float:
        """Prompt-token equivalents per second: measured, or `default` before any call was."""
        seconds = sum(s for _, _, s in self.samples)
        if not self.samples or seconds <= 0:
            return default
        cost = self.gen_cost
        return sum(p + cost * o for p, o, _ in self.samples) / seconds

    def predict_s(self, prompt_tokens: int, output_tokens: int, default_rate: float = 150.0) -> float:
        return (prompt_tokens + self.gen_cost * output_tokens) / self.rate(default_rate)

    def describe(self) -> dict[str, float | None]:
        """Measured speeds for the report: prompt and output tokens per second (None: not known)."""
        fit = self._fit()
        if fit is None:
            return {"prompt_tokens_per_s": None, "output_tokens_per_s": None, "gen_cost": self.gen_cost}
        return {"prompt_tokens_per_s": round(1 / fit[0], 1), "output_tokens_per_s": round(1 / fit[1], 1),
                "gen_cost": round(self.gen_cost, 2)}

    def _fit(self) -> tuple[float, float] | None:
        """(seconds per prompt token, seconds per output token), or None if not yet knowable."""
        cached = getattr(self, "_fitted", None)
        if cached is not None and cached[0] == len(self.samples):
            return cached[1]
        fit = self._fit_now()
        self._fitted = (len(self.samples), fit)
        return fit

    def _fit_now(self) -> tuple[float, float] | None:
        if len(self.samples) < 2:
            return None
        a = np.array([[p, o] for p, o, _ in self.samples], dtype=float)
        b = np.array([s for _, _, s in self.samples], dtype=float)
        # Calls that all have the same prompt/output mix cannot separate the two costs.
        if np.linalg.cond(a) > 200:
            return None
        (per_prompt, per_output), *_ = np.linalg.lstsq(a, b, rcond=None)
        if per_prompt <= 0 or per_output <= 0:
            return None
        return float(per_prompt), float(per_output)


# -- loop bookkeeping -------------------------------------------------------------
@dataclass
class SubQuestion:
    topic: str
    attempts: int = 0
    found: int = 0
    status: str = "open"  # open | answered | RETRY_EXHAUSTED


class DeepCancelled(Cancelled):
    """Cancelled during research; `partial` holds the evidence gathered so far."""

    def __init__(self, partial: ResearchResult) -> None:
        super().__init__(f"Deep research cancelled with {len(partial.evidence)} passages gathered.", "You can synthesize an answer from them.")
        self.partial = partial


class DeepResearch:
    def __init__(
        self,
        funnel: Funnel,
        params: DeepParams,
        *,
        deep: bool = True,
        time_minutes: float | None = 5.0,
        clock: Callable[[], float] = time.monotonic,
        cancelled: IsCancelled | None = None,
        started_at: float | None = None,
    ) -> None:
        self.funnel = funnel
        self.params = params
        self.cap = params.max_iterations_deep if deep else params.max_iterations_standard
        self.mode = "deep" if deep else "loop"
        self.budget = Budget(None if time_minutes is None else time_minutes * 60.0, clock)
        if started_at is not None:  # the budget counts from when the user asked (model loading included)
            self.budget.start = started_at
        self.user_cancelled = cancelled or (lambda: False)
        self.meter = SpeedMeter()
        self.pool: list[Evidence] = []
        self._seen: set[tuple[str, int, int]] = set()
        self._score_cache: dict[tuple[str, str], tuple[float, str]] = {}
        self.queries: list[str] = []
        self.decisions: list[dict[str, Any]] = []
        self.subquestions: dict[str, SubQuestion] = {}
        self.limits_hit: list[str] = []
        self.stop_reason = ""
        self.scoring_s = 0.0
        self._chat: ChatModel | None = None
        self.shortlist: list[str] = []
        self.standard_evidence: list[Evidence] = []  # standard mode's stage 2: always in the pool
        self.answered_as_standard = False  # the budget had no room for a research round
        self.widened: list[str] = []  # searches the code added when the model saw no gaps but time was left
        self.answer_cut = 0  # claims kept when the deadline cut the answer (0: not cut)
        self.plan: dict[str, float] = {}
        self.budget.answer_s = self.answer_cost_s

    # -- public -----------------------------------------------------------------------
    def run(self, query: str) -> ResearchResult:
        query = " ".join(query.split())
        result = ResearchResult(query=query, mode=self.mode)
        f = self.funnel
        f._papers = f.library.papers_by_id()
        f._started = time.monotonic()
        qvec, shortlist, notes = f.embed_and_scope(query)
        result.papers, result.messages = shortlist, notes
        self.shortlist = list(shortlist)
        self._emit("round", {"iteration": 0, "topic": query})  # the search on the question itself, as standard mode's
        # Standard mode's evidence, found exactly as standard mode finds it (no model, ~0.1 s):
        # the answer is drawn from at least this, so it is never worse than a standard one.
        self.standard_evidence, notes = f.gather(query, qvec, shortlist)
        result.messages += notes
        self._chat_model()  # loads and measures the model: the plan needs its speed
        self.plan = {"answer_s": round(self.answer_cost_s(), 1), "round_s": round(self.round_cost_s(), 1)}
        self.funnel._emit("budget", self.clock_reading())
        if not self.room_for_research():
            return self._answer_as_standard(result, qvec)
        try:
            self._research(query, shortlist)
        except Cancelled as exc:
            if self.user_cancelled():
                self._fill(result)
                raise DeepCancelled(result) from exc
        self._fill(result)
        self.synthesize(result)
        return result

    def room_for_research(self) -> bool:
        """Whether the time left holds one research round and the final answer's reserve."""
        if self.budget.total_s is None:
            return True
        return self.budget.remaining() >= self.round_cost_s() + self.budget.reserve_s

    def synthesize(self, result: ResearchResult) -> ResearchResult:
        """Final answer from the gathered evidence, written and checked as standard mode does.

        Within a budget the answer is sized to the time left (never above standard
        mode's size; smaller only if research overran its deadline). At the end of the
        budget the answer stops at its next complete claim, early enough for the support
        check to follow; an answer with no complete claim yet runs on, as standard mode
        would. The support check itself is never cut by the deadline.
        """
        f = self.funnel
        chat = self._chat_model()
        timed = self.budget.total_s is not None and not self.answered_as_standard
        if timed:
            answer_tokens, evidence_tokens = self._synthesis_size(chat, self.budget.remaining())
            f.answer_tokens_override, f.evidence_tokens_override = answer_tokens, evidence_tokens
            self.plan.update(answer_tokens=answer_tokens, evidence_tokens=evidence_tokens)
        state = {"phase": "write", "claims": 0, "pairs": 0}
        previous_cancel, previous_event = f.cancelled, f.on_event

        def on_event(kind: str, payload: Any) -> None:
            if kind == "claim":
                state["claims"] += 1
                state["pairs"] += max(1, len(getattr(payload[1], "sources", []) or []))
            elif kind == "stage" and isinstance(payload, tuple) and payload and payload[0] == 4:
                state["phase"] = "check"
            if previous_event is not None:
                previous_event(kind, payload)

        def cancelled() -> bool:
            if self.user_cancelled():
                return True
            if not timed or state["phase"] == "check" or not state["claims"]:
                return False
            return self.budget.remaining() <= self.check_cost_s(state["pairs"])

        f.cancelled, f.on_event = cancelled, on_event
        messages_before = len(result.messages)
        try:
            f.synthesize_into(result)
        except Cancelled:
            if self.user_cancelled() or not result.claims:
                raise
            self._check_cut_answer(result, chat, messages_before)
        finally:
            f.cancelled, f.on_event = previous_cancel, previous_event
            f.answer_tokens_override = None
            f.evidence_tokens_override = None
        result.answer = result.answer.rstrip() + "\n\n" + self.methodology_markdown(result)
        self._fill(result)
        result.timings["total_s"] = self.budget.elapsed()
        return result

    def _check_cut_answer(self, result: ResearchResult, chat: ChatModel, messages_before: int) -> None:
        """The deadline stopped the answer: keep its complete claims and check them.

        synthesis.py kept the claims on screen, marked by key-term overlap only (as for a
        user's stop). A deadline is no user's stop, and claims carry their citations: the
        same support check as any answer's runs on them (one short call).
        """
        from . import synthesis

        self.answer_cut = len(result.claims)
        self.limits_hit.append("time (answer cut at the deadline)")
        result.messages[messages_before:] = [m for m in result.messages[messages_before:]
                                            if not m.startswith(("Stopped:", "Support check:"))]
        result.messages.append(f"Deep: the time budget ran out while the answer was written; it keeps its "
                               f"{plural(len(result.claims), 'complete claim')}, with their citations.")
        if self.funnel.params.check_support:
            synthesis.check_claims(self.funnel, result, chat)

    def _answer_as_standard(self, result: ResearchResult, qvec) -> ResearchResult:
        """No room for a research round: standard mode's evidence and answer, and the reason."""
        from .synthesis import focus_into

        f = self.funnel
        self.answered_as_standard = True
        self.queries.append(result.query)
        self.pool = list(self.standard_evidence)
        self.stop_reason = (
            f"the time left ({max(0.0, self.budget.remaining()):.0f} s) is less than one research round "
            f"(~{self.round_cost_s():.0f} s) plus the answer (~{self.budget.reserve_s:.0f} s) on this machine, "
            "so it answered as standard mode does")
        self._limit("time (too short for a research round)")
        result.evidence = list(self.standard_evidence)
        if f.params.structured_answers:
            focus_into(f, result, qvec)
            f._emit("evidence", result.evidence)
        return self.synthesize(result)

    # -- the loop ----------------------------------------------------------------------
    def _research(self, query: str, shortlist: list[str]) -> None:
        try:
            self.search_evidence(query, papers=shortlist, keep=self.funnel.params.k_evidence)
        finally:
            self._include_standard()
        if self.budget.research_over():
            self._limit("time")
            return
        chat = self._chat_model()
        if chat.supports_tools:  # LM Studio: the model drives search_evidence itself
            self._research_with_tools(query, chat)
            return
        for iteration in range(1, self.cap + 1):
            self._check_user_cancel()
            if self.budget.research_over():
                self._limit("time")
                return
            decision = self.decide(query, iteration)
            if decision is None:  # no time left for the model to decide
                return
            gaps = [g.strip() for g in decision.get("gaps", []) if isinstance(g, str) and g.strip()]
            done = ""
            if not gaps:
                done = "no gaps left"
            elif not decision.get("shouldContinue", True):
                done = "the model judged the evidence sufficient"
            if done:
                self.stop_reason = done
                self._widen_to_deadline(query, iteration)
                return
            if iteration >= self.cap:
                self._limit("iteration cap")
                self._widen_to_deadline(query, iteration)
                return
            topic = self._next_topic(decision, gaps)
            if topic is None:
                self._limit("all gaps exhausted")
                self._widen_to_deadline(query, iteration)
                return
            self._check_user_cancel()
            if self.budget.research_over():
                self._limit("time")
                return
            self._emit("round", {"iteration": iteration, "topic": topic, "gaps": gaps})
            sub = self.subquestions.setdefault(topic.lower(), SubQuestion(topic))
            sub.attempts += 1
            found = self._search_round(topic)
            sub.found += len(found)
            if found:
                sub.status = "answered"
            elif sub.attempts >= self.params.max_attempts_per_question:
                sub.status = RETRY_EXHAUSTED
        if not self.stop_reason:
            self._limit("iteration cap")

    def _widen_to_deadline(self, query: str, iteration: int) -> None:
        """With budgeted time left after the model's rounds, keep searching to the research deadline.

        The user gave the time for a thorough search; stopping at the first "no gaps" left
        most of a 5-minute budget unused. The model has had its say (its decision
        stands as the stop reason), so these searches need no further decisions: the
        question across the whole library, then within each shortlisted paper. Without a
        budget the design's stop rules stand and nothing is added.
        """
        while self.budget.total_s is not None:
            self._check_user_cancel()
            if self.budget.research_over():
                self.limits_hit.append("time")
                return
            widening = self._widening(query)
            if widening is None:
                self._note("the search has nothing left to widen to")
                return
            topic, papers, label = widening
            self.widened.append(label)
            iteration += 1
            self._emit("round", {"iteration": iteration, "topic": label, "gaps": []})
            self._search_round(topic, papers=papers, label=label)

    def _search_round(self, topic: str, *, papers: list[str] | None = None, label: str = "") -> list[Evidence]:
        try:
            return self.search_evidence(topic, papers=papers, label=label)
        except (ResearchDeskError, Cancelled) as exc:
            if self.user_cancelled():
                raise
            self._note(f"search for {label or topic!r} failed: {getattr(exc, 'message', exc)}")
            return []

    def _widening(self, query: str) -> tuple[str, list[str] | None, str] | None:
        """The next search when the model names none: (query, papers, label), or None when all were run.

        First the question across the whole library (stage 1 may have missed a paper that
        only its full text matches), then within each shortlisted paper, the paper with the
        fewest passages in the pool first.
        """
        done = set(self.widened)
        label = "the question across the whole library"
        if label not in done:
            return query, None, label
        counts = {pid: 0 for pid in self.shortlist}
        for e in self.pool:
            if e.paper_id in counts:
                counts[e.paper_id] += 1
        for pid in sorted(counts, key=lambda p: (counts[p], self.shortlist.index(p))):
            label = f"the question within {pid}"
            if label not in done:
                return query, [pid], label
        return None

    def _include_standard(self) -> None:
        """Standard mode's stage-2 passages that round 0 did not keep join the pool (after it)."""
        added = False
        for e in self.standard_evidence:
            key = (e.paper_id, e.page, e.char_start)
            if key in self._seen:
                continue
            self._seen.add(key)
            self.pool.append(replace(e, number=len(self.pool) + 1, sentences=[]))
            added = True
        if added:
            self._emit("evidence", list(self.pool))

    def _research_with_tools(self, query: str, chat: ChatModel) -> None:
        """The loop as native tool calls: every call of the tool is one round.

        The same rules hold as in the decision loop, enforced inside the tool: a
        call past the research time, past the iteration cap, or for a sub-question
        already tried 3 times runs no search and tells the model to stop.
        """
        calls = 0

        def search_evidence(query: str) -> str:
            nonlocal calls
            topic = " ".join(str(query).split())
            if self.user_cancelled():
                return "Cancelled by the user. Stop now."
            if self.budget.research_over():
                self._limit("time")
                return "The search time is used up. Stop searching and reply with your summary."
            if calls >= self.cap:
                self._limit("iteration cap")
                return "The search limit is reached. Stop searching and reply with your summary."
            sub = self.subquestions.setdefault(topic.lower(), SubQuestion(topic))
            if sub.status == RETRY_EXHAUSTED:
                return f"“{topic}” was already searched {sub.attempts} times without results; search something else or stop."
            calls += 1
            self._emit("round", {"iteration": calls, "topic": topic})
            sub.attempts += 1
            try:
                found = self.search_evidence(topic)
            except (ResearchDeskError, Cancelled) as exc:
                found = []
                self._note(f"search for {topic!r} failed: {getattr(exc, 'message', exc)}")
            sub.found += len(found)
            sub.status = "answered" if found else (RETRY_EXHAUSTED if sub.attempts >= self.params.max_attempts_per_question else "open")
            decision = {"iteration": calls, "summary": "", "gaps": [topic], "shouldContinue": True,
                        "nextSearchTopic": topic, "via": "tool call",
                        "timeRemainingMinutes": round(max(0.0, self.budget.research_remaining()) / 60, 2) if self.budget.total_s else None}
            self.decisions.append(decision)
            self._emit("decision", decision)
            if not found:
                return "No new passages for this query."
            return "New passages:\n" + "\n".join(f"- {e.paper_id}, page {e.page}: {(e.summary or e.text)[:240].strip()}" for e in found)

        prompt = load_prompt("deep_tools.md").format(query=query, evidence=self._evidence_digest(), max_calls=self.cap)
        tool = Tool("search_evidence", "Search the papers' full text for one aspect of the question.",
                    {"query": "a short search query in the words the papers would use"}, search_evidence)
        try:
            texts = chat.act([{"role": "user", "content": prompt}], [tool], max_rounds=self.cap + 1,
                             cancelled=self._deadline_cancel(stop_at_total=False))
        except Cancelled:
            if self.user_cancelled():
                raise
            self._limit("time")
            return
        except ModelError as exc:
            self._note(f"the model's tool calling failed ({exc.message}); writing the report from what was found")
            self.stop_reason = self.stop_reason or "the model's tool calling failed"
            return
        if texts and self.decisions:
            self.decisions[-1]["summary"] = texts[-1].strip()[:600]
        if not self.stop_reason:
            self.stop_reason = "the model stopped searching" if calls else "the model judged the first search sufficient"

    def _next_topic(self, decision: dict[str, Any], gaps: list[str]) -> str | None:
        """The model's next topic unless exhausted; else the first gap that is not."""
        candidates = [str(decision.get("nextSearchTopic") or "").strip(), *gaps]
        for topic in candidates:
            if not topic:
                continue
            sub = self.subquestions.get(topic.lower())
            if sub is None or (sub.status != RETRY_EXHAUSTED and sub.status != "answered"):
                return topic
        return None

    def decide(self, query: str, iteration: int) -> dict[str, Any] | None:
        """The model's loop decision; malformed output gets one retry, then "no gaps".

        None when there is no time left for the model to decide.
        """
        prompt = load_prompt("deep_decision.md").format(
            query=query,
            iteration=iteration,
            max_iterations=self.cap,
            time_remaining=("unlimited" if self.budget.total_s is None else f"{max(0.0, self.budget.research_remaining()) / 60:.1f}"),
            evidence=self._evidence_digest(),
            queries="; ".join(self.queries) or "none",
            exhausted="; ".join(s.topic for s in self.subquestions.values() if s.status == RETRY_EXHAUSTED) or "none",
        )
        messages = [{"role": "user", "content": prompt}]
        decision: dict[str, Any] | None = None
        for attempt in range(2):
            try:
                raw = self._call(messages, max_tokens=220, json_schema=LOOP_SCHEMA)
                decision = _validate_decision(json.loads(raw))
                break
            except ModelTimeout:
                self._limit("time")
                return None
            except (ValueError, TypeError, ModelError) as exc:
                if self.budget.research_over():
                    break
                messages = messages + [
                    {"role": "assistant", "content": raw if "raw" in locals() else ""},
                    {"role": "user", "content": f"That was not valid: {exc}. Reply with the JSON object only."},
                ]
        if decision is None:
            self._note(f"round {iteration}: the model's decision was malformed twice; treated as no further gaps")
            decision = {"iteration": iteration, "summary": "", "gaps": [], "shouldContinue": False,
                        "nextSearchTopic": "", "timeRemainingMinutes": 0.0, "malformed": True}
        decision["iteration"] = iteration  # the code's count, whatever the model wrote
        decision["timeRemainingMinutes"] = round(max(0.0, self.budget.research_remaining()) / 60, 2) if self.budget.total_s else None
        self.decisions.append(decision)
        self._emit("decision", decision)
        return decision

    # -- search_evidence (PaperQA2-style scoring) ----------------------------------------
    def search_evidence(self, query: str, papers: list[str] | None = None, *, keep: int | None = None, label: str = "",
                        score: bool = True) -> list[Evidence]:
        """Hybrid top N → query-aware summary and LLM score per candidate → top K kept.

        `keep` above the usual 5–8 widens the search (round 0 keeps as many passages as
        standard mode, so deep research never starts from less evidence than it).
        `label` names the search in the methodology where the query alone would not
        (the question again, within one paper). `score=False` ranks by retrieval alone.
        """
        self.queries.append(label or query)
        f = self.funnel
        keep = keep or self.params.keep_per_search
        qvec = f.embedder.embed_one(query)
        table = f.library.chunks_table(CONTENT_CHUNKS)
        # Candidates as standard mode finds them (hybrid, which measured best).
        candidates = retrieval.search(table, qvec, query, limit=max(self.params.candidates, 2 * keep), papers=papers or None, hybrid=f.params.hybrid)
        candidates = [c for c in candidates if not is_bibliography(c.section) and c.passes(f.cutoffs.evidence)
                      and (c.paper_id, c.page, c.char_start) not in self._seen]
        scores = self._score(query, candidates[: self.params.candidates]) if score else self._score_cache
        scored, unscored = [], []
        for c in candidates:
            llm = scores.get((query, _key(c)))
            if llm is None:  # past the scoring window or out of time: keeps the retrieval's fused order
                unscored.append((c.cosine, c, None))
            else:
                scored.append((self.params.vector_weight * c.cosine + self.params.llm_weight * llm[0], c, llm))
        scored.sort(key=lambda t: -t[0])
        # Drop what the model called unrelated, unless that would leave (almost) nothing:
        # a weak model scoring everything 0 must not empty the evidence.
        related = [t for t in scored if t[2][0] > 0.05]
        if len(related) + len(unscored) >= 2:
            scored = related
        ranked = scored + unscored
        kept: list[Evidence] = []
        for combined, c, llm in ranked[:keep]:
            self._seen.add((c.paper_id, c.page, c.char_start))
            e = Evidence(
                number=len(self.pool) + 1, paper_id=c.paper_id, page=c.page, page_label=c.page_label,
                section=c.section, text=c.text, score=round(combined, 4), stage=f"deep:{len(self.queries)}",
                query=query, char_start=c.char_start, char_end=c.char_end,
                llm_score=None if llm is None else round(llm[0], 3), summary="" if llm is None else llm[1],
            )
            self.pool.append(e)
            kept.append(e)
        self._emit("evidence", list(self.pool))
        return kept

    def _score(self, query: str, candidates: list[retrieval.Candidate]) -> dict[tuple[str, str], tuple[float, str]]:
        todo = [c for c in candidates if (query, _key(c)) not in self._score_cache]
        started = self.budget.clock()
        try:
            i = 0
            while i < len(todo):
                self._check_user_cancel()
                if self.budget.research_over():
                    break  # unscored candidates fall back to their vector score
                # The largest batch (up to SCORE_BATCH) whose call can finish before the deadline.
                size = min(SCORE_BATCH, len(todo) - i)
                prompt = self._score_prompt(query, todo[i : i + size])
                while size > 1 and self._predict_call(prompt, SCORE_TOKENS_PER_PASSAGE * size, SCORE_SCHEMA) > self.budget.research_remaining():
                    size -= 1
                    prompt = self._score_prompt(query, todo[i : i + size])
                batch = todo[i : i + size]
                i += size
                try:
                    raw = self._call([{"role": "user", "content": prompt}], max_tokens=SCORE_TOKENS_PER_PASSAGE * len(batch), json_schema=SCORE_SCHEMA)
                    items = json.loads(raw).get("items", [])
                except Cancelled:
                    if self.user_cancelled():
                        raise
                    break  # the research deadline cut this call: the candidates keep their retrieval order
                except (ValueError, ModelError) as exc:
                    if isinstance(exc, ModelTimeout):
                        break
                    continue  # this batch keeps vector scores
                for item in items:
                    try:
                        n = int(item["source"])
                        score = min(1.0, max(0.0, float(item["score"])))
                    except (KeyError, TypeError, ValueError):
                        continue
                    if 1 <= n <= len(batch):
                        self._score_cache[(query, _key(batch[n - 1]))] = (score, str(item.get("summary", ""))[:400])
        finally:
            self.scoring_s += self.budget.clock() - started
        return self._score_cache

    @staticmethod
    def _score_prompt(query: str, batch: list[retrieval.Candidate]) -> str:
        passages = "\n\n".join(f"[Source {n}] {c.paper_id}, page {c.page}\n{c.text.strip()[:SCORE_PASSAGE_CHARS]}" for n, c in enumerate(batch, 1))
        return load_prompt("evidence_score.md").format(query=query, passages=passages)

    # -- model calls ---------------------------------------------------------------------
    def _chat_model(self) -> ChatModel:
        if self._chat is None:
            self._chat = self.funnel._load_chat()
            self._calibrate(self._chat)
        return self._chat

    def _calibrate(self, chat: ChatModel) -> None:
        """Time two short calls, so the first real call (and the final answer) can be predicted.

        llama.cpp cannot be interrupted while it reads a prompt, so a call that cannot
        finish before the deadline must not be started at all; and the synthesis reserve
        is the predicted cost of the answer. One call mostly reads, one mostly writes, so
        the cost of writing a token relative to reading one is fitted from the start.
        """
        prompt = "Reply with the word ok. " + "context " * 150
        count = "Count from 1 to 40, separated by spaces."
        try:
            # A model's first call pays one-off costs (buffers, caches): seconds, on a laptop,
            # that would make every later call look that slow. It is not measured.
            chat.chat([{"role": "user", "content": "ok"}], max_tokens=1, temperature=0.0)
            for text, max_tokens in ((prompt, 4), (count, 16)):
                started = self.budget.clock()
                out = chat.chat([{"role": "user", "content": text}], max_tokens=max_tokens, temperature=0.0)
                self.meter.record(chat.count_tokens(text), max(1, chat.count_tokens(out)), self.budget.clock() - started)
        except (ModelError, Cancelled):
            return

    def _predict_call(self, prompt: str, max_tokens: int, json_schema: dict[str, Any]) -> float:
        """Predicted seconds of a research call with this prompt."""
        chat = self._chat_model()
        prompt_tokens = chat.count_tokens(prompt)
        max_tokens = min(max_tokens, max(64, chat.context_length - prompt_tokens - 16))
        return self.meter.predict_s(prompt_tokens, self.meter.expected_output(_kind(json_schema), max_tokens), CONSERVATIVE_RATE)

    def _call(self, messages, *, max_tokens: int, json_schema: dict[str, Any]) -> str:
        chat = self._chat_model()
        prompt_tokens = chat.count_tokens("\n".join(m["content"] for m in messages))
        max_tokens = min(max_tokens, max(64, chat.context_length - prompt_tokens - 16))
        kind = _kind(json_schema)  # decisions, scores…: each writes its own length
        predicted = self._predict_call("\n".join(m["content"] for m in messages), max_tokens, json_schema)
        if predicted > self.budget.research_remaining():
            raise ModelTimeout(f"not enough research time left for another model call (needs ~{predicted:.0f} s)")
        started = self.budget.clock()
        out = chat.chat(messages, max_tokens=max_tokens, temperature=0.0, json_schema=json_schema,
                        cancelled=self._deadline_cancel(stop_at_total=False))
        self.meter.record(prompt_tokens, chat.count_tokens(out), self.budget.clock() - started, kind=kind, max_tokens=max_tokens)
        return out

    # -- the plan: what the answer and a round cost on this machine -----------------------
    def standard_sizes(self, chat: ChatModel | None = None) -> tuple[int, int]:
        """(evidence tokens, answer tokens) of a standard answer (Funnel.evidence_budget / answer_tokens, no overrides)."""
        p = self.funnel.params
        context = (chat or self._chat).context_length if (chat or self._chat) is not None else 4096
        if not p.structured_answers:
            answer = max(64, min(p.answer_max_tokens, context // 3))
            return max(120, min(2 * p.focus_tokens, context - answer - PROMPT_OVERHEAD_TOKENS)), answer
        answer = max(64, min(p.claims_max_tokens, context // 3))
        return max(120, min(p.focus_tokens, context - answer - PROMPT_OVERHEAD_TOKENS)), answer

    def answer_cost_s(self, evidence_tokens: int | None = None, answer_tokens: int | None = None) -> float:
        """Predicted seconds to write and check an answer (standard mode's size by default).

        Reading the focused evidence and the prompt; writing the claims as synthesis.py
        asks for them (the direct answer, then its supporting claims in a second turn;
        each turn capped at `answer_tokens`); then the support check of their pairs.
        """
        standard_evidence, standard_answer = self.standard_sizes()
        evidence = standard_evidence if evidence_tokens is None else evidence_tokens
        answer = standard_answer if answer_tokens is None else answer_tokens
        p = self.funnel.params
        if not p.structured_answers:  # free text: the answer's token limit is what it writes
            read, written, claims, calls = evidence + PROMPT_OVERHEAD_TOKENS, answer, answer / CLAIM_TOKENS, 1
        else:
            from . import claims as claims_module, synthesis

            two_turns = getattr(p, "first_claim_tokens", 0) > 0
            if two_turns:
                more = getattr(synthesis, "MORE_CLAIMS", claims_module.MAX_CLAIMS - 1)
                written = min(CLAIM_TOKENS, answer) + min(more * CLAIM_TOKENS, answer)
            else:
                written = min(claims_module.MAX_CLAIMS * CLAIM_TOKENS, answer)
            read = evidence + PROMPT_OVERHEAD_TOKENS + (SECOND_TURN_TOKENS if two_turns else 0)
            claims, calls = written / CLAIM_TOKENS, 2 if two_turns else 1
        cost = self.meter.predict_s(read, written, CONSERVATIVE_RATE) + CALL_OVERHEAD_S * calls
        if p.check_support:
            cost += self.check_cost_s(max(1, math.ceil(claims * SOURCES_PER_CLAIM)))
        return cost

    def check_cost_s(self, pairs: int) -> float:
        """Predicted seconds of the support check for `pairs` (claim, passage) pairs."""
        if not pairs or not self.funnel.params.check_support:
            return 0.0
        return CALL_OVERHEAD_S + self.meter.predict_s(JUDGE_PROMPT_TOKENS + JUDGE_TOKENS_PER_PAIR * pairs,
                                                      10 + VERDICT_TOKENS * pairs, CONSERVATIVE_RATE)

    def round_cost_s(self) -> float:
        """Predicted seconds of the smallest round that can change the evidence: scoring one passage.

        Scoring batches shrink to what fits the research time left (`_score`), so one
        passage is the unit; a 4-passage unit sent a 5-minute run on a loaded machine to
        the standard answer with two minutes of research time unused.
        """
        prompt = 160 + SCORE_PASSAGE_CHARS // 4
        output = self.meter.expected_output(_kind(SCORE_SCHEMA), SCORE_TOKENS_PER_PASSAGE)
        return CALL_OVERHEAD_S + self.meter.predict_s(prompt, output, CONSERVATIVE_RATE)

    def _deadline_cancel(self, *, stop_at_total: bool) -> IsCancelled:
        """Cancel in-flight work at the research deadline (or at the very end, for synthesis)."""

        def cancelled() -> bool:
            if self.user_cancelled():
                return True
            left = self.budget.remaining() if stop_at_total else self.budget.research_remaining()
            return left <= 0

        return cancelled

    def _synthesis_size(self, chat: ChatModel, remaining_s: float) -> tuple[int, int]:
        """(answer tokens, evidence tokens): standard mode's sizes, smaller only if they cannot fit the time left.

        Research stops with the predicted cost of a standard answer in hand, so the sizes
        shrink only when a call overran; answer first (to half), then evidence, then answer.
        """
        evidence0, answer0 = self.standard_sizes(chat)
        evidence, answer = evidence0, answer0
        if math.isinf(remaining_s):
            return answer, evidence
        while self.answer_cost_s(evidence, answer) > remaining_s:
            if answer > max(MIN_ANSWER_TOKENS, answer0 // 2):
                answer = max(MIN_ANSWER_TOKENS, answer0 // 2, answer - 32)
            elif evidence > MIN_EVIDENCE_TOKENS:
                evidence = max(MIN_EVIDENCE_TOKENS, evidence - 64)
            elif answer > MIN_ANSWER_TOKENS:
                answer = max(MIN_ANSWER_TOKENS, answer - 32)
            else:
                break
        return answer, evidence

    # -- reporting ------------------------------------------------------------------------
    def _fill(self, result: ResearchResult) -> None:
        # Unless every passage has an LLM score (comparable across searches), the pool keeps
        # its order: the question's own search first, each search best first.
        scored = bool(self.pool) and all(e.llm_score is not None for e in self.pool)
        ranked = sorted(self.pool, key=lambda e: -e.score) if scored else list(self.pool)
        for n, e in enumerate(ranked, 1):
            e.number = n
        if not result.answer:
            result.evidence = ranked
        result.extra.update(
            loop_decisions=self.decisions,
            retry_tracking=[vars(s) for s in self.subquestions.values()],
            limits_hit=list(dict.fromkeys(self.limits_hit)),
            methodology=self.methodology(),
        )
        result.timings["scoring_s"] = round(self.scoring_s, 2)
        result.timings["elapsed_s"] = round(self.budget.elapsed(), 2)

    def methodology(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "rounds": len(self.decisions),
            "iteration_cap": self.cap,
            "queries": list(self.queries),
            "papers_read": sorted({e.paper_id for e in self.pool}),
            "evidence_kept": len(self.pool),
            "standard_evidence": len(self.standard_evidence),
            "time_budget_s": self.budget.total_s,
            "time_used_s": round(self.budget.elapsed(), 1),
            "scoring_share": round(self.scoring_s / max(1e-6, self.budget.elapsed()), 3),
            "model_speed": self.meter.describe(),
            "plan": dict(self.plan),
            "answered_as_standard": self.answered_as_standard,
            "widened": list(self.widened),
            "answer_cut_after_claims": self.answer_cut,
            "stop_reason": self.stop_reason,
            "limits_hit": list(dict.fromkeys(self.limits_hit)),
            "exhausted": [s.topic for s in self.subquestions.values() if s.status == RETRY_EXHAUSTED],
        }

    def methodology_markdown(self, result: ResearchResult | None = None) -> str:
        m = self.methodology()
        budget = "unlimited" if m["time_budget_s"] is None else f"{m['time_budget_s'] / 60:g} min"
        lines = [
            "## Methodology",
            "",
            f"- Mode: {m['mode']}; {m['rounds']} decision rounds (cap {m['iteration_cap']}).",
            f"- Searches ({len(m['queries'])}): " + "; ".join(q if q in self.widened else f"“{q}”" for q in m["queries"]),
            f"- Papers read: {len(m['papers_read'])} ({', '.join(m['papers_read']) or 'none'}); evidence kept: {m['evidence_kept']} passages"
            + (f", standard mode's {m['standard_evidence']} included." if m["standard_evidence"] else "."),
            f"- Time: {m['time_used_s']:.0f} s used of {budget}; evidence scoring took {m['scoring_share']:.0%} of it.",
            *_speed_line(m["model_speed"]),
        ]
        if m["answered_as_standard"]:
            lines.append("- Budget: too short for a research round on this machine, so no round was run: the answer is "
                         "standard mode's, from standard mode's evidence. Give deep research more time for rounds.")
        elif m["plan"].get("answer_s") and m["time_budget_s"] is not None:
            lines.append(f"- Time kept for the answer: ~{self.budget.reserve_s:.0f} s, what a standard answer takes on this "
                         "machine (predicted from the model's measured speed).")
        if m["widened"]:
            lines.append(f"- With research time left after the model's rounds, the search widened: {'; '.join(m['widened'])}.")
        if m["answer_cut_after_claims"]:
            lines.append(f"- The answer was cut at the time limit after {plural(m['answer_cut_after_claims'], 'complete claim')} (each with its citations).")
        lines += [
            *_support_line(result),
            f"- Stopped because: {m['stop_reason'] or 'see limits'}.",
            f"- Limits hit: {', '.join(m['limits_hit']) or 'none'}.",
        ]
        if m["exhausted"]:
            lines.append(f"- Sub-questions marked {RETRY_EXHAUSTED} after {self.params.max_attempts_per_question} attempts: " + "; ".join(m["exhausted"]))
        return "\n".join(lines) + "\n"

    def clock_reading(self) -> dict[str, float | None]:
        """The budget as seconds: total (None = unlimited), synthesis reserve, elapsed."""
        return {"total_s": self.budget.total_s, "reserve_s": self.budget.reserve_s,
                "elapsed_s": round(self.budget.elapsed(), 2)}

    def _check_user_cancel(self) -> None:
        if self.user_cancelled():
            raise Cancelled()

    def _limit(self, name: str) -> None:
        self.limits_hit.append(name)
        if not self.stop_reason:
            self.stop_reason = f"limit reached: {name}"

    def _note(self, message: str) -> None:
        self.funnel.progress(-1, f"Deep: {message}")

    def _emit(self, kind: str, payload: Any) -> None:
        if kind in ("round", "decision"):
            # The clock travels with each round so a UI can draw the time left without polling.
            self.funnel._emit("budget", self.clock_reading())
        if kind == "round":
            left = self.budget.research_remaining()
            when = "" if math.isinf(left) else f" ({max(0, left):.0f} s of research time left)"
            self.funnel.progress(-1, f"Round {payload['iteration']}: searching “{payload['topic']}”{when}")
        self.funnel._emit(kind, payload)

    def _evidence_digest(self, limit: int = 12) -> str:
        best = sorted(self.pool, key=lambda e: -e.score)[:limit]
        if not best:
            return "(nothing yet)"
        return "\n".join(f"- {e.paper_id}, page {e.page}: {(e.summary or e.text)[:220].strip()}" for e in best)


def _speed_line(speed: dict[str, float | None]) -> list[str]:
    if not speed.get("prompt_tokens_per_s"):
        return []
    return [f"- Model speed measured on this machine: reads {speed['prompt_tokens_per_s']:.0f} and writes "
            f"{speed['output_tokens_per_s']:.1f} tokens/s (the final answer was sized to fit the time left)."]


def _support_line(result: ResearchResult | None) -> list[str]:
    """What the support check found, in the report itself: unsupported citations are marked, and said to be."""
    if result is None or not result.citations:
        return [] if result is None else ["- Citations: the answer cites no passage; treat it with care."]
    checked = [c for c in result.citations if c.support]
    if not checked:
        return [f"- Support check: not run; {len(result.citations)} citations are marked by key-term overlap only."]
    supported = sum(c.support == Support.SUPPORTED.value for c in checked)
    partial = sum(c.support == Support.PARTIAL.value for c in checked)
    unsupported = len(checked) - supported - partial
    line = f"- Support check: {supported} of {len(result.citations)} citations supported"
    if partial:
        line += f", {partial} partly"
    if unsupported:
        line += f", {unsupported} not supported by the passage they cite (marked in the answer; do not rely on them)"
    return [line + "."]


def _kind(json_schema: dict[str, Any]) -> str:
    """A model call's kind, by the keys of its reply: the speed meter learns each kind's reply length."""
    return ",".join(sorted(json_schema.get("properties", {})))


def _key(c: retrieval.Candidate) -> str:
    return f"{c.paper_id}:{c.chunk_index}"


def _validate_decision(d: Any) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise ValueError("the decision must be a JSON object")
    missing = [k for k in LOOP_SCHEMA["required"] if k not in d]
    if missing:
        raise ValueError(f"missing keys: {', '.join(missing)}")
    if not isinstance(d["gaps"], list):
        raise ValueError("gaps must be a list")
    return d


def parse_time(value: str | None) -> float | None:
    """`--time N` minutes or 'unlimited' (None); default 5."""
    if value is None:
        return 5.0
    if str(value).strip().lower() in ("unlimited", "none", "inf"):
        return None
    minutes = float(value)
    if minutes <= 0:
        raise ValueError("the time budget must be positive")
    return minutes
