"""Deep research's clock and its model of the machine's speed.

`Budget` is the run's clock: the total budget, the reserve kept for the final
answer, and the research deadline between them. `SpeedMeter` learns how fast
the chat model reads and writes on this machine, so that a call that cannot
finish before the deadline is never started and the reserve is what the
answer really costs. The constants are what a standard answer reads and writes
besides its evidence (synthesis.py), used by the planner (deep_plan.py).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# What a standard answer reads and writes besides the evidence (synthesis.py): the prompt's system
# text and instructions (the question goes in twice), a second turn, and the support check's pairs
# and verdicts. A backend that keeps prompt beginnings reads the part before the question once per
# model; plan._answer_prompt_tokens counts what is left.
PROMPT_OVERHEAD_TOKENS = 340
QUESTION_TOKENS = 30  # a researcher's question (the 114 bench questions: 13-46 tokens, median 28)
SECOND_TURN_TOKENS = 120
JUDGE_PROMPT_TOKENS = 130  # the check's instructions
JUDGE_TOKENS_PER_PAIR = 110  # a claim and its quote (a sentence or two) in the word judge's prompt
# The probability judge reads the quote within up to 600 characters of its passage
# (support.JUDGE_CHARS): ~150 tokens of text, the claim and the question's tail.
PROBABILITY_JUDGE_TOKENS_PER_PAIR = 200
QUOTE_RATING_TOKENS = 60  # one key sentence rated before it is quoted: the sentence and the prompt's tail
VERDICT_TOKENS = 6  # one verdict in the check's JSON list ("partial", …)
CLAIM_TOKENS = 50  # one claim as the model writes it: a sentence, its sources, the JSON around them
# Claims the model writes in practice, not the `first_turn_claims` it may write: pricing the most
# overstates the reserve (bench/answers.py, bench/deep.py; docs/lab/). One that runs long is stopped
# at the budget's end after its next complete claim, so the overrun is one claim.
EXPECTED_FIRST_TURN_CLAIMS = 1.5
# A claim written again after the check faulted it (rewrite.py): the share of answers that try it,
# what that call reads (system prompt, question, key passages, cited sentences) and writes.
REWRITE_SHARE = 0.25
REWRITE_READ_TOKENS = 360
REWRITE_WRITE_TOKENS = 45
SOURCES_PER_CLAIM = 1.3  # (claim, cited passage) pairs per claim: what the check reads
CALL_OVERHEAD_S = 1.0  # per model call: the chat template, the JSON schema's grammar
PROBABILITY_CALL_S = 0.1  # per pair a probability judge reads: formatting and restoring its kept beginning
MIN_RESERVE_S = 5.0
MIN_ANSWER_TOKENS = 96  # the smallest answer a deadline shrinks to: one or two claims
MIN_EVIDENCE_TOKENS = 300
# Speed assumed before any call is measured (prompt-token equivalents per second): slow on
# purpose, so an unmeasured machine gets the larger reserve, never a cut-off answer.
CONSERVATIVE_RATE = 50.0



# -- time ------------------------------------------------------------------------
@dataclass
class Budget:
    """The run's clock: total budget, synthesis reserve, and the research deadline.

    The reserve is what the final answer needs on this machine (`answer_s`: the planner's
    prediction from the model's measured speed); research stops when the time left drops below
    it. Without a planner it is the design's first guess, min(1.5 min, 0.3 × budget).
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

    def reading(self) -> "ClockReading":
        """The clock now, as the rounds carry it to a front end."""
        return ClockReading(self.total_s, self.reserve_s, round(self.elapsed(), 2))


@dataclass(frozen=True)
class ClockReading:
    """The budget at one moment: total (None = unlimited), the answer's reserve, elapsed (s)."""

    total_s: float | None
    reserve_s: float
    elapsed_s: float


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
        """Tokens a call of this kind will likely write: the token limit until one has been seen
        (a call that writes more than expected is cut at the research deadline)."""
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
