"""Any OpenAI-compatible server (llama-server, llama_cpp.server, vLLM, LM Studio's /v1, …).

Plain httpx with hand-read server-sent events rather than the `openai`
package: httpx is already a dependency (the LM Studio SDK uses it), the
three endpoints we need are small, and the `openai` package would add
pydantic and a dozen modules to the frozen app for no gain. Reading the
stream ourselves also lets us stop between events: leaving the `stream`
block closes the connection, which servers take as "stop generating".
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Iterator
from urllib.parse import urlsplit

import httpx
import numpy as np

from ..callbacks import IsCancelled, OnToken
from ..errors import BackendUnavailable, Cancelled, ModelError, ModelNotFound, ModelTimeout
from ..settings import ModelConfig
from .base import ChatMessage, ChatModel, EmbeddingModel, l2_normalise
from .factory import RemoteModel, require_json

CONNECT_TIMEOUT_S = 3.0
DEFAULT_READ_TIMEOUT_S = 300.0  # longest silence between two streamed events
EMBED_REQUEST_SIZE = 64  # texts per /embeddings request
SERVER_HINT = "start the server, or change the URL in Settings"


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


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _error_text(response: httpx.Response) -> str:
    """The server's own error message, if it sent one."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    err = body.get("error", body.get("detail", body)) if isinstance(body, dict) else body
    if isinstance(err, dict):
        err = err.get("message", err)
    return str(err)[:300]


class _Server:
    """One pooled HTTP connection to the server, shared by a model's calls."""

    def __init__(self, cfg: ModelConfig) -> None:
        self.base_url = normalise_base_url(cfg.base_url)
        self.model = cfg.model
        self.http = httpx.Client(
            base_url=self.base_url,
            headers=_headers(cfg.api_key),
            timeout=httpx.Timeout(DEFAULT_READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S),
        )

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.http.request(method, path, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise _unreachable(self.base_url) from None
        except httpx.TimeoutException:
            raise ModelTimeout(f"The server at {self.base_url} stopped answering.") from None
        except httpx.HTTPError as exc:
            raise ModelError(f"Request to {self.base_url} failed: {exc}") from None
        self.check(response)
        return response

    def check(self, response: httpx.Response) -> None:
        if response.status_code == 404 and self.model and "model" in _error_text(response).lower():
            raise ModelNotFound(f"The server at {self.base_url} has no model '{self.model}'", SERVER_HINT)
        if response.status_code >= 400:
            raise ModelError(
                f"The server at {self.base_url} answered {response.status_code}: {_error_text(response)}"
            )

    def close(self) -> None:
        self.http.close()


class OpenAIChat(ChatModel):
    def __init__(self, cfg: ModelConfig) -> None:
        self._server = _Server(cfg)
        # Fail now, with a clear message, if nothing listens at the URL.
        models = self._server.request("GET", "/models").json().get("data", [])
        self.name = cfg.model or (models[0].get("id", "") if models else "")
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
    ) -> str:
        payload: dict[str, Any] = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
        }
        if self._server.model:
            payload["model"] = self._server.model
        deadline = time.monotonic() + timeout_s if timeout_s else None
        with self._lock:
            if json_schema is None:
                return self._stream(payload, on_token, cancelled, deadline, timeout_s)[0]
            if not self._schema_fallback:
                payload["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": json_schema, "strict": True},
                }
                try:
                    text, finish = self._stream(payload, on_token, cancelled, deadline, timeout_s)
                except _Rejected:
                    self._schema_fallback = True
            if self._schema_fallback:
                # llama.cpp's servers read a schema inside the older json_object form.
                payload["response_format"] = {"type": "json_object", "schema": json_schema}
                text, finish = self._stream(payload, on_token, cancelled, deadline, timeout_s)
        require_json(text, finish == "length", max_tokens)
        return text

    def _stream(
        self,
        payload: dict[str, Any],
        on_token: OnToken | None,
        cancelled: IsCancelled | None,
        deadline: float | None,
        timeout_s: float | None,
    ) -> tuple[str, str]:
        pieces: list[str] = []
        finish = ""
        read_timeout = min(timeout_s, DEFAULT_READ_TIMEOUT_S) if timeout_s else DEFAULT_READ_TIMEOUT_S
        timeout = httpx.Timeout(read_timeout, connect=CONNECT_TIMEOUT_S)
        base_url = self._server.base_url
        try:
            request = self._server.http.stream("POST", "/chat/completions", json=payload, timeout=timeout)
            with request as response:
                if response.status_code >= 400:
                    response.read()
                    if _rejects_json_schema(payload, response):
                        raise _Rejected()
                    self._server.check(response)
                for event in _sse_events(response):
                    if cancelled is not None and cancelled():
                        raise Cancelled()
                    if deadline is not None and time.monotonic() > deadline:
                        raise ModelTimeout(f"The model did not finish within {timeout_s:g} s.")
                    if "error" in event:
                        raise ModelError(f"The server at {base_url} failed: {event['error']}")
                    for choice in event.get("choices", []):
                        piece = (choice.get("delta") or {}).get("content")
                        if piece:
                            pieces.append(piece)
                            if on_token is not None:
                                on_token(piece)
                        finish = choice.get("finish_reason") or finish
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise _unreachable(base_url) from None
        except httpx.TimeoutException:
            raise ModelTimeout(f"The server at {base_url} stopped answering.") from None
        except httpx.HTTPError as exc:
            raise ModelError(f"The connection to {base_url} failed: {exc}") from None
        return "".join(pieces), finish

    def close(self) -> None:
        self._server.close()


class _Rejected(Exception):
    """The server does not accept response_format json_schema."""


def _rejects_json_schema(payload: dict[str, Any], response: httpx.Response) -> bool:
    """Did the server refuse the request because of the json_schema form?

    Servers say so differently: 400 or 422 from most, and llama_cpp.server
    answers its validation error with a 500 that names the field.
    """
    if payload.get("response_format", {}).get("type") != "json_schema":
        return False
    return response.status_code in (400, 422) or "json_schema" in _error_text(response)


def _sse_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """JSON payloads of a server-sent event stream, up to `data: [DONE]`."""
    for line in response.iter_lines():
        if not line.startswith("data:"):
            continue  # comments (": ping"), blank separators, event names
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            yield json.loads(data)
        except ValueError:
            raise ModelError(f"The server sent an unreadable event: {data[:100]}") from None


class OpenAIEmbedding(EmbeddingModel):
    def __init__(self, cfg: ModelConfig) -> None:
        self._server = _Server(cfg)
        self._lock = threading.Lock()
        self.name = cfg.model
        self.max_tokens = cfg.context_length
        # One probe both checks the server and learns the vector size.
        self.dimension = int(self._embed_batch(["dimension probe"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        step = EMBED_REQUEST_SIZE
        parts = [self._embed_batch(texts[i : i + step]) for i in range(0, len(texts), step)]
        return l2_normalise(np.concatenate(parts))

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"input": texts}
        if self._server.model:
            payload["model"] = self._server.model
        with self._lock:
            data = self._server.request("POST", "/embeddings", json=payload).json().get("data", [])
        if len(data) != len(texts):
            raise ModelError(
                f"The server at {self._server.base_url} returned {len(data)} vectors for {len(texts)} texts."
            )
        data = sorted(data, key=lambda d: d.get("index", 0))  # the spec allows any order
        return np.asarray([d["embedding"] for d in data], dtype=np.float32)

    def close(self) -> None:
        self._server.close()


def list_models(base_url: str, api_key: str = "") -> list[RemoteModel]:
    """Model ids the server at `base_url` offers (GET /models)."""
    url = normalise_base_url(base_url)
    try:
        response = httpx.get(f"{url}/models", headers=_headers(api_key), timeout=CONNECT_TIMEOUT_S)
    except httpx.HTTPError:
        raise _unreachable(url) from None
    if response.status_code >= 400:
        raise ModelError(f"The server at {url} answered {response.status_code}: {_error_text(response)}")
    return [RemoteModel(id=m["id"], loaded=True) for m in response.json().get("data", []) if "id" in m]
