"""LM Studio backend through its Python SDK (`lmstudio`), local or on another machine.

Before creating an SDK client we probe LM Studio's greeting URL ourselves
with a short timeout: the user needs one sentence saying LM Studio is not
running at the configured host and how to fix it, rather than an SDK
exception, and nothing listening should not start the SDK's websocket
thread at all. Everything the SDK raises later is mapped to our errors too.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import lmstudio as lms
import numpy as np

from ..callbacks import IsCancelled, OnToken
from ..errors import BackendUnavailable, Cancelled, ModelError, ModelNotFound, ModelTimeout
from ..settings import ModelConfig
from .base import ChatMessage, ChatModel, EmbeddingModel, RemoteModel, Tool, l2_normalise, require_json

START_HINT = (
    "Start LM Studio and enable its local server (Developer tab → Start Server), "
    "or change the host in Settings"
)
CONNECT_TIMEOUT_S = 2.0


def normalise_host(host: str) -> str:
    """'http://pc:1234/' → 'pc:1234'; the SDK wants a bare host:port."""
    host = (host or "localhost:1234").strip()
    for prefix in ("http://", "https://", "ws://", "wss://"):
        if host.startswith(prefix):
            host = host[len(prefix):]
    return host.rstrip("/")


def probe(host: str) -> str:
    """Return the normalised host if LM Studio answers there, else BackendUnavailable."""
    host = normalise_host(host)
    try:
        response = httpx.get(f"http://{host}/lmstudio-greeting", timeout=CONNECT_TIMEOUT_S)
    except httpx.HTTPError:
        # Refused, unknown host, timeout: all mean "not reachable" to the user.
        raise BackendUnavailable(f"LM Studio is not running at {host}", START_HINT) from None
    try:
        ok = response.status_code == 200 and response.json().get("lmstudio") is True
    except (ValueError, AttributeError):
        ok = False
    if not ok:
        raise BackendUnavailable(
            f"The server at {host} is not LM Studio", "check the host and port in Settings"
        )
    return host


# What the SDK and its transport raise; anything else (a bug, or an error
# from a caller's on_token callback) propagates unchanged.
SDK_ERRORS = (lms.LMStudioError, OSError, httpx.HTTPError)


def _open_client(host: str) -> lms.Client:
    return lms.Client(probe(host))


def _sdk_error(exc: Exception, host: str, model: str, kind: str = "llm") -> Exception:
    """Map an SDK exception to one of ours (one message, no traceback)."""
    if isinstance(exc, lms.LMStudioModelNotFoundError):
        if not model:  # asked for "whatever is loaded"
            return ModelNotFound(
                f"LM Studio at {host} has no {'chat' if kind == 'llm' else 'embedding'} model loaded",
                "load one in LM Studio, or choose a model in Settings",
            )
        return ModelNotFound(
            f"LM Studio at {host} has no model '{model}'",
            "download or load it in LM Studio, or choose another model in Settings",
        )
    if isinstance(exc, lms.LMStudioTimeoutError):
        return ModelTimeout(
            f"LM Studio at {host} stopped answering.",
            "the model may still be loading: try again, or check LM Studio",
        )
    if isinstance(exc, (lms.LMStudioWebsocketError, OSError)):
        return BackendUnavailable(f"The connection to LM Studio at {host} failed", START_HINT)
    return ModelError(f"LM Studio at {host}: {exc}")


class _Connection:
    """Client + model handle, reopened after LM Studio restarts."""

    def __init__(self, cfg: ModelConfig, kind: str) -> None:
        self.host = normalise_host(cfg.host)
        self.key = cfg.model
        self._kind = kind  # "llm" | "embedding"
        self._client: Any = None
        self.model: Any = None
        self.lock = threading.Lock()
        self.connect()

    def connect(self) -> Any:
        if self.model is None:
            client = _open_client(self.host)
            try:
                session = client.llm if self._kind == "llm" else client.embedding
                # No key: whatever model of that kind LM Studio has loaded.
                self.model = session.model(self.key) if self.key else session.model()
            except SDK_ERRORS as exc:
                client.close()
                raise _sdk_error(exc, self.host, self.key, self._kind) from None
            self._client = client
        return self.model

    def fail(self, exc: Exception) -> Exception:
        """Drop a broken connection so the next call reconnects."""
        mapped = _sdk_error(exc, self.host, self.key, self._kind)
        if isinstance(mapped, BackendUnavailable):
            self.close()
        return mapped

    def close(self) -> None:
        client, self._client, self.model = self._client, None, None
        if client is not None:
            client.close()


class LMStudioChat(ChatModel):
    def __init__(self, cfg: ModelConfig) -> None:
        self._conn = _Connection(cfg, "llm")
        self.name = cfg.model or self._conn.model.identifier
        try:
            self.context_length = int(self._conn.model.get_context_length())
        except SDK_ERRORS:
            self.context_length = cfg.context_length

    def count_tokens(self, text: str) -> int:
        try:
            with self._conn.lock:
                return int(self._conn.connect().count_tokens(text))
        except (ModelError, *SDK_ERRORS):
            return super().count_tokens(text)  # an estimate beats failing a size check

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
        history = {"messages": [{"role": m["role"], "content": m["content"]} for m in messages]}
        config = {"maxTokens": max_tokens, "temperature": temperature}
        response_format = None if json_schema is None else {"type": "json", "jsonSchema": json_schema}
        deadline = time.monotonic() + timeout_s if timeout_s else None

        def should_stop() -> bool:
            return bool(cancelled and cancelled()) or (deadline is not None and time.monotonic() > deadline)

        pieces: list[str] = []
        stop_reason = ""
        with self._conn.lock:
            try:
                model = self._conn.connect()
                stream = model.respond_stream(
                    history,
                    config=config,
                    response_format=response_format,
                    # Long prompts take a while before the first token: stop there too.
                    on_prompt_processing_progress=lambda _p: should_stop() and stream.cancel(),
                )
                try:
                    for fragment in stream:
                        if should_stop():
                            stream.cancel()
                            break
                        # Reasoning ("thinking") text is not part of the answer.
                        if fragment.reasoning_type != "none" or not fragment.content:
                            continue
                        pieces.append(fragment.content)
                        if on_token is not None:
                            on_token(fragment.content)
                    else:
                        stop_reason = str(stream.result().stats.stop_reason)
                finally:
                    stream.close()
            except SDK_ERRORS as exc:
                raise self._conn.fail(exc) from None
        if cancelled is not None and cancelled():
            raise Cancelled()
        if deadline is not None and time.monotonic() > deadline:
            raise ModelTimeout(f"The model did not finish within {timeout_s:g} s.")
        text = "".join(pieces)
        if json_schema is not None:
            require_json(text, stop_reason == "maxPredictedTokensReached", max_tokens)
        return text

    supports_tools = True

    def act(
        self,
        messages: list[ChatMessage],
        tools: list[Tool],
        *,
        max_rounds: int,
        max_tokens: int = 400,
        cancelled: IsCancelled | None = None,
    ) -> list[str]:
        """LM Studio's own tool-calling loop (`llm.act`); the last round may not call tools."""
        history = {"messages": [{"role": m["role"], "content": m["content"]} for m in messages]}
        texts: list[str] = []

        def check(*_args: Any) -> None:
            # The SDK swallows a callback's Exception; a BaseException ends the act() call.
            if cancelled is not None and cancelled():
                raise _StopAct()

        with self._conn.lock:
            try:
                model = self._conn.connect()
            except SDK_ERRORS as exc:
                raise self._conn.fail(exc) from None
        # Not under the lock: the tools run on the SDK's threads while act() waits, and
        # they may call this model themselves (the evidence scoring does).
        try:
            model.act(
                history,
                [lms.ToolFunctionDef(name=t.name, implementation=t.run, parameters={k: str for k in t.parameters},
                                     description=t.description + " " + " ".join(f"`{k}`: {v}." for k, v in t.parameters.items()))
                 for t in tools],
                max_prediction_rounds=max_rounds,
                config={"maxTokens": max_tokens, "temperature": 0.0},
                on_round_start=check,
                on_prediction_fragment=check,
                on_prompt_processing_progress=check,
                on_prediction_completed=lambda result: texts.append(result.content),
            )
        except _StopAct:
            self._conn.close()  # the stream was left mid-prediction: start clean next time
            raise Cancelled() from None
        except SDK_ERRORS as exc:
            raise self._conn.fail(exc) from None
        return texts

    def close(self) -> None:
        self._conn.close()


class _StopAct(BaseException):
    """Raised inside act()'s callbacks to stop it (see LMStudioChat.act)."""


class LMStudioEmbedding(EmbeddingModel):
    def __init__(self, cfg: ModelConfig) -> None:
        self._conn = _Connection(cfg, "embedding")
        self.name = cfg.model or self._conn.model.identifier
        try:
            self.max_tokens = int(self._conn.model.get_context_length())
        except SDK_ERRORS:
            self.max_tokens = cfg.context_length
        self.dimension = int(self.embed(["dimension probe"]).shape[1])

    def count_tokens(self, text: str) -> int:
        try:
            with self._conn.lock:
                return int(self._conn.connect().count_tokens(text))
        except (ModelError, *SDK_ERRORS):
            return super().count_tokens(text)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._conn.lock:
            try:
                vectors = self._conn.connect().embed(list(texts))
            except SDK_ERRORS as exc:
                raise self._conn.fail(exc) from None
        return l2_normalise(np.asarray(vectors, dtype=np.float32))

    def close(self) -> None:
        self._conn.close()


def list_models(host: str) -> list[RemoteModel]:
    """Models LM Studio at `host` has downloaded, for the settings dialog."""
    client = _open_client(host)
    try:
        loaded = {m.identifier for m in client.list_loaded_models()}
        return [
            RemoteModel(
                id=m.model_key,
                kind="embedding" if m.type == "embedding" else "llm",
                loaded=m.model_key in loaded,
            )
            for m in client.list_downloaded_models()
        ]
    except SDK_ERRORS as exc:
        raise _sdk_error(exc, normalise_host(host), "") from None
    finally:
        client.close()
