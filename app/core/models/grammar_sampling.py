"""Grammar-constrained sampling that checks the grammar against one token, not the vocabulary.

llama-cpp-python puts the grammar first in its sampler chain, so every token of a structured
reply runs the grammar over all ~150k candidates of the vocabulary before top-k even looks
at them: ~50 ms a token on a 2-core laptop, a third of the starter model's writing time.
`GrammarLastLlama` samples the way llama.cpp's own tools do (common_sampler): draw a token
without the grammar, ask the grammar about that one token, and only if it is refused run the
grammar over the whole vocabulary and draw again. The result follows the same distribution
(a token the grammar accepts is kept with its unconstrained probability; a refused draw is
replaced by one from the constrained, renormalised distribution), and nearly every token of
a JSON reply is one the model would have chosen anyway.

A reply given the figures its evidence prints is also held to them (figure_guard.py): a token the
guard refuses is redrawn like one the grammar refuses, from the tokens both allow.
"""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp
import numpy as np

from .figure_guard import FigureGuard

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


def _neutral_penalties(repeat_penalty: float, frequency_penalty: float, presence_penalty: float) -> bool:
    return repeat_penalty == 1.0 and frequency_penalty == 0.0 and presence_penalty == 0.0


def _grammar_sampler(llm: Any, grammar: Any) -> Any:
    """llama.cpp's grammar sampler for a LlamaGrammar (NULL if llama.cpp cannot parse it)."""
    return llama_cpp.llama_sampler_init_grammar(
        llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))


def _allows(sampler: Any, one: Any, token: int) -> bool:
    """Whether the grammar `sampler` accepts `token` next (`one`: a 1-element llama_token_data array)."""
    one[0].id, one[0].logit, one[0].p = token, 0.0, 0.0
    single = llama_cpp.llama_token_data_array(one, 1, -1, False)
    llama_cpp.llama_sampler_apply(sampler, ctypes.byref(single))
    return bool(np.isfinite(one[0].logit))


def _advance(sampler: Any, one: Any, tokens: list[int]) -> bool:
    """Move the grammar `sampler` past `tokens`, each in turn; False at the first it refuses."""
    for token in tokens:
        if not _allows(sampler, one, token):
            return False
        llama_cpp.llama_sampler_accept(sampler, token)
    return True


def accepts_opening(llm: Any, grammar: Any, tokens: list[int]) -> bool:
    """Whether `grammar` lets a reply begin with `tokens` (checked on a grammar of its own)."""
    sampler = _grammar_sampler(llm, grammar)
    if not sampler:
        return False
    try:
        return _advance(sampler, (llama_cpp.llama_token_data * 1)(), tokens)
    finally:
        llama_cpp.llama_sampler_free(sampler)


class _Chain:
    """A llama.cpp sampler chain of the usual truncations and a final draw (no grammar)."""

    def __init__(self, *, top_k: int, top_p: float, min_p: float, typical_p: float, temp: float, seed: int) -> None:
        self.ptr = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        add = lambda s: llama_cpp.llama_sampler_chain_add(self.ptr, s)  # noqa: E731 - the chain owns each sampler
        if temp <= 0.0:
            add(llama_cpp.llama_sampler_init_greedy())
            return
        add(llama_cpp.llama_sampler_init_top_k(top_k))
        add(llama_cpp.llama_sampler_init_typical(typical_p, 1))
        add(llama_cpp.llama_sampler_init_top_p(top_p, 1))
        add(llama_cpp.llama_sampler_init_min_p(min_p, 1))
        add(llama_cpp.llama_sampler_init_temp(temp))
        add(llama_cpp.llama_sampler_init_dist(seed))

    def free(self) -> None:
        if self.ptr is not None:
            llama_cpp.llama_sampler_free(self.ptr)
            self.ptr = None


class GrammarLastSampler:
    """Stands in for llama-cpp-python's `LlamaSampler` during one grammar-constrained generation."""

    # How many of the likeliest tokens a redraw asks the figure guard about before it gives up on
    # the guard for this token (the grammar still holds): a digit the evidence allows is among
    # the first few in practice.
    GUARD_SEARCH = 2000

    def __init__(self, llm: Any, grammar: Any, *, opening: list[int] | None = None,
                 figures: frozenset[str] | None = None, **chain: Any) -> None:
        self._n_vocab = llm.n_vocab()
        self._llm = llm
        self._pieces: dict[int, bytes] = {}
        self._top_k = chain["top_k"] if chain["temp"] > 0.0 else 1
        self._draw = _Chain(**chain)  # the unconstrained draw
        self._redraw = _Chain(**chain)  # the draw after the grammar has pruned the vocabulary
        self._grammar = _grammar_sampler(llm, grammar)
        if not self._grammar:
            self.close()
            # RuntimeError: the chat backend reports it as llama.cpp failing while generating
            # (a ValueError there means the prompt did not fit the context).
            raise RuntimeError("llama.cpp could not parse the grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._ids = np.arange(self._n_vocab, dtype=np.int32)
        self.redrawn = 0  # tokens the grammar refused (for the benchmark and the tests)
        # A reply opening the prompt already holds (reply_opening.py): the grammar moves past it.
        if not _advance(self._grammar, self._one, opening or []):
            self.close()
            raise RuntimeError("the grammar refuses the reply's opening")
        self.opened = len(opening or ())
        self.guard = None if figures is None else FigureGuard(
            figures, b"".join(self._piece(t) for t in opening or ()))

    def _piece(self, token: int) -> bytes:
        piece = self._pieces.get(token)
        if piece is None:
            piece = self._pieces[token] = self._llm.detokenize([token])
        return piece

    def _guards(self, token: int) -> bool:
        return self.guard is None or self.guard.allows(self._piece(token))

    def _allows(self, token: int) -> bool:
        return _allows(self._grammar, self._one, token)

    def sample(self, ctx: Any, idx: int) -> int:
        token = llama_cpp.llama_sampler_sample(self._draw.ptr, ctx.ctx, idx)
        if not (self._allows(token) and self._guards(token)):
            token = self._constrained(ctx, idx)
            self.redrawn += 1
        llama_cpp.llama_sampler_accept(self._grammar, token)
        if self.guard is not None:
            self.guard.accept(self._piece(token))
        return token

    def _constrained(self, ctx: Any, idx: int) -> int:
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(self._n_vocab,))
        data = np.empty(self._n_vocab, dtype=_TOKEN_DATA)
        data["id"], data["logit"], data["p"] = self._ids, logits, 0.0
        candidates = llama_cpp.llama_token_data_array(
            data.ctypes.data_as(llama_cpp.llama_token_data_p), self._n_vocab, -1, False)
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(candidates))
        if self.guard is not None:
            self._guard_candidates(data)
        llama_cpp.llama_sampler_apply(self._redraw.ptr, ctypes.byref(candidates))
        return int(candidates.data[candidates.selected].id)

    def _guard_candidates(self, data: np.ndarray) -> None:
        """Refuse, in `data` (the grammar already applied, in vocabulary order), the likeliest tokens
        the figure guard refuses, until the draw's top-k (greedy: one) are all ones it allows.
        Where none of the `GUARD_SEARCH` likeliest is allowed, the grammar alone decides."""
        logits = data["logit"]
        likeliest = np.argpartition(-logits, min(self.GUARD_SEARCH, self._n_vocab - 1))[:self.GUARD_SEARCH]
        refused, allowed = [], 0
        for i in likeliest[np.argsort(-logits[likeliest])]:
            if not np.isfinite(logits[i]):
                break
            if self.guard.allows(self._piece(int(i))):
                allowed += 1
                if allowed >= self._top_k:
                    break
            else:
                refused.append(i)
        if allowed:
            logits[refused] = -np.inf

    def close(self) -> None:
        self._draw.free()
        self._redraw.free()
        if getattr(self, "_grammar", None):
            llama_cpp.llama_sampler_free(self._grammar)
            self._grammar = None

    def __del__(self) -> None:
        self.close()


class GrammarLastLlama(llama_cpp.Llama):
    """A `Llama` whose grammar-constrained replies use `GrammarLastSampler`.

    `reply_opening`: tokens at the end of the next grammar-constrained prompt that the reply
    begins with (reply_opening.py); the next sampler moves its grammar past them, once.
    `reply_figures`: the figures the next grammar-constrained reply's strings may state
    (figure_guard.py); once, like the opening."""

    reply_opening: list[int] | None = None
    reply_figures: frozenset[str] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # With a draft model (prompt_lookup.py) set for a reply, `generate` samples every drafted
        # position of a batch, so those need logits; llama-cpp-python asks for them only with
        # logits_all, which would also compute them for every prompt token and keep a
        # context-sized copy (~2.5 GB for a 4,096-token context) for logprobs we never read.
        set_batch = self._batch.set_batch

        def set_batch_with_draft(batch: Any, n_past: int, logits_all: bool) -> None:
            set_batch(batch, n_past, logits_all)
            if self.draft_model is not None:
                n = len(batch)
                for i in range(max(0, n - 1 - self.draft_model.num_pred_tokens), n):
                    self._batch.batch.logits[i] = True

        self._batch.set_batch = set_batch_with_draft

    def _init_sampler(self, top_k: int = 40, top_p: float = 0.95, min_p: float = 0.05, typical_p: float = 1.0,
                      temp: float = 0.80, repeat_penalty: float = 1.0, frequency_penalty: float = 0.0,
                      presence_penalty: float = 0.0, mirostat_mode: int = 0, logits_processor: Any = None,
                      grammar: Any = None, **rest: Any) -> Any:
        opening, self.reply_opening = self.reply_opening, None
        figures, self.reply_figures = self.reply_figures, None
        if (grammar is not None and mirostat_mode == 0 and logits_processor is None
                and _neutral_penalties(repeat_penalty, frequency_penalty, presence_penalty)):
            return GrammarLastSampler(self, grammar, opening=opening, figures=figures, top_k=top_k, top_p=top_p, min_p=min_p,
                                      typical_p=typical_p, temp=temp, seed=self._seed)
        if opening:  # llama-cpp-python's own chain would start the grammar over, inside the reply
            raise RuntimeError("a reply opening needs the grammar-last sampler")
        return super()._init_sampler(
            top_k=top_k, top_p=top_p, min_p=min_p, typical_p=typical_p, temp=temp, repeat_penalty=repeat_penalty,
            frequency_penalty=frequency_penalty, presence_penalty=presence_penalty, mirostat_mode=mirostat_mode,
            logits_processor=logits_processor, grammar=grammar, **rest)
