"""Build chat and embedding models from the settings, plus helpers the backends share.

Backends are imported on demand so that choosing LM Studio never loads
llama.cpp's native library, and the other way round.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import ModelError
from ..settings import ModelConfig
from .base import ChatModel, EmbeddingModel

BACKENDS = ("llamacpp", "lmstudio", "openai")


@dataclass(frozen=True)
class RemoteModel:
    """A model a server offers, as listed in the settings dialog."""

    id: str  # the key to put in ModelConfig.model
    kind: str = ""  # "llm" | "embedding" | "" (server does not say)
    loaded: bool = False


def _unknown(cfg: ModelConfig) -> ModelError:
    return ModelError(
        f"Unknown model backend '{cfg.backend}'",
        f"choose one of {', '.join(BACKENDS)} in Settings",
    )


def make_chat(cfg: ModelConfig) -> ChatModel:
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


def require_json(text: str, truncated: bool, max_tokens: int) -> None:
    """Check a schema-constrained reply is a complete JSON document.

    Grammars and structured output guarantee a valid prefix, not a finished
    document: a reply cut off at `max_tokens` is the usual failure.
    """
    try:
        json.loads(text)
    except ValueError:
        if truncated:
            raise ModelError(
                f"The model's JSON reply was cut off at the {max_tokens}-token limit.",
                "allow more tokens or use a larger model",
            ) from None
        raise ModelError("The model's reply is not valid JSON.", "try again or use a larger model") from None
