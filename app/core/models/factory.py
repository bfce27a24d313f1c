"""Build chat and embedding models from the settings.

Backends are imported on demand so that choosing LM Studio never loads
llama.cpp's native library, and the other way round. Backends never import
this module: what they share lives in `base.py`.
"""

from __future__ import annotations

from ..errors import ModelError
from ..settings import ModelConfig
from . import calibrations, catalog
from .base import ChatModel, EmbeddingModel, RemoteModel, require_json

__all__ = ["BACKENDS", "RemoteModel", "list_models", "make_chat", "make_embedding", "require_json"]

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


def make_embedding(cfg: ModelConfig) -> EmbeddingModel:
    if cfg.backend == "llamacpp":
        from .llamacpp import LlamaCppEmbedding

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
