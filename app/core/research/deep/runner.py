"""Deep research: an agentic loop under a time budget (DESIGN.md, "Deep research").

Round 0 scopes the library and scores evidence for the question. Each later
round asks the model for a loop decision (JSON held to a schema: gaps, next
search topic, …) and runs one `search_evidence` for the chosen gap. The code,
not the model, enforces the stop rules: no gaps left, the time budget (minus
the synthesis reserve), the iteration cap, every open gap exhausted after 3
failed attempts.

A deep run never returns less than a standard answer: stage 2's evidence is always in the pool,
and the synthesis reserve is the predicted cost of a standard answer on this machine. A budget
too small for one round plus the reserve answers as standard mode does, and says so; a larger one
is used to its research deadline (the search widens where the model sees no gaps). An answer cut
at the deadline keeps its complete claims, checked as any answer's.

The run reports through its `events.Task` (stages, evidence, tokens, claims; an `events.Round`
per change of a round; `events.Notice` for a failed search). The parts: budget.py (clock, speed),
plan.py (costs, model calls), search.py (scoring), loop.py, report.py (Methodology), progress.py
(rounds as records). This module assembles them and keeps every name callers import from here.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ... import events
from ...errors import Cancelled
from ...models.base import ChatModel
from ...records import ResearchResult
from ...settings import DeepParams
from ...text.wording import plural
from .budget import (  # noqa: F401 - re-exported: callers import these from deep
    CALL_OVERHEAD_S,
    CONSERVATIVE_RATE,
    Budget,
    ClockReading,
    SpeedMeter,
    parse_time,
)
from .loop import LOOP_SCHEMA, LoopMixin, SubQuestion  # noqa: F401
from .plan import PlanMixin
from .progress import RETRY_EXHAUSTED, RoundRecord  # noqa: F401
from .report import ReportMixin
from .search import SCORE_SCHEMA, SearchMixin  # noqa: F401
from ..funnel import Funnel

__all__ = ["CALL_OVERHEAD_S", "CONSERVATIVE_RATE", "Budget", "ClockReading", "SpeedMeter", "parse_time", "LOOP_SCHEMA",
           "SCORE_SCHEMA", "SubQuestion", "RETRY_EXHAUSTED", "RoundRecord", "DeepCancelled", "DeadlineToken", "DeepResearch"]


class DeepCancelled(Cancelled):
    """Cancelled during research; `partial` holds the evidence gathered so far."""

    def __init__(self, partial: ResearchResult) -> None:
        super().__init__(f"Deep research cancelled with {len(partial.evidence)} passages gathered.", "You can synthesize an answer from them.")
        self.partial = partial


class DeadlineToken(events.CancelToken):
    """The user's token, plus a deadline: cancelled when either says so (the final answer's cut)."""

    def __init__(self, user: events.CancelToken, deadline: Callable[[], bool]) -> None:
        super().__init__()
        self.user, self.deadline = user, deadline

    def cancel(self) -> None:
        self.user.cancel()

    @property
    def cancelled(self) -> bool:
        return self.user.cancelled or self.deadline()

    def __call__(self) -> bool:
        return self.cancelled

    def raise_if_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled()


class DeepResearch(LoopMixin, SearchMixin, PlanMixin, ReportMixin):
    def __init__(
        self,
        funnel: Funnel,
        params: DeepParams,
        *,
        task: events.Task | None = None,
        deep: bool = True,
        time_minutes: float | None = 5.0,
        clock: Callable[[], float] = time.monotonic,
        started_at: float | None = None,
    ) -> None:
        self.funnel = funnel
        # One channel for the whole run: the funnel's stages, tokens and claims go where the rounds go.
        self.task = task or funnel.task
        funnel.task = self.task
        self.params = params
        self.cap = params.max_iterations_deep if deep else params.max_iterations_standard
        self.mode = "deep" if deep else "loop"
        self.budget = Budget(None if time_minutes is None else time_minutes * 60.0, clock)
        if started_at is not None:  # the budget counts from when the user asked (model loading included)
            self.budget.start = started_at
        self.meter = SpeedMeter()
        self.pool = []
        self._seen: set[tuple[str, int, int]] = set()
        self._score_cache: dict[tuple[str, str], tuple[float, str]] = {}
        self.queries: list[str] = []
        self.decisions: list[dict[str, Any]] = []
        self.subquestions: dict[str, SubQuestion] = {}
        self.rounds: list[RoundRecord] = []
        self.limits_hit: list[str] = []
        self.stop_reason = ""
        self.scoring_s = 0.0
        self._chat: ChatModel | None = None
        self.shortlist: list[str] = []
        self.standard_evidence = []  # standard mode's stage 2: always in the pool
        self.answered_as_standard = False  # the budget had no room for a research round
        self.widened: list[str] = []  # searches the code added when the model saw no gaps but time was left
        self.answer_cut = 0  # claims kept when the deadline cut the answer (0: not cut)
        self.plan: dict[str, float] = {}
        self.budget.answer_s = self.answer_cost_s

    def resume(self, cancelled: "DeepResearch") -> None:
        """Take over what a cancelled run gathered, for the report written after it ("Synthesize from it")."""
        self.pool, self.queries, self.decisions = cancelled.pool, cancelled.queries, cancelled.decisions
        self.subquestions, self.rounds = cancelled.subquestions, cancelled.rounds
        self.limits_hit = [*cancelled.limits_hit, "cancelled by the user"]

    # -- public -----------------------------------------------------------------------
    def run(self, query: str) -> ResearchResult:
        query = " ".join(query.split())
        result = ResearchResult(query=query, mode=self.mode)
        f = self.funnel
        f.load_papers()
        f._started = time.monotonic()
        qvec, shortlist, notes = f.embed_and_scope(query)
        result.papers, result.messages = shortlist, notes
        self.shortlist = list(shortlist)
        self._start_round(0, query, "scope")  # the search on the question itself, as standard mode's
        # Standard mode's evidence, found exactly as standard mode finds it (no model, ~0.1 s):
        # the answer is drawn from at least this, so it is never worse than a standard one.
        self.standard_evidence, notes = f.gather(query, qvec, shortlist)
        result.messages += notes
        f.mark_unmentioned(result, query, self.standard_evidence)
        self._chat_model()  # loads and measures the model: the plan needs its speed
        self.plan = {"answer_s": round(self.answer_cost_s(), 1), "round_s": round(self.round_cost_s(), 1)}
        self._publish()  # the clock with the planned reserve
        if not self.room_for_research():
            return self._answer_as_standard(result, qvec)
        try:
            self._research(query, shortlist)
        except Cancelled as exc:
            if self.user_cancelled():
                self._fill(result)
                raise DeepCancelled(result) from exc
        self._close_round()
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
        outer = self.task

        def watch(event: events.Event) -> None:
            if isinstance(event, events.ClaimWritten):
                state["claims"] += 1
                state["pairs"] += max(1, len(getattr(event.claim, "sources", []) or []))
            elif isinstance(event, events.Stage) and event.name == "check":
                state["phase"] = "check"
            outer.emit(event)

        def past_deadline() -> bool:
            if not timed or state["phase"] == "check" or not state["claims"]:
                return False
            return self.budget.remaining() <= self.check_cost_s(state["pairs"])

        f.task = events.Task(sink=watch, token=DeadlineToken(outer.token, past_deadline), started=outer.started)
        messages_before = len(result.messages)
        try:
            f.synthesize_into(result)
        except Cancelled:
            if self.user_cancelled() or not result.claims:
                raise
            self._check_cut_answer(result, chat, messages_before)
        finally:
            f.task = outer
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
        from ..answer import synthesis

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
        from ..answer.synthesis import focus_into

        f = self.funnel
        self.answered_as_standard = True
        self.queries.append(result.query)
        self.pool = list(self.standard_evidence)
        self.stop_reason = (
            f"the time left ({max(0.0, self.budget.remaining()):.0f} s) is less than one research round "
            f"(~{self.round_cost_s():.0f} s) plus the answer (~{self.budget.reserve_s:.0f} s) on this machine, "
            "so it answered as standard mode does")
        self._limit("time (too short for a research round)")
        self._round_found(self.standard_evidence, reviewed=False)
        result.evidence = list(self.standard_evidence)
        if f.params.structured_answers:
            focus_into(f, result, qvec)
            self.task.emit(events.EvidenceFound(result.evidence))
        return self.synthesize(result)

    # -- small shared helpers -----------------------------------------------------------
    def user_cancelled(self) -> bool:
        """The user asked to stop (a deadline is no user's stop)."""
        return self.task.cancelled

    def _check_user_cancel(self) -> None:
        self.task.check()

    def _limit(self, name: str) -> None:
        self.limits_hit.append(name)
        if not self.stop_reason:
            self.stop_reason = f"limit reached: {name}"
