"""How much evidence stage 2 keeps: counted in tokens, not only in passages.

Stage 2 keeps its passages, best first in MMR order, while they fit a token budget, so that
smaller chunks do not mean less text (docs/lab/, "Evidence counted in tokens"). Tokens are ~4
characters each: cheap, and only the amount of text matters here. What the model reads is sized
later, by focusing (focus_tokens), whatever stage 2 keeps.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4
# A passage's tokens at ~4 characters each, before the budget is known to be filled (median
# of the r-papers and mixed-fields chunks: ~930 characters): how many candidates to fetch.
PASSAGE_TOKENS = 240


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def candidates_to_fetch(k: int, budget: int, per_passage: int) -> int:
    """Candidates stage 2 fetches: `per_passage` for each passage it may keep."""
    wanted = max(k, math.ceil(budget / PASSAGE_TOKENS)) if budget > 0 else k
    return wanted * per_passage


def within_tokens(texts: list[str], k: int, budget: int, order: list[int] | None = None) -> list[int]:
    """The first passages of `order` (default: 0..n-1; `texts` in that order) to keep: the
    first `k`, and the ones after them while the total stays within `budget` tokens.

    budget 0: exactly the first `k`, as when evidence was counted in passages."""
    order = list(range(len(texts))) if order is None else order
    if budget <= 0:
        return order[:k]
    kept, spent = 0, 0
    for text in texts:
        cost = tokens(text)
        if kept >= k and spent + cost > budget:
            break
        kept += 1
        spent += cost
    return order[:kept]
