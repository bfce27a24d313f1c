"""Prompt-lookup drafting: guess the reply's next tokens from the prompt it is copying.

A claim-bound answer repeats its evidence almost word for word ("an index class must support
the operations of adding and removing elements"), and the starter model on a 2-core laptop
writes ~10 tokens/s but reads ~60. So where the last tokens written also occur in the prompt,
the tokens that followed them there are a draft: llama-cpp-python's `generate` reads the draft
in one batch with the written token, samples each position as usual, and keeps the draft up to
the first token the sampler did not choose. The reply is the one the model would have written
token by token (each token is still drawn by the same sampler, grammar included); only fewer
passes are spent on it.

A draft that misses costs one batch read of its tokens, more than a single step. So a draft is
offered only after a match of `MIN_MATCH` tokens.
"""

from __future__ import annotations

import numpy as np

MIN_MATCH = 2  # tokens of the reply that must recur in the prompt before its continuation is drafted
MAX_MATCH = 6
DRAFT_TOKENS = 4  # tokens drafted at a time


class PromptLookup:
    """A draft model for `llama_cpp.Llama(draft_model=…)`: the continuation of the reply's last
    tokens where they last occurred earlier in the context."""

    def __init__(self, *, min_match: int = MIN_MATCH, max_match: int = MAX_MATCH,
                 num_pred_tokens: int = DRAFT_TOKENS) -> None:
        self.min_match = min_match
        self.max_match = max_match
        self.num_pred_tokens = num_pred_tokens  # the name llama-cpp-python's own draft models use
        self.offered = 0  # drafted tokens, for the benchmark
        self.calls = 0

    def __call__(self, input_ids: np.ndarray, /, **_: object) -> np.ndarray:
        self.calls += 1
        ids = np.asarray(input_ids)
        n = len(ids)
        for size in range(min(self.max_match, n - 1), self.min_match - 1, -1):
            tail = ids[n - size:]
            windows = np.lib.stride_tricks.sliding_window_view(ids[: n - 1], size)
            hits = np.flatnonzero((windows == tail).all(axis=1))
            if hits.size:
                # The latest occurrence: the one the reply is most likely copying. It ends before the
                # context's last token, so something always follows it.
                start = hits[-1] + size
                draft = ids[start : start + self.num_pred_tokens]
                self.offered += len(draft)
                return draft.astype(np.intc)
        return np.empty(0, dtype=np.intc)
