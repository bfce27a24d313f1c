"""Deep research's loop: rounds of model decisions and searches, with the stop rules in code.

Each round the model returns a decision held to LOOP_SCHEMA (gaps, next search
topic, …) and one `search_evidence` runs for the chosen gap. The code enforces
the stops: no gaps, the research deadline, the iteration cap, every gap
exhausted after its attempts. With budgeted time left once the model stops, the
search widens to the deadline. LM Studio models drive the same search as a tool.

Every round is a `RoundRecord` (deep_progress.py), emitted as `events.Round`
whenever it changes. The mixin is part of `DeepResearch` (deep.py).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from typing import Any

from ... import events
from ...errors import Cancelled, ModelError, ModelTimeout, ResearchDeskError
from ...models.base import ChatModel, Tool
from ...paths import load_prompt
from ...records import Evidence
from .progress import RETRY_EXHAUSTED, RoundRecord, exhausted_note

log = logging.getLogger(__name__)

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


@dataclass
class SubQuestion:
    topic: str
    attempts: int = 0
    found: int = 0
    status: str = "open"  # open | answered | RETRY_EXHAUSTED


class LoopMixin:
    """The decision loop, widening and the tool-calling loop of `DeepResearch`."""

    def _research(self, query: str, shortlist: list[str]) -> None:
        started, before = self.budget.clock(), len(self.pool)
        try:
            self.search_evidence(query, papers=shortlist, keep=self.funnel.params.k_evidence)
        finally:
            self._include_standard()
            self._round_found(self.pool[before:], reviewed=True, started=started)
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
            self._start_round(iteration, topic, "gap")
            sub = self.subquestions.setdefault(topic.lower(), SubQuestion(topic))
            sub.attempts += 1
            found = self._search_round(topic, reviewed=True)
            sub.found += len(found)
            if found:
                sub.status = "answered"
            elif sub.attempts >= self.params.max_attempts_per_question:
                sub.status = RETRY_EXHAUSTED
                self._mark_exhausted(sub)
        if not self.stop_reason:
            self._limit("iteration cap")

    def _widen_to_deadline(self, query: str, iteration: int) -> None:
        """With budgeted time left after the model's rounds, keep searching to the research deadline:
        the user gave the time for a thorough search. The model's decision stands as the stop
        reason, so these searches need no further decisions (`_widening`). Without a budget the
        design's stop rules stand and nothing is added."""
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
            self._start_round(iteration, label, "widen", query=topic)
            self._search_round(topic, papers=papers, label=label, reviewed=False)

    def _search_round(self, topic: str, *, papers: list[str] | None = None, label: str = "", reviewed: bool) -> list[Evidence]:
        """The current round's search; a failure is noted under the round and the loop goes on."""
        started = self.budget.clock()
        try:
            found = self.search_evidence(topic, papers=papers, label=label)
        except (ResearchDeskError, Cancelled) as exc:
            if self.user_cancelled():
                raise
            self._note(f"search for {label or topic!r} failed: {getattr(exc, 'message', exc)}")
            self._publish(state="reviewing" if reviewed else "done", seconds=round(self.budget.clock() - started, 2))
            return []
        self._round_found(found, reviewed=reviewed, started=started)
        return found

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
            self.task.emit(events.EvidenceFound(list(self.pool)))

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
            self._start_round(calls, topic, "tool")
            sub.attempts += 1
            found = self._search_round(topic, reviewed=False)
            sub.found += len(found)
            sub.status = "answered" if found else (RETRY_EXHAUSTED if sub.attempts >= self.params.max_attempts_per_question else "open")
            self._mark_exhausted(sub)
            decision = {"iteration": calls, "summary": "", "gaps": [topic], "shouldContinue": True,
                        "nextSearchTopic": topic, "via": "tool call",
                        "timeRemainingMinutes": round(max(0.0, self.budget.research_remaining()) / 60, 2) if self.budget.total_s else None}
            self.decisions.append(decision)
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
            log.warning("round %d: the model's decision was malformed twice", iteration)
            self.task.notice(f"Round {iteration}: the model's decision was malformed twice; treated as no further gaps.")
            if self.rounds:
                self._publish(notes=self.rounds[-1].noted("The model's decision was malformed twice; treated as no further gaps.").notes)
            decision = {"iteration": iteration, "summary": "", "gaps": [], "shouldContinue": False,
                        "nextSearchTopic": "", "timeRemainingMinutes": 0.0, "malformed": True}
        decision["iteration"] = iteration  # the code's count, whatever the model wrote
        decision["timeRemainingMinutes"] = round(max(0.0, self.budget.research_remaining()) / 60, 2) if self.budget.total_s else None
        self.decisions.append(decision)
        self._review(decision)
        return decision


    # -- rounds as events -----------------------------------------------------------------
    def _start_round(self, index: int, topic: str, kind: str, query: str = "") -> None:
        self._close_round()
        self.rounds.append(RoundRecord(index, topic, kind=kind, query=query or topic))
        self._publish()

    def _publish(self, **changes: Any) -> None:
        """Change the current round (with the clock now) and emit it."""
        if not self.rounds:
            return
        record = replace(self.rounds[-1], clock=self.budget.reading(), **changes)
        self.rounds[-1] = record
        self.task.emit(events.Round(record.index, record))

    def _round_found(self, kept: list[Evidence], *, reviewed: bool, started: float | None = None) -> None:
        """The current round's search is over: what it found; it awaits the model's review or ends."""
        if not self.rounds:
            return
        r = self.rounds[-1]
        seconds = r.seconds if started is None else round(self.budget.clock() - started, 2)
        self._publish(searched=True, found=r.found + len(kept), papers=r.papers + tuple(e.paper_id for e in kept),
                      state="reviewing" if reviewed else "done", seconds=seconds)

    def _close_round(self) -> None:
        if self.rounds and self.rounds[-1].state in ("searching", "reviewing"):
            self._publish(state="done")

    def _review(self, decision: dict[str, Any]) -> None:
        """The model's decision reviews the round before it: its summary, the gaps left, a verdict."""
        if not self.rounds or self.rounds[-1].gaps_left is not None:
            return
        gaps = tuple(" ".join(g.split()) for g in decision.get("gaps", []) if isinstance(g, str) and g.strip())
        summary = decision.get("summary")
        verdict = ""
        if not decision.get("malformed"):
            if not gaps:
                verdict = "No gaps left: the search ends here."
            elif decision.get("shouldContinue") is False:
                verdict = "The model judged the evidence sufficient: the search ends here."
        self._publish(review=" ".join(summary.split()) if isinstance(summary, str) else "", gaps_left=gaps,
                      verdict=verdict, state="done")

    def _mark_exhausted(self, sub: SubQuestion) -> None:
        if sub.status == RETRY_EXHAUSTED and self.rounds:
            self._publish(notes=self.rounds[-1].noted(exhausted_note(sub.attempts)).notes)

    def _note(self, message: str) -> None:
        """Something went wrong in a round and the run goes on: under the round, and as a notice."""
        log.info("deep research: %s", message)
        if self.rounds:
            self._publish(notes=self.rounds[-1].noted(message[:1].upper() + message[1:]).notes)
        self.task.notice(message)

    def _evidence_digest(self, limit: int = 12) -> str:
        best = sorted(self.pool, key=lambda e: -e.score)[:limit]
        if not best:
            return "(nothing yet)"
        return "\n".join(f"- {e.paper_id}, page {e.page}: {(e.summary or e.text)[:220].strip()}" for e in best)


def _validate_decision(d: Any) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise ValueError("the decision must be a JSON object")
    missing = [k for k in LOOP_SCHEMA["required"] if k not in d]
    if missing:
        raise ValueError(f"missing keys: {', '.join(missing)}")
    if not isinstance(d["gaps"], list):
        raise ValueError("gaps must be a list")
    return d

