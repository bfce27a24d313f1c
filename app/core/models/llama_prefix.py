"""Prompt beginnings llama.cpp has read once, kept so that no later prompt reads them again.

A `Llama` holds one KV cache and reuses only the longest prefix a new prompt shares
with the one before it. The fixed part of the answer prompt (system prompt and rules,
~190 tokens, about 5 s on a 2-core laptop) is lost as soon as any other prompt runs
in between: a support check, a summary, a draft. `WarmPrefixes` reads such a
beginning once (`remember`, e.g. while the user is still typing), saves the KV state
of that one sequence, and puts it back (`restore_for`) before a prompt that starts
the same way when the cache holds less of it. A saved state is small (a few MB for
a few hundred tokens); logits are not saved, since the first new token is always
evaluated again.

With a `PrefixStore` (prefix_store.py) a beginning read is also saved on disk, and a fresh
process loads it instead of reading it: the command line starts as warm as the window.
Only a beginning that extends none kept is saved: one that holds the question (new each
time) would fill the folder with states no later prompt uses.
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass
from typing import Any

from .base import ChatMessage
from .prefix_store import PrefixStore

log = logging.getLogger(__name__)

# Prompt beginnings kept (a few MB each): every answer uses the answer prompt's, the quote
# rating's system prompt, a rating beginning that holds its question (new each time) and the
# check's, so six leave room for the last question's and one more (deep research, the
# manuscript check). Dropped least recently used first: dropped in the order first read, four
# of them, the answer's beginning was read again every third answer (~3 s before the first
# claim with the starter model on 2 cores).
CAPACITY = 6
MIN_GAIN = 16  # tokens a restore must save over what the cache already holds to be worth it


@dataclass
class _Saved:
    tokens: list[int]
    state: bytes


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class WarmPrefixes:
    """Saved KV states of prompt beginnings for one `Llama` (call with its lock held)."""

    def __init__(self, llm: Any, store: PrefixStore | None = None) -> None:
        from llama_cpp import llama_chat_format

        self._llm = llm
        self._store = store
        self._saved: list[_Saved] = []
        template = llm.metadata.get("tokenizer.chat_template")
        self._format = None
        if template:
            eos, bos = llm.token_eos(), llm.token_bos()
            # The same formatter llama-cpp-python builds from the GGUF for create_chat_completion,
            # so the tokens here are the tokens the completion reads.
            self._format = llama_chat_format.Jinja2ChatFormatter(
                template=template,
                eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
                bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
                stop_token_ids=[eos],
            )

    @property
    def stop(self) -> list[str]:
        """The text that ends the assistant's turn (none without a chat template)."""
        return [self._format.eos_token] if self._format is not None and self._format.eos_token else []

    def tokens(self, messages: list[ChatMessage]) -> list[int] | None:
        """The prompt tokens create_chat_completion reads for `messages` (None: no chat template)."""
        if self._format is None:
            return None
        result = self._format(messages=list(messages))
        return self._llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)

    def cached(self, tokens: list[int]) -> int:
        """How many of `tokens` the KV cache holds now."""
        return common_prefix(self._llm.input_ids[: self._llm.n_tokens].tolist(), tokens)

    def remember(self, messages: list[ChatMessage]) -> int:
        """Read `messages` (the fixed beginning of later prompts) and keep its state; the tokens read."""
        tokens = self.tokens(messages)
        if not tokens:
            return 0
        for kept in self._saved:
            if kept.tokens == tokens:  # kept already: the prompt that needs it restores it
                self._touch(kept)
                return 0
        # A beginning that extends a kept one (the rating's system prompt and this question) is this
        # question's: it is neither looked for on disk nor saved there.
        own = not any(common_prefix(s.tokens, tokens) >= MIN_GAIN for s in self._saved)
        if own and self._store is not None and self.cached(tokens) < len(tokens):
            state = self._store.load(tokens)
            loaded = _Saved(list(tokens), state) if state is not None else None
            if loaded is not None and self._put(loaded):
                self._saved = self._saved[-(CAPACITY - 1):] + [loaded]
                log.debug("prefix cache: %d tokens loaded from disk instead of read", len(tokens))
                return 0
        self.restore_for(tokens)  # a kept beginning of this one is put back, not read again
        llm = self._llm
        have = self.cached(tokens)
        if have < len(tokens):
            llm.n_tokens = have
            llm.eval(tokens[have:])
        import llama_cpp

        size = llama_cpp.llama_state_seq_get_size(llm._ctx.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(llm._ctx.ctx, buf, size, 0)
        # string_at copies the bytes at C speed. bytes(buf[:written]) went through a Python list of
        # one int per byte: ~270 ms for 8 MB with the GIL held, which stalled the window's event
        # loop (the UI stall test's "early-import gap", 120-230 ms on a slow day) and every answer.
        state = ctypes.string_at(buf, written)
        self._saved = self._saved[-(CAPACITY - 1):] + [_Saved(list(tokens), state)]
        log.debug("prefix cache: kept %d tokens (%d KB)", len(tokens), written // 1024)
        if own and self._store is not None:
            self._store.save(list(tokens), state)
        return len(tokens) - have

    def _touch(self, kept: _Saved) -> None:
        """`kept` was used now: the last to be dropped."""
        self._saved.remove(kept)
        self._saved.append(kept)

    def kept(self) -> list[list[int]]:
        """The token lists of the beginnings kept, least recently used first."""
        return [list(s.tokens) for s in self._saved]

    def restore_for(self, tokens: list[int]) -> int:
        """Put back the saved beginning of a prompt (its `tokens`) if it saves reading; the tokens it saves."""
        if not self._saved or not tokens:
            return 0
        have = self.cached(tokens)
        # Of beginnings that share as much, the shortest: the general one (a system prompt) rather
        # than the last question's, which would otherwise be kept alive by every later question.
        best = max(self._saved, key=lambda s: (common_prefix(s.tokens, tokens), -len(s.tokens)))
        gain = common_prefix(best.tokens, tokens) - have
        if gain < MIN_GAIN:
            return 0
        if not self._put(best):
            return 0
        self._touch(best)  # only a state llama.cpp took back counts as used
        return gain

    def _put(self, saved: _Saved) -> bool:
        """Make the KV cache hold `saved` (and nothing else); False if llama.cpp refused its state."""
        import llama_cpp

        llm = self._llm
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # the whole cache: the saved sequence replaces it
        buf = (ctypes.c_uint8 * len(saved.state)).from_buffer_copy(saved.state)
        if llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, buf, len(saved.state), 0) == 0:
            log.warning("prefix cache: llama.cpp refused a saved state; the prompt is read in full")
            llm.n_tokens = 0
            return False
        llm.input_ids[: len(saved.tokens)] = saved.tokens
        llm.n_tokens = len(saved.tokens)  # generate() keeps the shared part and drops the rest
        llm._requires_eval = True  # the logits are not restored: the next token is evaluated anew
        return True
