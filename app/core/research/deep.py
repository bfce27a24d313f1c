"""Deep research: an agentic loop under a time budget (DESIGN.md, "Deep research").

Round 0 scopes the library and scores evidence for the question. Each later
round asks the model for a loop decision (JSON held to a schema: gaps, next
search topic, …) and runs one `search_evidence` for the chosen gap. The code,
not the model, enforces the stop rules: no gaps left, the time budget (minus
the synthesis reserve), the iteration cap, every open gap exhausted after 3
failed attempts. The final synthesis always gets its reserve and is sized to
fit it from the model's measured speed on this machine.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..callbacks import IsCancelled
from ..errors import Cancelled, ModelError, ModelTimeout, ResearchDeskError, SynthesisFailed
from ..library import CONTENT_CHUNKS
from ..models.base import ChatModel, Tool
from ..paths import load_prompt
from ..records import Evidence, ResearchResult
from ..settings import DeepParams
from . import retrieval
from .funnel import Funnel, is_bibliography

RETRY_EXHAUSTED = "RETRY_EXHAUSTED"
SCORE_BATCH = 4  # passages per scoring call: fits a 2k-token context with room to answer

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
    """The run's clock: total budget, synthesis reserve, and the research deadline."""

    total_s: float | None  # None: unlimited (the iteration cap still applies)
    clock: Callable[[], float] = time.monotonic
    start: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.start = self.clock()

    @property
    def reserve_s(self) -> float:
        # min(1.5 min, 0.3 x budget); with no budget, still keep 1.5 min in hand.
        return 90.0 if self.total_s is None else min(90.0, 0.3 * self.total_s)

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

    OUTPUT_MARGIN = 1.25  # a call of a kind seen before is expected to write up to 1.25 × its longest reply

    def __init__(self) -> None:
        self.samples: list[tuple[int, int, float]] = []
        self._output_share: dict[str, float] = {}  # kind of call → longest reply ÷ its token limit

    def record(self, prompt_tokens: int, output_tokens: int, seconds: float, *, kind: str = "", max_tokens: int = 0) -> None:
        if seconds > 0.05:
            self.samples.append((prompt_tokens, max(1, output_tokens), seconds))
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

    def rate(self, default: float = 150.0) -> float:
        seconds = sum(s for _, _, s in self.samples)
        if seconds <= 1.0:
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
        self._tokens: list[str] = []

    # -- public -----------------------------------------------------------------------
    def run(self, query: str) -> ResearchResult:
        query = " ".join(query.split())
        result = ResearchResult(query=query, mode=self.mode)
        self.funnel._papers = self.funnel.library.papers_by_id()
        qvec = self.funnel.embedder.embed_one(query)
        shortlist, notes = self.funnel.scope(query, qvec)
        result.papers, result.messages = shortlist, notes
        try:
            self._research(query, shortlist)
        except Cancelled as exc:
            if self.user_cancelled():
                self._fill(result)
                raise DeepCancelled(result) from exc
        self._fill(result)
        self.synthesize(result)
        return result

    def synthesize(self, result: ResearchResult) -> ResearchResult:
        """Final answer from the gathered evidence, sized to fit the time left."""
        remaining = self.budget.remaining()
        chat = self._chat_model()
        answer_tokens, evidence_tokens = self._synthesis_size(chat, remaining)
        self.funnel.answer_tokens_override = answer_tokens
        self.funnel.evidence_tokens_override = evidence_tokens
        previous_cancel, previous_on_token = self.funnel.cancelled, self.funnel.on_token
        self.funnel.cancelled = self._deadline_cancel(stop_at_total=True)
        self._tokens = []

        def on_token(token: str) -> None:  # keep the partial answer in case the deadline cuts it
            self._tokens.append(token)
            if previous_on_token is not None:
                previous_on_token(token)

        self.funnel.on_token = on_token
        try:
            self.funnel.synthesize_into(result)
        except (Cancelled, SynthesisFailed) as exc:
            if self.user_cancelled():
                raise
            partial = "".join(self._tokens)
            if not partial.strip():
                raise SynthesisFailed("Synthesis failed: the time budget ran out before the model wrote anything.", "Give the run more time, or use a faster model.") from exc
            self.limits_hit.append("time (answer cut at the deadline)")
            self.funnel.format_into(result, partial + "\n\n*(The answer was cut off at the time limit.)*")
        finally:
            self.funnel.cancelled, self.funnel.on_token = previous_cancel, previous_on_token
            self.funnel.answer_tokens_override = None
            self.funnel.evidence_tokens_override = None
        result.answer = result.answer.rstrip() + "\n\n" + self.methodology_markdown()
        self._fill(result)
        result.timings["total_s"] = self.budget.elapsed()
        return result

    # -- the loop ----------------------------------------------------------------------
    def _research(self, query: str, shortlist: list[str]) -> None:
        self._emit("round", {"iteration": 0, "topic": query})
        self.search_evidence(query, papers=shortlist, keep=self.funnel.params.k_evidence)
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
            if not gaps:
                self.stop_reason = "no gaps left"
                return
            if not decision.get("shouldContinue", True):
                self.stop_reason = "the model judged the evidence sufficient"
                return
            if iteration >= self.cap:
                self._limit("iteration cap")
                return
            topic = self._next_topic(decision, gaps)
            if topic is None:
                self._limit("all gaps exhausted")
                return
            self._check_user_cancel()
            if self.budget.research_over():
                self._limit("time")
                return
            self._emit("round", {"iteration": iteration, "topic": topic, "gaps": gaps})
            sub = self.subquestions.setdefault(topic.lower(), SubQuestion(topic))
            sub.attempts += 1
            try:
                found = self.search_evidence(topic)
            except (ResearchDeskError, Cancelled) as exc:
                if self.user_cancelled():
                    raise
                found = []
                self._note(f"search for {topic!r} failed: {getattr(exc, 'message', exc)}")
            sub.found += len(found)
            if found:
                sub.status = "answered"
            elif sub.attempts >= self.params.max_attempts_per_question:
                sub.status = RETRY_EXHAUSTED
        if not self.stop_reason:
            self._limit("iteration cap")

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
    def search_evidence(self, query: str, papers: list[str] | None = None, *, keep: int | None = None) -> list[Evidence]:
        """Hybrid top N → query-aware summary and LLM score per candidate → top K kept.

        `keep` above the usual 5–8 widens the search (round 0 keeps as many passages as
        standard mode, so deep research never starts from less evidence than it).
        """
        self.queries.append(query)
        f = self.funnel
        keep = keep or self.params.keep_per_search
        qvec = f.embedder.embed_one(query)
        table = f.library.chunks_table(CONTENT_CHUNKS)
        # Candidates as standard mode finds them (hybrid, which measured best).
        candidates = retrieval.search(table, qvec, query, limit=max(self.params.candidates, 2 * keep), papers=papers or None, hybrid=f.params.hybrid)
        candidates = [c for c in candidates if not is_bibliography(c.section) and c.passes(f.cutoffs.evidence)
                      and (c.paper_id, c.page, c.char_start) not in self._seen]
        scores = self._score(query, candidates[: self.params.candidates])
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
        started = time.monotonic()
        try:
            for i in range(0, len(todo), SCORE_BATCH):
                self._check_user_cancel()
                if self.budget.research_over():
                    break  # unscored candidates fall back to their vector score
                batch = todo[i : i + SCORE_BATCH]
                passages = "\n\n".join(f"[Source {n}] {c.paper_id}, page {c.page}\n{c.text.strip()[:1200]}" for n, c in enumerate(batch, 1))
                prompt = load_prompt("evidence_score.md").format(query=query, passages=passages)
                try:
                    raw = self._call([{"role": "user", "content": prompt}], max_tokens=90 * len(batch), json_schema=SCORE_SCHEMA)
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
            self.scoring_s += time.monotonic() - started
        return self._score_cache

    # -- model calls ---------------------------------------------------------------------
    def _chat_model(self) -> ChatModel:
        if self._chat is None:
            self._chat = self.funnel._load_chat()
            self._calibrate(self._chat)
        return self._chat

    def _calibrate(self, chat: ChatModel) -> None:
        """Time one short call, so the first real call can be predicted.

        llama.cpp cannot be interrupted while it reads a prompt, so a call that
        cannot finish before the deadline must not be started at all.
        """
        prompt = "Reply with the word ok. " + "context " * 150
        try:
            # A model's first call pays one-off costs (buffers, caches): seconds, on a laptop,
            # that would make every later call look that slow. It is not measured.
            chat.chat([{"role": "user", "content": "ok"}], max_tokens=1, temperature=0.0)
            started = time.monotonic()
            out = chat.chat([{"role": "user", "content": prompt}], max_tokens=4, temperature=0.0)
        except (ModelError, Cancelled):
            return
        self.meter.record(chat.count_tokens(prompt), max(1, chat.count_tokens(out)), time.monotonic() - started)

    def _call(self, messages, *, max_tokens: int, json_schema: dict[str, Any]) -> str:
        chat = self._chat_model()
        prompt_tokens = chat.count_tokens("\n".join(m["content"] for m in messages))
        max_tokens = min(max_tokens, max(64, chat.context_length - prompt_tokens - 16))
        kind = ",".join(sorted(json_schema.get("properties", {})))  # decisions, scores…: each writes its own length
        predicted = self.meter.predict_s(prompt_tokens, self.meter.expected_output(kind, max_tokens))
        if predicted > self.budget.research_remaining():
            raise ModelTimeout(f"not enough research time left for another model call (needs ~{predicted:.0f} s)")
        started = time.monotonic()
        out = chat.chat(messages, max_tokens=max_tokens, temperature=0.0, json_schema=json_schema,
                        cancelled=self._deadline_cancel(stop_at_total=False))
        self.meter.record(prompt_tokens, chat.count_tokens(out), time.monotonic() - started, kind=kind, max_tokens=max_tokens)
        return out

    def _deadline_cancel(self, *, stop_at_total: bool) -> IsCancelled:
        """Cancel in-flight work at the research deadline (or at the very end, for synthesis)."""

        def cancelled() -> bool:
            if self.user_cancelled():
                return True
            left = self.budget.remaining() if stop_at_total else self.budget.research_remaining()
            return left <= 0

        return cancelled

    def _synthesis_size(self, chat: ChatModel, remaining_s: float) -> tuple[int, int]:
        """Answer and evidence tokens that the model can process in the time left."""
        answer_max = self.funnel.params.answer_max_tokens
        if math.isinf(remaining_s):
            return answer_max, chat.context_length
        units = self.meter.rate() * max(5.0, remaining_s) * 0.8  # 20 % margin
        gen_cost = self.meter.gen_cost
        answer = int(min(answer_max, max(96, 0.4 * units / gen_cost)))
        evidence = int(max(300, units - gen_cost * answer - 400))
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
            "time_budget_s": self.budget.total_s,
            "time_used_s": round(self.budget.elapsed(), 1),
            "scoring_share": round(self.scoring_s / max(1e-6, self.budget.elapsed()), 3),
            "model_speed": self.meter.describe(),
            "stop_reason": self.stop_reason,
            "limits_hit": list(dict.fromkeys(self.limits_hit)),
            "exhausted": [s.topic for s in self.subquestions.values() if s.status == RETRY_EXHAUSTED],
        }

    def methodology_markdown(self) -> str:
        m = self.methodology()
        budget = "unlimited" if m["time_budget_s"] is None else f"{m['time_budget_s'] / 60:g} min"
        lines = [
            "## Methodology",
            "",
            f"- Mode: {m['mode']}; {m['rounds']} decision rounds (cap {m['iteration_cap']}).",
            f"- Searches ({len(m['queries'])}): " + "; ".join(f"“{q}”" for q in m["queries"]),
            f"- Papers read: {len(m['papers_read'])} ({', '.join(m['papers_read']) or 'none'}); evidence kept: {m['evidence_kept']} passages.",
            f"- Time: {m['time_used_s']:.0f} s used of {budget}; evidence scoring took {m['scoring_share']:.0%} of it.",
            *_speed_line(m["model_speed"]),
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
