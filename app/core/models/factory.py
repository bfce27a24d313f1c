"""Build chat and embedding models from the settings.

Backends are imported on demand so that choosing LM Studio never loads
llama.cpp's native library, and the other way round. Backends never import
this module: what they share lives in `base.py`.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..errors import ModelError
from ..settings import ModelConfig
from . import calibrations, catalog
from .base import ChatModel, EmbeddingModel, RemoteModel, require_json

__all__ = ["BACKENDS", "RemoteModel", "list_models", "make_chat", "make_embedding", "require_json", "token_counter"]

log = logging.getLogger(__name__)

BACKENDS = ("llamacpp", "lmstudio", "openai")


def _unknown(cfg: ModelConfig) -> ModelError:
    return ModelError(
        f"Unknown model backend '{cfg.backend}'",
        f"choose one of {', '.join(BACKENDS)} in Settings",
    )


def make_chat(cfg: ModelConfig) -> ChatModel:
    """The chat model of `cfg`, with the support check's cut-offs calibrated for it: on this machine
    (`models calibrate`, calibrations.py), else in the catalog; None: support.py's defaults."""
    chat = _chat_backend(cfg)
    chat.judge_cutoffs = calibrations.cutoffs_for(cfg, chat.name) or catalog.judge_cutoffs(cfg.catalog_id or cfg.path)
    return chat


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
