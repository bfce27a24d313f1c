"""llama.cpp in-process backend (llama-cpp-python, GGUF files).

One `Llama` instance is not thread-safe (it owns a single KV cache and batch),
so every call that touches it holds the instance's lock. Generation streams
token by token; cancellation and the time limit are checked between tokens,
so a stop takes effect within one token (prompt evaluation itself is one
llama.cpp call and is not interrupted).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..callbacks import IsCancelled, OnToken
from ..errors import Cancelled, ModelError, ModelNotFound, ModelTimeout
from ..paths import prefix_states_dir
from ..settings import ModelConfig
from .base import ChatMessage, ChatModel, require_json
from .llama_prefix import WarmPrefixes
from .prefix_store import PrefixStore, model_key
from .prompt_lookup import PromptLookup
from .reply_opening import opened_completion

# llama.cpp's OpenMP wait policy is set by omp_policy.py, which the package imports first.

log = logging.getLogger(__name__)

SETUP_HINT = "run `research-desk models setup` or choose a GGUF file in Settings"

def _check_gguf(path: str) -> Path:
    """Fail early with a clear message instead of llama.cpp's generic ValueError."""
    if not path:
        raise ModelNotFound("No GGUF model file is configured.", SETUP_HINT)
    p = Path(path).expanduser()
    if not p.is_file():
        raise ModelNotFound(f"Model file not found: {p}", SETUP_HINT)
    try:
        with p.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelNotFound(f"Model file cannot be read: {p} ({exc.strerror})", SETUP_HINT) from None
    if magic != b"GGUF":
        raise ModelNotFound(f"Not a GGUF model file: {p}", SETUP_HINT)
    return p


def _threads(cfg: ModelConfig) -> int:
    return cfg.threads if cfg.threads and cfg.threads > 0 else (os.cpu_count() or 1)


# llama-cpp-python silences a load (verbose=False) by pointing the process's stdout and stderr
# descriptors at /dev/null and back. Two loads at once on two threads (a chat model loaded ahead
# beside the embedder, the window's warm-up beside a question) can restore each other's /dev/null:
# a command's whole output was lost that way. So one load at a time.
_LOADING = threading.Lock()


def _load(path: Path, *, constrained: bool = False, **kwargs: Any) -> Any:
    """Create a `Llama`, mapping load failures to ModelError naming the file.

    `constrained`: the model writes grammar-constrained replies, sampled grammar-last
    (grammar_sampling.py)."""
    try:
        import llama_cpp

        from .grammar_sampling import GrammarLastLlama
    except ImportError as exc:  # packaging problem, not a user error
        raise ModelError("llama-cpp-python is not installed.", "reinstall Research Desk") from exc
    try:
        # verbose=False also routes llama.cpp's own log lines away from stderr.
        with _LOADING:
            return (GrammarLastLlama if constrained else llama_cpp.Llama)(model_path=str(path), verbose=False, **kwargs)
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelError(
            f"llama.cpp could not load {path}: {exc}",
            "the file may be damaged or need a newer llama.cpp; " + SETUP_HINT,
        ) from None


class LlamaCppChat(ChatModel):
    """A chat GGUF run in-process; the chat template comes from the GGUF."""

    keeps_prefixes = True  # WarmPrefixes (llama_prefix.py)
    gives_probabilities = True
    holds_figures = True  # GrammarLastSampler's figure guard (figure_guard.py)

    def __init__(self, cfg: ModelConfig) -> None:
        path = _check_gguf(cfg.path)
        n_threads = _threads(cfg)
        self._llm = _load(
            path,
            constrained=True,
            n_ctx=cfg.context_length or 0,  # 0: the model's trained context
            n_threads=n_threads,
            n_threads_batch=n_threads,
        )
        self._lock = threading.Lock()
        self.name = path.stem
        self.context_length = self._llm.n_ctx()
        states = prefix_states_dir()
        self._prefixes = WarmPrefixes(self._llm, PrefixStore(states, model_key(path, self.context_length)) if states else None)
        self._choice_tokens: dict[str, set[int]] = {}
        self.drafts: PromptLookup | None = PromptLookup()  # replies copy their prompt (None: a token a pass)

    def count_tokens(self, text: str) -> int:
        # No lock: tokenizing reads only the vocabulary, so counting need not wait for a reply.
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def chat(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.2,
        on_token: OnToken | None = None,
        cancelled: IsCancelled | None = None,
        json_schema: dict[str, Any] | None = None,
        timeout_s: float | None = None,
        figures: frozenset[str] | None = None,
    ) -> str:
        deadline = time.monotonic() + timeout_s if timeout_s else None
        pieces: list[str] = []
        finish_reason: str | None = None
        with self._lock:
            tokens = self._prompt_tokens(messages)
            self._restore_prefix(tokens)
            self._llm.reply_figures = figures if json_schema is not None else None
            try:
                stream, opening = self._start(messages, tokens, json_schema, max_tokens=max_tokens, temperature=temperature)
            except ValueError as exc:
                raise ModelError(f"llama.cpp refused the request: {exc}") from None
            self._llm.draft_model = self.drafts  # read when the reply is generated, below
            chunks = _guarded(stream)
            try:
                for chunk in chunks:
                    if cancelled is not None and cancelled():
                        raise Cancelled()
                    if deadline is not None and time.monotonic() > deadline:
                        raise ModelTimeout(
                            f"The model did not finish within {timeout_s:g} s.",
                            "allow more time in Settings or use a smaller model",
                        )
                    choice = chunk["choices"][0]
                    piece = choice["text"] if "text" in choice else choice.get("delta", {}).get("content")
                    if piece:
                        if not pieces and opening:  # the opening streams with the first written token, so
                            piece = opening + piece  # a caller timing the first token still times the reading
                        pieces.append(piece)
                        if on_token is not None:
                            on_token(piece)
                    finish_reason = choice.get("finish_reason") or finish_reason
            finally:
                chunks.close()  # stops generation now; the Llama instance is ready for the next call
                self._llm.reply_opening = self._llm.reply_figures = None  # used by now, or never to be
                self._llm.draft_model = None  # other reads (choice_probabilities) want the last logits only
        text = "".join(pieces) or opening
        if json_schema is not None:
            require_json(text, finish_reason == "length", max_tokens)
        return text

    def _start(self, messages: list[ChatMessage], tokens: list[int] | None, json_schema: dict[str, Any] | None,
               **sampling: Any) -> tuple[Iterator[dict[str, Any]], str]:
        """The reply's chunks, and the opening the prompt holds for it ("": written whole; reply_opening.py).
        llama-cpp-python turns a schema into a GBNF grammar: the sampler emits only schema-valid JSON."""
        if json_schema is not None and tokens is not None:
            opened = opened_completion(self._llm, tokens, self._prefixes.stop, json_schema, **sampling)
            if opened is not None:
                return opened
        schema = {} if json_schema is None else {"response_format": {"type": "json_object", "schema": json_schema}}
        return self._llm.create_chat_completion(messages=list(messages), stream=True, **sampling, **schema), ""

    def choice_probabilities(self, messages: list[ChatMessage], choices: list[str], *,
                             cancelled: IsCancelled | None = None) -> dict[str, float] | None:
        # One forward pass over the prompt (what the cache does not hold) and a softmax over the
        # next token's logits; each choice counts its first token in the spellings a reply may use.
        ids = {c: self._first_tokens(c) for c in choices}
        with self._lock:
            if cancelled is not None and cancelled():
                raise Cancelled()
            tokens = self._prompt_tokens(messages)
            if tokens is None:
                return None
            self._restore_prefix(tokens)
            if len(tokens) >= self.context_length:
                raise ModelError("The prompt does not fit the model's context.",
                                 "raise the context length in Settings")
            llm = self._llm
            have = min(self._prefixes.cached(tokens), len(tokens) - 1)  # the last token gives the logits
            llm.n_tokens = have
            try:
                llm.eval(tokens[have:])
            except RuntimeError as exc:
                raise ModelError(f"llama.cpp failed while reading: {exc}") from None
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        mass = {c: float(probs[list(t)].sum()) for c, t in ids.items()}
        total = sum(mass.values())
        return {c: (m / total if total > 0 else 1 / len(choices)) for c, m in mass.items()}

    def _first_tokens(self, word: str) -> set[int]:
        if word not in self._choice_tokens:  # the same few words for every pair a judge reads
            variants = {word, word.lower(), word.capitalize(), word.upper()}
            out = set()
            for v in variants | {" " + v for v in variants}:
                t = self._llm.tokenize(v.encode("utf-8"), add_bos=False, special=False)
                if t:
                    out.add(t[0])
            self._choice_tokens[word] = out
        return self._choice_tokens[word]

    def prefill(self, messages: list[ChatMessage]) -> int:
        with self._lock:
            try:
                return self._prefixes.remember(messages)
            except (RuntimeError, ValueError) as exc:  # an optimisation only: the prompt is then read in full
                log.warning("llama.cpp could not pre-read a prompt beginning: %s", exc)
                return 0

    def _prompt_tokens(self, messages: list[ChatMessage]) -> list[int] | None:
        """The tokens create_chat_completion reads for `messages` (None: unknown, nothing is restored)."""
        try:
            return self._prefixes.tokens(messages)
        except (RuntimeError, ValueError) as exc:
            log.warning("llama.cpp could not format the prompt ahead: %s", exc)
            return None

    def _restore_prefix(self, tokens: list[int] | None) -> None:
        if tokens is None:
            return
        try:
            saved = self._prefixes.restore_for(tokens)
        except (RuntimeError, ValueError) as exc:
            log.warning("llama.cpp could not restore a prompt beginning: %s", exc)
            self._llm.n_tokens = 0  # whatever the cache holds now, read the prompt in full
            return
        if saved:
            log.debug("prefix cache: %d prompt tokens restored instead of read", saved)

    def reseed(self, seed: int) -> None:
        """Sample the next replies from `seed`: the same calls then write the same words (benchmarks)."""
        with self._lock:
            self._llm.set_seed(seed)
            self._llm.reset()  # a cached prompt's last logits differ in the last bits on some CPU builds

    def close(self) -> None:
        llm, self._llm = getattr(self, "_llm", None), None
        if llm is not None:
            with self._lock:
                llm.close()


def _guarded(stream: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """llama.cpp's errors while generating as ModelError (callers' own errors pass untouched)."""
    try:
        yield from stream
    except ValueError as exc:  # raised before the first token: the prompt is too long
        raise ModelError(
            f"The prompt does not fit the model's context: {exc}",
            "ask about fewer papers, or raise the context length in Settings",
        ) from None
    except RuntimeError as exc:
        raise ModelError(f"llama.cpp failed while generating: {exc}") from None
