"""Evidence for a section: the default queries, then an agent's custom searches, to the deadline.

Each default query runs through deep research's `search_evidence` within an equal
share of the research time. Then the agent, held to DECISION_SCHEMA, says what
the evidence covers and misses and the next search; the code enforces the stops
(sufficient, the custom-search cap, no new query, the deadline) and, with
budgeted time left, keeps widening (the study's fields, the gaps named earlier).
Every search is a `SearchRecord` and is reported as `events.Round`. Then the
writer's evidence is chosen, diversity first (`select_evidence`). The mixin is
part of `SectionDrafter` (draft.py).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from ..errors import Cancelled, ModelError, ModelTimeout, ResearchDeskError
from ..paths import load_prompt
from ..records import Evidence
from ..research.deep.runner import Budget
from ..text.wording import lower_words
from .citations import _clip_chars
from .context import KEYS, LABELS
from .queries import FOCUS, QUERY_FIELDS, _join
from .records import SearchRecord

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "covered": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "missing": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "sufficient": {"type": "boolean"},
        "nextQuery": {"type": "string"},
    },
    "required": ["covered", "missing", "sufficient", "nextQuery"],
}


class DraftBudget(Budget):
    """Deep research's clock with a larger writing reserve and per-search slices.

    The reserve is the predicted cost of writing and checking a full-size
    section on this machine (before a prediction: min(2.5 min, 0.4 x budget),
    a section being longer than a research answer). A slice brings the research deadline forward for one
    search: deep research's scoring checks `research_over()` between batches
    and its model calls are cancelled at `research_remaining()`, so one
    default search stops there (its unscored candidates keep their vector
    scores) and the next default search and the agent still get their turn.
    """

    slice_end: float | None = None

    def design_reserve_s(self) -> float:
        return 150.0 if self.total_s is None else min(150.0, 0.4 * self.total_s)

    def research_remaining(self) -> float:
        left = super().research_remaining()
        if self.slice_end is not None:
            left = min(left, self.slice_end - self.clock())
        return left



class GatherMixin:
    """The default searches, the agent loop and widening, for `SectionDrafter`."""

    def gather(self, default: list[str]) -> None:
        self._chat_model()  # loads and measures the model: the plan needs its speed
        self.plan = {"answer_s": round(self.answer_cost_s(), 1), "round_s": round(self.round_cost_s(), 1)}
        if not self.room_for_research():
            # No room for the model to score a batch and still write: the evidence is what
            # retrieval ranks first (as standard mode ranks it), and the writer gets the time.
            self._limit("time (too short for scoring or agent searches)")
            self._note_draft(
                f"the budget leaves too little time on this machine for the model to score evidence (~{self.plan['round_s']:.0f} s "
                f"a batch) before writing (~{self.budget.reserve_s:.0f} s): evidence is ranked by retrieval alone")
            for query in default:
                self._search(query, "default", 0, score=False)
            return
        for n, query in enumerate(default, 1):
            if n > 1 and self.budget.research_over():
                self._limit("time")
                return
            # Each default search gets an equal share of the research time left,
            # counting the agent's custom searches as one more share.
            shares = len(default) - n + 1 + (1 if self.cap > 0 else 0)
            left = self.budget.research_remaining()
            self.budget.slice_end = None if math.isinf(left) or shares <= 1 else self.budget.clock() + left / shares
            try:
                self._search(query, "default", 0)
            finally:
                self.budget.slice_end = None
        while True:
            if self.budget.research_over():
                self._limit("time")
                return
            if self.widening:  # the agent has had its say: widen without asking again
                if not self._widen():
                    return
                continue
            if self.custom >= self.cap:
                self._limit(f"custom search cap ({self.cap})")
                if not self._time_to_fill():
                    return
                self.widening = True
                continue
            decision = self.decide_draft(self.custom + 1)
            if decision.get("timeout"):
                self._limit("time")
                return
            if decision.get("malformed"):
                self.stop_reason = "the model's decision was unusable; the agent stopped"
                if not self._time_to_fill():
                    return
                self.widening = True
                continue
            missing = [m.strip() for m in decision["missing"] if isinstance(m, str) and m.strip()]
            next_query = str(decision.get("nextQuery") or "").strip()
            query, gap = (None, "") if decision["sufficient"] else self._pick_query(next_query, missing)
            if query is None:
                self.stop_reason = ("the model judged the evidence sufficient" if decision["sufficient"] or not (missing or next_query)
                                    else "no new search: every proposed query had already been run")
                if not self._time_to_fill():
                    return
                self.widening = True
                continue
            self._search(query, "custom", self.custom + 1, gap=gap)

    def _time_to_fill(self) -> bool:
        """A budgeted run keeps searching to its research deadline, whatever the agent thinks of the evidence."""
        return self.budget.total_s is not None and not self.budget.research_over()

    def _widen(self) -> bool:
        """One more search with time left after the agent stopped; False when none is left.

        These searches are bounded by what there is to widen to (the study's fields, the
        gaps named earlier), not by the agent's custom-search cap.
        """
        query, gap = self._widening_query()
        if query is None:
            self._note_draft("the search had nothing left to widen to")
            return False
        self._search(query, "widen", len(self.searches) + 1, gap=gap)
        return True

    def _widening_query(self) -> tuple[str | None, str]:
        """The next search the code adds: each field of the study on its own (the section's
        fields first), then aspects the agent called missing earlier; never a repeat."""
        done = {_norm(s.query) for s in self.searches}
        fields = list(dict.fromkeys([k for combo in QUERY_FIELDS[self.section] for k in combo] + list(KEYS)))
        for key in fields:
            text = self.context.get(key).strip()
            query = _join([text]) if text else ""
            if len(_norm(query).split()) >= 2 and _norm(query) not in done:
                return query, f"{LABELS[key].lower()} on its own"
        for d in self.decisions:
            for m in d.get("missing", []):
                if isinstance(m, str) and len(_norm(m).split()) >= 2 and _norm(m) not in done:
                    return " ".join(m.split())[:300], m
        return None, ""

    def decide_draft(self, iteration: int) -> dict[str, Any]:
        """The agent's judgement of the evidence, held to DECISION_SCHEMA.

        One attempt: the grammar makes the reply valid JSON unless it is cut
        off, and the same prompt at temperature 0 would be cut off again.
        """
        left = self.budget.research_remaining()
        prompt = load_prompt("draft_decision.md").format(
            section_title=self.title,
            context=self.context.block(400),
            focus=FOCUS[self.section],
            evidence=self._digest(),
            papers=self._papers_line(),
            queries="; ".join(f"“{s.query[:160]}”" for s in self.searches) or "none",
            searches_left=self.cap - self.custom,
            time_remaining="unlimited" if math.isinf(left) else f"{max(0.0, left) / 60:.1f}",
        )
        decision: dict[str, Any]
        try:
            raw = self._call([{"role": "user", "content": prompt}], max_tokens=240, json_schema=DECISION_SCHEMA)
            decision = _validate_decision(json.loads(raw))
        except ModelTimeout:
            decision = {"covered": [], "missing": [], "sufficient": True, "nextQuery": "", "timeout": True}
        except (ValueError, TypeError, ModelError) as exc:
            self._note_draft(f"decision {iteration}: unusable reply ({getattr(exc, 'message', exc)})")
            decision = {"covered": [], "missing": [], "sufficient": True, "nextQuery": "", "malformed": True}
        decision["iteration"] = iteration
        self.decisions.append(decision)
        if self.rounds:  # the agent's judgement of the evidence, shown after the search it follows
            self._publish(decision=dict(decision))
        return decision

    def _pick_query(self, next_query: str, missing: list[str]) -> tuple[str | None, str]:
        """The model's next query, else the first missing aspect, that was not searched yet.

        A one-word "query" (small models echo field names) is no search and is skipped.
        """
        done = {_norm(s.query) for s in self.searches}
        for candidate, gap in [(next_query, missing[0] if missing else next_query)] + [(m, m) for m in missing]:
            if len(_norm(candidate).split()) >= 2 and _norm(candidate) not in done:
                return " ".join(candidate.split())[:300], gap
        return None, ""

    def _search(self, query: str, kind: str, iteration: int, gap: str = "", score: bool = True) -> list[Evidence]:
        number = len(self.searches) + 1
        self._start_round(number, query, kind)
        started = time.monotonic()
        note = "" if score else "ranked by retrieval alone"
        try:
            found = self.search_evidence(query, score=score)
        except Cancelled:
            if self.user_cancelled():
                raise
            found, note = [], "stopped at the time limit"
        except ResearchDeskError as exc:
            found, note = [], f"failed: {exc.message}"
            self._note_draft(f"search {query!r} {note}")
        record = SearchRecord(
            number=number, query=query, kind=kind, gap=gap, found=len(found),
            papers=sorted({e.paper_id for e in found}), seconds=round(time.monotonic() - started, 2), note=note,
        )
        self.searches.append(record)
        if kind == "custom":
            self.custom += 1
        self._publish(state="done", searched=bool(found) or not note.startswith("failed"), found=record.found,
                      papers=tuple(e.paper_id for e in found), seconds=record.seconds, gap=gap,
                      notes=(note,) if note else ())
        return found

    def _call(self, messages, *, max_tokens: int, json_schema: dict[str, Any]) -> str:
        # A call cut at the research deadline is a timeout, not a cancellation:
        # search_evidence then keeps its candidates with their vector scores
        # instead of losing the whole search.
        try:
            return super()._call(messages, max_tokens=max_tokens, json_schema=json_schema)
        except Cancelled:
            if self.user_cancelled():
                raise
            raise ModelTimeout("The research time ran out during a model call.") from None


    def _digest(self, limit: int = 8) -> str:
        best = sorted(self.pool, key=lambda e: -e.score)[:limit]
        if not best:
            return "(nothing yet)"
        return "\n".join(
            f"- [@{self.keys.get(e.paper_id, e.paper_id)}] page {e.page}: {_clip_chars(e.summary or e.text, 200)}" for e in best
        )

    def _papers_line(self) -> str:
        counts: dict[str, int] = {}
        for e in self.pool:
            counts[e.paper_id] = counts.get(e.paper_id, 0) + 1
        complete = sum(1 for p in self.library_papers.values() if p.complete)
        listed = ", ".join(f"{self.keys.get(pid, pid)} ({n} passages)" for pid, n in sorted(counts.items(), key=lambda t: -t[1]))
        return f"{len(counts)} of {complete} papers in the library" + (f": {listed}" if listed else "")


def _ident(e: Evidence) -> tuple[str, int, int]:
    return (e.paper_id, e.page, e.char_start)


def select_evidence(pool: list[Evidence], limit: int, max_per_paper: int = 2) -> list[Evidence]:
    """Diversity first: each paper's best passage, then passages a search needs, then the rest.

    1. The best passage of every paper, best papers first.
    2. A further passage of a paper when it is the best remaining evidence for a
       search that no chosen passage answers yet (the paper is needed for it).
    3. With room left, further passages by score, at most `max_per_paper` per paper.
    The order is the priority: a small context drops the tail first.
    """
    ranked = sorted(pool, key=lambda e: -e.score)
    chosen: list[Evidence] = []
    taken: set[tuple[str, int, int]] = set()
    per_paper: dict[str, int] = {}

    def take(e: Evidence) -> None:
        chosen.append(e)
        taken.add(_ident(e))
        per_paper[e.paper_id] = per_paper.get(e.paper_id, 0) + 1

    for e in ranked:
        if len(chosen) >= limit:
            break
        if e.paper_id not in per_paper:
            take(e)
    answered = {e.query for e in chosen}
    for e in ranked:
        if len(chosen) >= limit:
            break
        if _ident(e) not in taken and e.query not in answered:
            take(e)
            answered.add(e.query)
    for e in ranked:
        if len(chosen) >= limit:
            break
        if _ident(e) not in taken and per_paper.get(e.paper_id, 0) < max_per_paper:
            take(e)
    return chosen



def _validate_decision(d: Any) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise ValueError("the decision must be a JSON object")
    missing = [k for k in DECISION_SCHEMA["required"] if k not in d]
    if missing:
        raise ValueError(f"missing keys: {', '.join(missing)}")
    if not isinstance(d["missing"], list) or not isinstance(d["covered"], list):
        raise ValueError("covered and missing must be lists")
    d["sufficient"] = bool(d["sufficient"])
    return d


def _norm(query: str) -> str:
    return " ".join(lower_words(query))

