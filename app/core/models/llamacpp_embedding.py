"""llama.cpp in-process sentence embeddings (llama-cpp-python, GGUF files): `LlamaCppEmbedding`.

The chat model's backend, the loading and its checks are in llamacpp.py; how llama.cpp's worker
threads wait is set by omp_policy.py, which the package imports before anything loads llama_cpp.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from ..errors import ModelError
from ..settings import ModelConfig
from .base import EmbeddingModel, l2_normalise
from .llamacpp import _check_gguf, _load, _threads

# A text this short (a question) is embedded on one thread. Its graph is ~100 tiny operations, each ending
# in a hand-over between the workers; with sleeping workers (omp_policy.py) that hand-over cost more than the
# work: MiniLM, 13-token query, 2 cores: 1 thread 7-9 ms every time, 2 passive threads 5 ms at best and
# 15-35 ms in most processes. One thread also leaves the other core to the full-text searches the funnel
# runs while the query is embedded (bench/scale.py prints the all-threads baseline). Longer texts (chunks at
# import) have enough work per operation to gain from every thread.
SINGLE_THREAD_TOKENS = 32



class LlamaCppEmbedding(EmbeddingModel):
    """A sentence-embedding GGUF (e.g. all-MiniLM-L6-v2) run in-process.

    Pooling comes from the GGUF (`<arch>.pooling_type`); a file that declares
    none gets mean pooling. Inputs longer than `max_tokens` (the configured
    context length, capped at the model's trained context: 512 for MiniLM)
    are truncated by tokens, keeping the closing [SEP]/EOS token, so
    embedding never fails on length; the tail of such a text does not count
    towards its vector.

    One text per llama_decode call. llama.cpp can put several texts in one call (a sequence
    id each, pooled per sequence), but for BERT-style models it then attends over the whole
    batch with a mask, so attention grows with the square of the batch, and it runs on ggml's
    plain f32 dot-product path (about a quarter of the time of one 200-token text already).
    Re-measured with llama-cpp-python 0.3.36 (bench/embedding.py, real chunks): 4 texts a call
    ran at 0.6x the chunks/s of one by one; one context per core (1 thread each) gained nothing
    measurable over one context on all threads.
        """

    def __init__(self, cfg: ModelConfig) -> None:
        import llama_cpp

        path = _check_gguf(cfg.path)
        n_threads = _threads(cfg)
        self._threads = n_threads
        self._threads_now = n_threads
        self._left = 0  # cores left to other work (leave_cores)
        self._lock = threading.Lock()

        def load(pooling: int, n_tokens: int) -> Any:
            # Non-causal models see a whole text in one ubatch, so a text
            # must fit one: n_ctx == n_batch == n_ubatch == longest input.
            return _load(
                path,
                embedding=True,
                pooling_type=pooling,
                n_ctx=n_tokens,
                n_batch=n_tokens,
                n_ubatch=n_tokens,
                n_threads=n_threads,
                n_threads_batch=n_threads,
            )

        wanted = cfg.context_length or 512
        # UNSPECIFIED: llama.cpp takes the pooling type from the GGUF.
        llm = load(llama_cpp.LLAMA_POOLING_TYPE_UNSPECIFIED, wanted)
        self.max_tokens = min(wanted, llm._model.n_ctx_train())
        pooling = llm.pooling_type()
        if pooling == llama_cpp.LLAMA_POOLING_TYPE_NONE or self.max_tokens < wanted:
            # Rare: no pooling type in the file, or a context beyond the
            # model's training (llama.cpp warns on stderr and wastes memory).
            llm.close()
            if pooling == llama_cpp.LLAMA_POOLING_TYPE_NONE:
                pooling = llama_cpp.LLAMA_POOLING_TYPE_MEAN
            llm = load(pooling, self.max_tokens)
        self._llm = llm
        self.name = path.stem
        self.dimension = llm.n_embd()
        # Models that close every input with [SEP]/EOS keep it when truncated.
        self._keeps_last = bool(llm._model.add_eos_token()) or bool(
            llama_cpp.llama_vocab_get_add_sep(llm._model.vocab)
        )

    def leave_cores(self, cores: int) -> None:
        self._left = max(0, cores)  # read at the next text: no reload

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text))  # vocabulary only: no lock needed

    def tokenizer_counter(self) -> Callable[[str], int]:
        """Word pieces of `text` as the model reads it ([CLS]/[SEP] included), not capped at
        `max_tokens`: a chunk sized with it fits the model whole."""
        llm = self._llm

        def count(text: str) -> int:
            return len(llm.tokenize(text.encode("utf-8"), add_bos=True, special=False))

        return count

    def _tokens(self, text: str) -> list[int]:
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) > self.max_tokens:
            if self._keeps_last:
                tokens = tokens[: self.max_tokens - 1] + tokens[-1:]
            else:
                tokens = tokens[: self.max_tokens]
        return tokens

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        with self._lock:
            for row, text in enumerate(texts):
                tokens = self._tokens(text)
                if tokens:  # a model that adds no special tokens may give none: zero row
                    out[row] = self._encode(tokens)
        return l2_normalise(out)

    def _encode(self, tokens: list[int]) -> np.ndarray:
        """The pooled vector of one text.

        Drives the Llama object's own batch and context: `Llama.embed` does
        the same but truncates by cutting off the closing [SEP] token.
        """
        import llama_cpp

        llm = self._llm
        threads = 1 if len(tokens) <= SINGLE_THREAD_TOKENS else max(1, self._threads - self._left)
        if threads != self._threads_now:  # a per-call setting of the context: no reload
            llama_cpp.llama_set_n_threads(llm._ctx.ctx, threads, threads)
            self._threads_now = threads
        llm._batch.reset()
        llm._batch.add_sequence(tokens, 0, True)
        llm._ctx.kv_cache_clear()
        try:
            llm._ctx.decode(llm._batch)
        except RuntimeError as exc:
            raise ModelError(f"llama.cpp failed while embedding: {exc}") from None
        finally:
            llm._batch.reset()
        ptr = llama_cpp.llama_get_embeddings_seq(llm._ctx.ctx, 0)
        return np.ctypeslib.as_array(ptr, shape=(self.dimension,)).copy()

    def close(self) -> None:
        llm, self._llm = getattr(self, "_llm", None), None
        if llm is not None:
            with self._lock:
                llm.close()
