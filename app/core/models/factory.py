"""Build chat and embedding models from the settings.

Backends are imported on demand so that choosing LM Studio never loads
llama.cpp's native library, and the other way round. Backends never import
this module: what they share lives in `base.py`.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from ..errors import ModelError
from ..settings import ModelConfig
from . import calibrations, catalog
from .base import ChatModel, EmbeddingModel, RemoteModel, require_json

__all__ = ["BACKENDS", "RemoteModel", "drop_ahead", "list_models", "load_ahead", "make_chat", "make_embedding",
           "require_json", "token_counter"]

log = logging.getLogger(__name__)

BACKENDS = ("llamacpp", "lmstudio", "openai")


def _unknown(cfg: ModelConfig) -> ModelError:
    return ModelError(
        f"Unknown model backend '{cfg.backend}'",
        f"choose one of {', '.join(BACKENDS)} in Settings",
    )


def make_chat(cfg: ModelConfig) -> ChatModel:
    """The chat model of `cfg`, with the support check's cut-offs calibrated for it: on this machine
    (`models calibrate`, calibrations.py), else in the catalog; None: support.py's defaults.
    A model `load_ahead` is loading for the same configuration is waited for and taken."""
    chat = _take_ahead("chat", cfg) or _chat_backend(cfg)
    chat.judge_cutoffs = calibrations.cutoffs_for(cfg, chat.name) or catalog.judge_cutoffs(cfg.catalog_id or cfg.path)
    return chat


class _Ahead:
    """Models loading one after another on a thread of their own; each is taken once, by the
    make_* call of its configuration (which waits for that model's load to end)."""

    def __init__(self, jobs: list[tuple[str, ModelConfig]]) -> None:
        self.keys = {kind: repr(cfg) for kind, cfg in jobs}
        self.models: dict[str, ChatModel | EmbeddingModel] = {}
        self.loaded = {kind: threading.Event() for kind, _ in jobs}
        self.thread = threading.Thread(target=self._load, args=(jobs,), name="models-ahead", daemon=True)
        self.thread.start()

    def _load(self, jobs: list[tuple[str, ModelConfig]]) -> None:
        for kind, cfg in jobs:
            try:
                self.models[kind] = _chat_backend(cfg) if kind == "chat" else _embedding_backend(cfg)
            except Exception as exc:  # noqa: BLE001 - the command's own load says what is wrong, where it is shown
                log.debug("loading the %s model ahead failed: %s", kind, exc)
            finally:
                self.loaded[kind].set()

    @property
    def spent(self) -> bool:
        """Done loading, and every model taken."""
        return not self.thread.is_alive() and not self.models

    def take(self, kind: str, cfg: ModelConfig, *, keep: bool = False) -> Any:
        """The model of `kind` once loaded, if loaded for `cfg` (one for other settings is closed);
        `keep`: lent, still to be taken."""
        if kind not in self.keys:
            return None
        self.loaded[kind].wait()
        if self.keys[kind] != repr(cfg):  # the settings changed meanwhile
            if (model := self.models.pop(kind, None)) is not None:
                model.close()
            return None
        return self.models.get(kind) if keep else self.models.pop(kind, None)


_ahead: _Ahead | None = None
_ahead_lock = threading.Lock()


def load_ahead(*, chat: ModelConfig | None = None, embedding: ModelConfig | None = None) -> None:
    """Start loading in-process models now, on a thread, the embedding model first, for a process
    that asks for them after seconds of other work. A command-line answer imports the core (~1.5 s
    on 2 cores) before it embeds the question, and finds its evidence (~1 s) before it asks for the
    chat model; llama.cpp reads the weights with the GIL released, so their loads (~0.2 s and
    ~1.5 s) no longer come on top. A server's model is the server's: nothing to do."""
    global _ahead
    jobs = [(kind, cfg) for kind, cfg in (("embedding", embedding), ("chat", chat)) if cfg is not None and cfg.backend == "llamacpp"]
    with _ahead_lock:
        if jobs and (_ahead is None or _ahead.spent):
            _ahead = _Ahead(jobs)


def _take_ahead(kind: str, cfg: ModelConfig, *, keep: bool = False) -> Any:
    with _ahead_lock:
        ahead = _ahead
    return ahead.take(kind, cfg, keep=keep) if ahead is not None else None


def drop_ahead() -> None:
    """Close the models loaded ahead that nobody took (the command failed before it asked)."""
    global _ahead
    with _ahead_lock:
        ahead, _ahead = _ahead, None
    if ahead is not None:
        ahead.thread.join()
        for model in ahead.models.values():
            model.close()


def _chat_backend(cfg: ModelConfig) -> ChatModel:
    if cfg.backend == "llamacpp":
        from .llamacpp import LlamaCppChat

        return LlamaCppChat(cfg)
    if cfg.backend == "lmstudio":
        from .lmstudio_backend import LMStudioChat

        return LMStudioChat(cfg)
    if cfg.backend == "openai":
        from .openai_compat import OpenAIChat

        return OpenAIChat(cfg)
    raise _unknown(cfg)


def token_counter(cfg: ModelConfig) -> Callable[[str], int] | None:
    """Counts text in the tokens of `cfg`'s chat model before the model is loaded; None for a server.

    Focusing cuts the first turn in the chat model's tokens before synthesis loads the model. A
    one-shot answer (`research-desk research`) never had it loaded then, and at 4 characters a
    token a row of figures costs far less than it does: the best passage's window overflowed the
    first turn and the table row focusing had put beside it was left out. A GGUF's vocabulary alone
    loads in ~0.2 s (the weights take seconds), so the first turn is cut as the model will read it."""
    if cfg.backend != "llamacpp" or not cfg.path or not Path(cfg.path).is_file():
        return None
    if (ahead := _take_ahead("chat", cfg, keep=True)) is not None:  # its vocabulary is loaded already
        return ahead.count_tokens
    return _vocabulary(str(cfg.path))


@lru_cache(maxsize=2)
def _vocabulary(path: str) -> Callable[[str], int] | None:
    from .llamacpp import _load

    try:
        llm = _load(Path(path), vocab_only=True)
    except ModelError as exc:  # the answer's own load will say what is wrong; focusing estimates meanwhile
        log.warning("counting in the chat model's tokens before it loads failed (%s); 4 characters a token", exc.message)
        return None
    return lambda text: len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def make_embedding(cfg: ModelConfig) -> EmbeddingModel:
    """The embedding model of `cfg` (the one `load_ahead` loaded for it, where it did)."""
    return _take_ahead("embedding", cfg) or _embedding_backend(cfg)


def _embedding_backend(cfg: ModelConfig) -> EmbeddingModel:
    if cfg.backend == "llamacpp":
        from .llamacpp_embedding import LlamaCppEmbedding

        return LlamaCppEmbedding(cfg)
    if cfg.backend == "lmstudio":
        from .lmstudio_backend import LMStudioEmbedding

        return LMStudioEmbedding(cfg)
    if cfg.backend == "openai":
        from .openai_compat import OpenAIEmbedding

        return OpenAIEmbedding(cfg)
    raise _unknown(cfg)


def list_models(cfg: ModelConfig) -> list[RemoteModel]:
    """Models the configured server offers ([] for llama.cpp, which uses a file)."""
    if cfg.backend == "lmstudio":
        from .lmstudio_backend import list_models as lms_list

        return lms_list(cfg.host)
    if cfg.backend == "openai":
        from .openai_compat import list_models as oai_list

        return oai_list(cfg.base_url, cfg.api_key)
    if cfg.backend == "llamacpp":
        return []
    raise _unknown(cfg)
