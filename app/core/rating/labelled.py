"""The hand-labelled (claim, passage) pairs the support check's judge is calibrated and scored on.

`resources/judge/support-pairs.jsonl` ships with the app: 170 pairs labelled supported, partial
or unsupported (constructed pairs, a third of them misattributions; the starter model's own claims
on development questions; held-out claims). `bench/support.py` prints the full report on them;
`models calibrate` and `models rate` use the same pairs, the same verdicts and the same rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..models.catalog import JudgeCutoffs
from ..paths import resources_dir
from ..records import Evidence
from ..research.check.support import ORDER, Pair, check_specifics, quote_for, verdict_for

MISATTRIBUTIONS = {"wrong-number", "wrong-organism", "wrong-gene-or-entity", "wrong-method", "wrong-direction"}
# The cut-offs tried (supported, partial): bench/support.py's sweep.
CUTS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)
GRID = tuple((cs, cp) for cs in CUTS for cp in (0.2, 0.25, *CUTS) if cp <= cs)
NOT_FOUND_CUTS = (0.1, 0.15, 0.2, 0.25, *CUTS)  # the manuscript check's "not found" cuts tried
# The rule the starter's cut-offs were set by (research/check/support.py): no more than one misattribution,
# and one unsupported pair, in ten passed as supported.
MAX_PASSED = 0.1


def pairs_path() -> Path:
    return resources_dir() / "judge" / "support-pairs.jsonl"


def load_rows(path: Path | None = None) -> list[dict]:
    text = (path or pairs_path()).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def pairs_of(rows: list[dict]) -> list[Pair]:
    """The labelled rows as the check's pairs, quoted and capped by the rules as in an answer."""
    pairs = []
    for r in rows:
        e = Evidence(number=1, paper_id=Path(r["file"]).stem, page=int(r["page"]), page_label=str(r["page"]), section="", text=r["passage"], score=0.0)
        p = Pair(r["claim"], e)
        # As in an answer, the question is the context of the quote and the rules (its words weigh
        # less in choosing the quote; a figure the user gave is not the claim's to prove).
        p.quote = quote_for(p.claim, e, r.get("question", ""))
        finding = check_specifics(p.claim, e.text, context=r.get("question", ""), quote=p.quote)
        p.rule, p.judged, p.settled = finding.cap, finding.judged, finding.settled
        pairs.append(p)
    return pairs


def product(pair: Pair, p_yes: float | None, cuts: JudgeCutoffs) -> str:
    """The verdict as check_pairs combines them: the rules decide a pair they cap, unless they left
    part of the claim to the model (`Pair.judged`, P(yes) of that part); the stricter wins."""
    if not pair.for_model or p_yes is None:
        return pair.rule
    return min(verdict_for(p_yes, cuts), pair.rule, key=ORDER.__getitem__)


@dataclass(frozen=True)
class Score:
    """How a judge's verdicts compare with the hand labels."""

    agreement: float  # 3-way
    misattributions_passed: int
    misattributions: int
    supported_accepted: int
    supported: int
    pairs: int
    unsupported_passed: int = 0  # pairs labelled unsupported (misattributions among them) passed as supported
    unsupported: int = 0


def score(rows: list[dict], verdicts: list[str]) -> Score:
    def passed(keep) -> tuple[int, int]:
        picked = [v for r, v in zip(rows, verdicts) if keep(r)]
        return sum(v == "supported" for v in picked), len(picked)

    agree = sum(v == r["label"] for r, v in zip(rows, verdicts))
    return Score(agree / max(1, len(rows)), *passed(lambda r: r.get("kind") in MISATTRIBUTIONS),
                 *passed(lambda r: r["label"] == "supported"), len(rows), *passed(lambda r: r["label"] == "unsupported"))


def score_cuts(rows: list[dict], pairs: list[Pair], p_asked: list[float | None], cuts: JudgeCutoffs,
               idx: list[int] | None = None) -> Score:
    idx = list(range(len(rows))) if idx is None else idx
    return score([rows[i] for i in idx], [product(pairs[i], p_asked[i], cuts) for i in idx])


def choose_cutoffs(rows: list[dict], pairs: list[Pair], p_asked: list[float | None],
                   idx: list[int] | None = None) -> JudgeCutoffs:
    """The rule the check's cut-offs were set by: the best agreement among the cut-offs that pass
    at most one misattribution and one unsupported pair in ten as supported (ties: the lower cut)."""
    scored = {g: score_cuts(rows, pairs, p_asked, JudgeCutoffs(*g), idx) for g in GRID}
    within = [g for g, s in scored.items() if s.misattributions_passed <= MAX_PASSED * s.misattributions
              and s.unsupported_passed <= MAX_PASSED * s.unsupported] or list(GRID)
    best = max(within, key=lambda g: (scored[g].agreement, -g[0]))
    return JudgeCutoffs(*best, not_found=choose_not_found(rows, pairs, p_asked, best[1], idx))


def choose_not_found(rows: list[dict], pairs: list[Pair], p_asked: list[float | None], partial: float,
                     idx: list[int] | None = None) -> float:
    """The manuscript check's "not found" cut: the highest (up to `partial`) below which at most one in
    ten of the pairs labelled supported that the model reads fall. A writer told "not found" of a
    citation the paper does state stops trusting the check; between this cut and `partial` the
    verdict is partial, which asks them to look."""
    idx = list(range(len(rows))) if idx is None else idx
    supported = [p_asked[i] for i in idx if rows[i]["label"] == "supported" and pairs[i].for_model and p_asked[i] is not None]
    fits = [c for c in (0.0, *NOT_FOUND_CUTS) if c <= partial and sum(p < c for p in supported) <= MAX_PASSED * len(supported)]
    return max(fits)
