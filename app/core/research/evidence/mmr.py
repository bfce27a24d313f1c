"""Maximal marginal relevance over a candidate list.

Picks items one at a time, each maximising
    lambda * relevance(item) - (1 - lambda) * max(similarity(item, picked))
so that near-duplicate passages (the same paragraph from overlapping chunks,
the same fact repeated) do not crowd out other evidence.

`groups` (a page, say) makes two candidates of one group at least `group_similarity` alike
whatever their vectors say: a second chunk of a page already picked comes after the other
pages' best chunks unless it is much more relevant (research/funnel.py, stage 2).
"""

from __future__ import annotations

import numpy as np


def mmr(relevance: np.ndarray, vectors: np.ndarray, k: int, lambda_: float,
        groups: list | None = None, group_similarity: float = 0.0) -> list[int]:
    """Indices of up to `k` candidates in MMR order.

    `relevance` is any score where higher is better, scaled to 0..1 by the
    caller so that it is comparable with cosine similarity; `vectors` are the
    candidates' L2-normalised embeddings (row i for candidate i); `groups` one
    hashable key per candidate, or None.
    """
    n = len(relevance)
    if n == 0 or k <= 0:
        return []
    relevance = np.asarray(relevance, dtype=np.float64)
    if lambda_ >= 1.0:
        return [int(i) for i in np.argsort(-relevance, kind="stable")[:k]]
    sims = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    if groups is not None and group_similarity > 0:
        number = {g: i for i, g in enumerate(dict.fromkeys(groups))}
        keys = np.asarray([number[g] for g in groups])
        sims = np.where(keys[:, None] == keys[None, :], np.maximum(sims, group_similarity), sims)
    picked: list[int] = []
    max_sim = np.full(n, -np.inf)
    available = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        redundancy = np.where(np.isfinite(max_sim), max_sim, 0.0)
        score = lambda_ * relevance - (1.0 - lambda_) * redundancy
        score[~available] = -np.inf
        best = int(np.argmax(score))
        picked.append(best)
        available[best] = False
        max_sim = np.maximum(max_sim, sims[best])
    return picked


def scale01(values: np.ndarray) -> np.ndarray:
    """Min-max scale to 0..1 (all-equal input maps to 1)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-12:
        return np.ones_like(values)
    return (values - lo) / (hi - lo)
