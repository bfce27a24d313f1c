"""Any OpenAI-compatible server (llama-server, llama_cpp.server, vLLM, LM Studio's /v1, …).

Through the `openai` SDK: it speaks the protocol (server-sent events, structured output,
embeddings, model lists), retries what is safe to retry and applies our timeouts. What is
ours here is the mapping of its failures onto the app's errors (a server that is not
running is one clear message with a hint, not a traceback) and the fallback for servers
that read a schema only in the older `json_object` form.

Cancelling or timing out mid-reply closes the stream; servers take a closed connection
as "stop generating".
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import openai

from ..callbacks import IsCancelled, OnToken
from ..errors import BackendUnavailable, Cancelled, ModelError, ModelNotFound, ModelTimeout
from ..settings import ModelConfig
from .base import ChatMessage, ChatModel, EmbeddingModel, RemoteModel, l2_normalise, require_json

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 3.0
DEFAULT_READ_TIMEOUT_S = 300.0  # longest silence between two streamed events
MAX_RETRIES = 2  # the SDK retries connection failures, 408/409/429 and 5xx with backoff
EMBED_REQUEST_SIZE = 64  # texts per /embeddings request
SERVER_HINT = "start the server, or change the URL in Settings"
TOP_LOGPROBS = 20  # the most alternatives OpenAI's API allows a token; yes and no are among them when either is likely


def normalise_base_url(base_url: str) -> str:
    """'http://host:8080' → 'http://host:8080/v1' (a bare host means the usual /v1)."""
    url = (base_url or "").strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url


def _unreachable(base_url: str) -> BackendUnavailable:
    err = BackendUnavailable(f"No OpenAI-compatible server answers at {base_url}", SERVER_HINT)
    err.action = "choose-model"  # not LM Studio: the fix is a URL or a server
    return err


def _timeout(read_s: float) -> openai.Timeout:
    return openai.Timeout(read_s, connect=CONNECT_TIMEOUT_S)


def _client(base_url: str, api_key: str, *, read_s: float = DEFAULT_READ_TIMEOUT_S, retries: int = MAX_RETRIES) -> openai.OpenAI:
    # The SDK insists on a key; local servers ignore it.
    return openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=_timeout(read_s), max_retries=retries)


def _error_text(exc: openai.APIStatusError) -> str:
    """The server's own error message, if it sent one."""
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body))
        if isinstance(err, dict):
            err = err.get("message", err)
        return str(err)[:300]
    if body is None:
        return exc.message[:300]
    return str(body)[:200]


def _is_connect_failure(exc: openai.APIConnectionError) -> bool:
    """True when nothing answered at all (refused, no route, connect timeout), not a reply cut short."""
    if not isinstance(exc, openai.APITimeoutError):
        return True
    return type(exc.__cause__).__name__ == "ConnectTimeout"


class _Server:
    """One pooled connection (an SDK client) to the server, shared by a model's calls."""

    def __init__(self, cfg: ModelConfig, *, read_s: float = DEFAULT_READ_TIMEOUT_S, retries: int = MAX_RETRIES) -> None:
        self.base_url = normalise_base_url(cfg.base_url)
        self.model = cfg.model
        self.client = _client(self.base_url, cfg.api_key, read_s=read_s, retries=retries)

    def failure(self, exc: Exception) -> ModelError:
        """The app's error for an SDK failure (or a transport error an older SDK lets through)."""
        if isinstance(exc, openai.APIStatusError):
            text = _error_text(exc)
            if exc.status_code == 404 and self.model and "model" in text.lower():
                return ModelNotFound(f"The server at {self.base_url} has no model '{self.model}'", SERVER_HINT)
            return ModelError(f"The server at {self.base_url} answered {exc.status_code}: {text}")
        if isinstance(exc, openai.APIConnectionError):
            if _is_connect_failure(exc):
                return _unreachable(self.base_url)
            return ModelTimeout(f"The server at {self.base_url} stopped answering.")
        if isinstance(exc, openai.APIError):  # an error event inside the stream
            return ModelError(f"The server at {self.base_url} failed: {exc.message}")
        if "Timeout" in type(exc).__name__:
            return ModelTimeout(f"The server at {self.base_url} stopped answering.")
        return ModelError(f"The connection to {self.base_url} failed: {exc}")

    def model_ids(self) -> list[str]:
        try:
            return [m.id for m in self.client.with_options(max_retries=0).models.list()]
        except openai.OpenAIError as exc:
            raise self.failure(exc) from None

    def close(self) -> None:
        self.client.close()


def _transport_error(exc: Exception) -> bool:
    """An HTTP-library error the SDK did not wrap (older releases let them out of a stream)."""
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2")


class OpenAIChat(ChatModel):
    gives_probabilities = True  # until the server answers a judge's question without logprobs

    def __init__(self, cfg: ModelConfig) -> None:
        self._server = _Server(cfg)
        # Fail now, with a clear message, if nothing listens at the URL.
        ids = self._server.model_ids()
        self.name = cfg.model or (ids[0] if ids else "")
        self.context_length = cfg.context_length
        # One request at a time, like the in-process backend: local servers
        # generate one reply at a time anyway, and the fallback flag is shared.
        self._lock = threading.Lock()
        # Set after the first schema request the server rejects, so later
        # calls go straight to the json_object form.
        self._schema_fallback = False

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
        figures: frozenset[str] | None = None,  # not held: the server samples (ChatModel.holds_figures)
    ) -> str:
        request: dict[str, Any] = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            # Without a configured name the server picks its model, as it did before the SDK.
            "model": self._server.model or openai.NOT_GIVEN,
        }
        deadline = time.monotonic() + timeout_s if timeout_s else None
        with self._lock:
            if json_schema is None:
                return self._stream(request, on_token, cancelled, deadline, timeout_s)[0]
            if not self._schema_fallback:
                schema_form = {"type": "json_schema", "json_schema": {"name": "reply", "schema": json_schema, "strict": True}}
                try:
                    text, finish = self._stream(
                        {**request, "response_format": schema_form}, on_token, cancelled, deadline, timeout_s, probe=True
                    )
                except _Rejected:
                    log.info("%s does not take response_format json_schema; using json_object", self._server.base_url)
                    self._schema_fallback = True
            if self._schema_fallback:
                # llama.cpp's servers read a schema inside the older json_object form (not in the SDK's types).
                fallback = {"response_format": {"type": "json_object", "schema": json_schema}}
                text, finish = self._stream({**request, "extra_body": fallback}, on_token, cancelled, deadline, timeout_s)
        require_json(text, finish == "length", max_tokens)
        return text

    def _stream(
        self,
        request: dict[str, Any],
        on_token: OnToken | None,
        cancelled: IsCancelled | None,
        deadline: float | None,
        timeout_s: float | None,
        *,
        probe: bool = False,
    ) -> tuple[str, str]:
        pieces: list[str] = []
        finish = ""
        read_s = min(timeout_s, DEFAULT_READ_TIMEOUT_S) if timeout_s else DEFAULT_READ_TIMEOUT_S
        # A schema probe is not retried: llama_cpp.server rejects the form with a 500,
        # which the SDK would otherwise retry as a server fault.
        client = self._server.client.with_options(timeout=_timeout(read_s), max_retries=0 if probe else MAX_RETRIES)
        try:
            stream = client.chat.completions.create(stream=True, **request)
            with stream:
                for chunk in stream:
                    if cancelled is not None and cancelled():
                        raise Cancelled()
                    if deadline is not None and time.monotonic() > deadline:
                        raise ModelTimeout(f"The model did not finish within {timeout_s:g} s.")
                    for choice in chunk.choices:
                        piece = choice.delta.content if choice.delta else None
                        if piece:
                            pieces.append(piece)
                            if on_token is not None:
                                on_token(piece)
                        finish = choice.finish_reason or finish
        except openai.APIStatusError as exc:
            if probe and _rejects_json_schema(exc):
                raise _Rejected() from None
            raise self._server.failure(exc) from None
        except openai.OpenAIError as exc:
            raise self._server.failure(exc) from None
        except Exception as exc:
            if not _transport_error(exc):
                raise  # ours (Cancelled, ModelTimeout) or a bug: not a connection failure
            raise self._server.failure(exc) from None
        return "".join(pieces), finish

    def choice_probabilities(self, messages: list[ChatMessage], choices: list[str], *,
                             cancelled: IsCancelled | None = None) -> dict[str, float] | None:
        # One token written greedily with its `top_logprobs`: the same next-token distribution the
        # in-process backend reads from its logits (llama.cpp's server, vLLM and LM Studio's /v1
        # return it). A server that returns none (or refuses the fields) judges in words from then on.
        if not self.gives_probabilities:
            return None
        if cancelled is not None and cancelled():
            raise Cancelled()
        request: dict[str, Any] = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": 1, "temperature": 0.0, "logprobs": True, "top_logprobs": TOP_LOGPROBS,
            "model": self._server.model or openai.NOT_GIVEN,
        }
        try:
            with self._lock:
                reply = self._server.client.chat.completions.create(**request)
        except openai.BadRequestError as exc:
            log.info("%s refuses logprobs (%s): the judge answers in words", self._server.base_url, _error_text(exc))
            self.gives_probabilities = False
            return None
        except openai.OpenAIError as exc:
            raise self._server.failure(exc) from None
        top = _top_logprobs(reply)
        if top is None:
            log.info("%s returns no logprobs: the judge answers in words", self._server.base_url)
            self.gives_probabilities = False
            return None
        return choice_mass(top, choices)

    def close(self) -> None:
        self._server.close()


def _top_logprobs(reply: Any) -> dict[str, float] | None:
    """The first written token's alternatives, token text → log-probability (None: the server sent none)."""
    choice = reply.choices[0] if reply.choices else None
    content = choice.logprobs.content if choice is not None and choice.logprobs is not None else None
    if not content or not content[0].top_logprobs:
        return None
    out: dict[str, float] = {}
    for alt in content[0].top_logprobs:
        out[alt.token] = max(out.get(alt.token, -math.inf), alt.logprob)
    return out


def choice_mass(top: dict[str, float], choices: list[str]) -> dict[str, float]:
    """Each choice's share of the probability among `choices`, from a server's top alternatives.

    As in process, a choice counts every spelling of its first token (Yes, yes, " yes", YES); a
    choice missing from the list is at most as likely as its least likely entry, so it gets that
    (a bound: the verdict errs towards doubt, never towards a confident yes)."""
    floor = math.exp(min(top.values()))
    mass = {c: 0.0 for c in choices}
    for token, logprob in top.items():
        word = token.strip().lower()
        for c in choices:
            if word == c.lower():
                mass[c] += math.exp(logprob)
    mass = {c: m or floor for c, m in mass.items()}
    total = sum(mass.values())
    return {c: m / total for c, m in mass.items()}


class _Rejected(Exception):
    """The server does not accept response_format json_schema."""


def _rejects_json_schema(exc: openai.APIStatusError) -> bool:
    """Did the server refuse the request because of the json_schema form?

    Servers say so differently: 400 or 422 from most, and llama_cpp.server
    answers its validation error with a 500 that names the field.
    """
    return exc.status_code in (400, 422) or "json_schema" in _error_text(exc)


class OpenAIEmbedding(EmbeddingModel):
    def __init__(self, cfg: ModelConfig) -> None:
        self._server = _Server(cfg)
        self._lock = threading.Lock()
        self.name = cfg.model
        self.max_tokens = cfg.context_length
        # One probe both checks the server and learns the vector size.
        self.dimension = int(self._embed_batch(["dimension probe"], probe=True).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        step = EMBED_REQUEST_SIZE
        parts = [self._embed_batch(texts[i : i + step]) for i in range(0, len(texts), step)]
        return l2_normalise(np.concatenate(parts))

    def _embed_batch(self, texts: list[str], *, probe: bool = False) -> np.ndarray:
        # The probe fails fast: a server that is not running is a message, not three slow retries.
        client = self._server.client.with_options(max_retries=0) if probe else self._server.client
        try:
            with self._lock:
                reply = client.embeddings.create(
                    input=texts, model=self._server.model or openai.NOT_GIVEN, encoding_format="float"
                )
        except openai.OpenAIError as exc:
            raise self._server.failure(exc) from None
        data = sorted(reply.data, key=lambda d: d.index)  # the spec allows any order
        if len(data) != len(texts):
            raise ModelError(
                f"The server at {self._server.base_url} returned {len(data)} vectors for {len(texts)} texts."
            )
        return np.asarray([d.embedding for d in data], dtype=np.float32)

    def close(self) -> None:
        self._server.close()


def list_models(base_url: str, api_key: str = "") -> list[RemoteModel]:
    """Model ids the server at `base_url` offers (GET /models)."""
    server = _Server(ModelConfig(backend="openai", base_url=base_url, api_key=api_key), read_s=CONNECT_TIMEOUT_S, retries=0)
    try:
        return [RemoteModel(id=i, loaded=True) for i in server.model_ids()]
    finally:
        server.close()
