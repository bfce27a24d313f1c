"""Deep research's report: the result's extra fields and the Methodology section.

Rounds run, queries issued, papers read, the model's measured speed, the plan,
which limits were hit, and what the support check found. The mixin is part of
`DeepResearch` (deep.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...records import Evidence, ResearchResult, Support
from ...text.wording import plural
from .progress import RETRY_EXHAUSTED


def standard_first(ranked: list[Evidence], standard: list[Evidence]) -> list[Evidence]:
    """Standard mode's passages first, in the funnel's order; then what research added, as ranked.

    The answer's first claim is written from the first passages alone, and the funnel ranks
    those best (the answer page among its passages for 99 % of questions). Round 0 is a plain
    hybrid search scored by the model, and ahead of the funnel's passages it pushed the answer
    page out of a 1-minute run's prompt for 2 questions in 3 (bench/deep.py, "recall in prompt").
    Focusing (focus.py) still picks the prompt's windows by their sentences, so a passage that
    research found and that answers better gets in.
    """
    def key(e: Evidence) -> tuple[str, int, int]:
        return (e.paper_id, e.page, e.char_start)

    # The funnel's own records lead, with its scores: focusing weighs a passage by its score
    # among the others, and round 0's copy of a passage carries the model's instead.
    pooled = {key(e) for e in ranked}
    lead: dict[tuple[str, int, int], Evidence] = {}
    for e in standard:
        if key(e) in pooled:
            lead.setdefault(key(e), replace(e, sentences=[]))
    return [*lead.values(), *(e for e in ranked if key(e) not in lead)]


class ReportMixin:
    """`methodology`, `methodology_markdown` and filling the result, for `DeepResearch`."""

    def _fill(self, result: ResearchResult) -> None:
        # Unless every passage has an LLM score (comparable across searches), the pool keeps
        # its order: the question's own search first, each search best first.
        scored = bool(self.pool) and all(e.llm_score is not None for e in self.pool)
        ranked = sorted(self.pool, key=lambda e: -e.score) if scored else list(self.pool)
        ranked = standard_first(ranked, self.standard_evidence)
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
    if result.withdrawn:
        n = len(result.withdrawn)
        line += (f"; {n} claim{'s' if n != 1 else ''} withdrawn, no cited passage supporting "
                 f"{'them' if n != 1 else 'it'} (named in the notes)")
    return [line + "."]

