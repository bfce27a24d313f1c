"""`models calibrate`: a judge's cut-offs on P(yes), set on the labelled pairs by the check's own rule.

How sure a model is depends on the model: the starter says "yes" with P 0.65 where another says it
with 0.9. So each judge that gives probabilities reads the labelled pairs as an answer's check would
(the rules first; the model only where they leave the pair to it), and its cut-offs are chosen by
the rule the starter's were (labelled.choose_cutoffs). A judge without probabilities answers in
words: it is scored as it is, with no cut-offs to set (uncalibrated).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from ..callbacks import IsCancelled, check_cancelled
from ..models.base import ChatModel
from ..models.catalog import JudgeCutoffs
from ..records import Support
from ..research.check.support import DEFAULT_JUDGE, ORDER, judge_beginning, judge_text, model_verdicts, support_probability
from .labelled import Score, choose_cutoffs, load_rows, pairs_of, score, score_cuts

Progress = Callable[[int, int], None]  # (pairs read, pairs to read)
WORD_BATCH = 4  # pairs per call of a word judge: an answer's check asks about its few pairs in one call


@dataclass(frozen=True)
class Calibration:
    """A judge's calibration: its cut-offs (None: it answers in words) and how it agrees with the labels."""

    model: str
    cutoffs: JudgeCutoffs | None
    score: Score
    before: Score | None  # at the cut-offs it had (its catalog's, else the defaults), for comparison
    before_cutoffs: JudgeCutoffs | None
    seconds: float
    asked: int  # pairs the model read (the rest the rules decided)
    when: str = ""
    # P(yes) per labelled pair, None where the rules decided it: kept with the cut-offs, so a change
    # of the rule re-chooses them without reading the pairs again (labelled.choose_cutoffs).
    p_yes: tuple[float | None, ...] = ()

    @property
    def calibrated(self) -> bool:
        return self.cutoffs is not None

    def lines(self) -> list[str]:
        """The report a front end prints."""
        s = self.score
        how = (f"cut-offs: supported at P(yes) ≥ {self.cutoffs.supported:.2f}, partial ≥ {self.cutoffs.partial:.2f}"
               + (f"; the manuscript check says \"not found\" below {self.cutoffs.not_found:.2f}"
                  if self.cutoffs.not_found is not None else "")
               if self.cutoffs else "this judge gives no probabilities: it answers in words (uncalibrated)")
        out = [f"Judge: {self.model}", how,
               f"agreement with the hand labels: {s.agreement:.0%} of {s.pairs} pairs",
               f"misattributions passed as supported: {s.misattributions_passed} of {s.misattributions}"
               f" (all pairs labelled unsupported: {s.unsupported_passed} of {s.unsupported})",
               f"supported pairs accepted: {s.supported_accepted} of {s.supported}",
               f"{self.asked} pairs read by the model in {self.seconds:.0f} s"]
        if self.before is not None and self.before_cutoffs is not None and self.cutoffs is not None:
            out.append(f"before (cut at {self.before_cutoffs.supported:.2f}/{self.before_cutoffs.partial:.2f}): "
                       f"agreement {self.before.agreement:.0%}, misattributions passed {self.before.misattributions_passed}")
        return out


def calibrate(judge: ChatModel, *, progress: Progress | None = None, cancelled: IsCancelled | None = None,
              rows: list[dict] | None = None) -> Calibration:
    """Run the labelled pairs through `judge` and choose its cut-offs (raises Cancelled, ModelError)."""
    rows = rows if rows is not None else load_rows()
    pairs = pairs_of(rows)
    ask = [i for i, p in enumerate(pairs) if p.for_model]
    started = time.monotonic()
    p_asked: list[float | None] = [None] * len(pairs)
    words: list[str] | None = None
    judge.prefill(judge_beginning())
    for n, i in enumerate(ask):
        check_cancelled(cancelled)
        value = support_probability(judge, pairs[i].asked, judge_text(pairs[i]), cancelled=cancelled)
        if value is None:
            words = _word_verdicts(judge, pairs, ask, progress, cancelled)
            break
        p_asked[i] = value
        if progress is not None:
            progress(n + 1, len(ask))
    seconds = time.monotonic() - started
    when = datetime.now().isoformat(timespec="seconds")
    if words is not None:
        verdicts = [min(w or Support.PARTIAL.value, p.rule, key=ORDER.__getitem__) if p.for_model else p.rule
                    for w, p in zip(words, pairs)]
        return Calibration(judge.name, None, score(rows, verdicts), None, None, seconds, len(ask), when)
    before_cuts = judge.judge_cutoffs or DEFAULT_JUDGE
    cuts = choose_cutoffs(rows, pairs, p_asked)
    return Calibration(judge.name, cuts, score_cuts(rows, pairs, p_asked, cuts),
                       score_cuts(rows, pairs, p_asked, before_cuts), before_cuts, seconds, len(ask), when,
                       tuple(None if p is None else round(p, 4) for p in p_asked))


def _word_verdicts(judge: ChatModel, pairs, ask: list[int], progress: Progress | None,
                   cancelled: IsCancelled | None) -> list[str]:
    """The verdict in words per pair ("" where the model gave none), a few pairs a call."""
    out = [""] * len(pairs)
    for start in range(0, len(ask), WORD_BATCH):
        check_cancelled(cancelled)
        batch = ask[start : start + WORD_BATCH]
        for i, v in zip(batch, model_verdicts(judge, [pairs[i] for i in batch], cancelled=cancelled)):
            out[i] = v
        if progress is not None:
            progress(min(len(ask), start + WORD_BATCH), len(ask))
    return out


def rescored(model: str, p_yes: tuple[float | None, ...], cuts: JudgeCutoffs | None = None,
             rows: list[dict] | None = None) -> Calibration | None:
    """A calibration scored again from P(yes) kept with an earlier one, by today's rules and labels
    (no model reads anything): at `cuts`, else at the cut-offs the rule chooses. None where those
    values no longer fit: other pairs, or pairs the rules now leave to the model that had no P(yes) then."""
    rows = rows if rows is not None else load_rows()
    pairs = pairs_of(rows)
    if len(p_yes) != len(pairs) or any(p.for_model and v is None for p, v in zip(pairs, p_yes)):
        return None
    p_asked = [v if p.for_model else None for p, v in zip(pairs, p_yes)]
    cuts = cuts or choose_cutoffs(rows, pairs, p_asked)
    return Calibration(model, cuts, score_cuts(rows, pairs, p_asked, cuts), None, None, 0.0,
                       sum(p.for_model for p in pairs), p_yes=tuple(p_yes))
