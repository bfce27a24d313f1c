"""The Desk's parts: one settings object, one library, lazily loaded models.

The operations front ends call live in the sibling modules (papers, research,
writing, models); this module holds what they all share.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from ..errors import ResearchDeskError
from ..events import Task
from ..library.store import Library
from ..models.base import ChatModel, EmbeddingModel
from ..models.configured import default_model_path, effective_config
from ..settings import ModelConfig, Settings, resolve_library


class DeskParts:
    def __init__(self, settings: Settings | None = None, library: str | None = None, endpoint: str | None = None) -> None:
        self.settings = settings or Settings.load()
        # A folder or an object-storage URI (s3://bucket/prefix): kept as text, never a Path.
        self.location = resolve_library(library, self.settings)
        self.endpoint = endpoint or ""  # S3-compatible server of a URI (--endpoint); else env, settings
        self._library: Library | None = None
        self._chat: ChatModel | None = None
        self._embedder: EmbeddingModel | None = None
        self._chat_key = ""
        self._embed_key = ""
        self._judge: ChatModel | None = None
        self._judge_key = repr(None)
        # The window's warm-up job may be loading the chat model when a question asks for it: the
        # question waits for that load instead of starting a second one.
        self._models_lock = threading.RLock()

    # -- parts -------------------------------------------------------------------
    @property
    def library(self) -> Library:
        if self._library is None:
            self._library = Library(self.location, endpoint=self.library_endpoint())
        return self._library

    def library_endpoint(self) -> str:
        """The S3 endpoint: --endpoint, else AWS_ENDPOINT_URL(_S3), else the setting."""
        import os

        return (self.endpoint or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
                or self.settings.library_endpoint)

    def embedding_config(self) -> ModelConfig:
        return effective_config(self.settings.embedding, "embedding")

    def chat_config(self) -> ModelConfig:
        return effective_config(self.settings.chat, "chat")

    def embedding_identity(self) -> str:
        return self.embedding_config().identity()

    def embedder(self) -> EmbeddingModel:
        from ..models.factory import make_embedding

        cfg = self.embedding_config()
        key = repr(cfg)
        if self._embedder is None or key != self._embed_key:
            if self._embedder is not None:
                self._embedder.close()
            self._embedder = make_embedding(cfg)
            self._embed_key = key
        return self._embedder

    def chat(self) -> ChatModel:
        from ..models.factory import make_chat

        cfg = self.chat_config()
        key = repr(cfg)
        with self._models_lock:
            if self._chat is None or key != self._chat_key:
                if self._chat is not None:
                    self._chat.close()
                self._chat = make_chat(cfg)
                self._chat_key = key
            self._chat.judge = self.judge()
            return self._chat

    def loaded_chat(self) -> ChatModel | None:
        """The chat model where it is loaded already with the settings' configuration; never loads it."""
        return self._chat if self._chat is not None and self._chat_key == repr(self.chat_config()) else None

    def chat_token_counter(self) -> Callable[[str], int] | None:
        """Counts text in the chat model's tokens without loading its weights (models.factory.token_counter)."""
        from ..models.factory import token_counter

        return token_counter(self.chat_config())

    def judge_config(self) -> ModelConfig | None:
        """The support check's judge where the settings name one apart from the chat model; None: the chat model judges."""
        cfg = self.settings.judge
        if not cfg.backend:
            return None
        cfg = effective_config(cfg, "chat")
        return None if repr(cfg) == repr(self.chat_config()) else cfg

    def judge(self) -> ChatModel | None:
        """The judge model, loaded once (None: the chat model judges its own claims)."""
        from ..models.factory import make_chat

        cfg = self.judge_config()
        key = repr(cfg)
        with self._models_lock:
            if key != self._judge_key:
                if self._judge is not None:
                    self._judge.close()
                    self._judge = None
                self._judge = make_chat(cfg) if cfg is not None else None
                self._judge_key = key
            return self._judge

    def set_chat_model(self, model: ChatModel) -> None:
        """Use an already-built chat model (tests, failure injection)."""
        self._chat = model
        self._chat_key = repr(self.chat_config()) if self.settings.chat.path else ""

    def close(self) -> None:
        for model in (self._chat, self._embedder, self._judge):
            if model is not None:
                model.close()
        self._chat = self._embedder = self._judge = None
        self._judge_key = repr(None)

    def rated_speeds(self):
        """What `models rate` measured for the chat model on this machine (first_turn_size.Rated)."""
        from ..rating.rate import rated_speeds

        try:
            cfg = self.chat_config()
        except ResearchDeskError:
            return rated_speeds(None, "")
        name = self._chat.name if self._chat is not None else (Path(cfg.path).stem if cfg.backend == "llamacpp" else cfg.model)
        return rated_speeds(self.library.meta().get("model_ratings"), name)

    def stale_reason(self) -> str:
        return self.library.index_stale_reason(self.embedding_identity())

    def funnel(self, task: Task | None = None, overrides: dict | None = None, scope=None):
        """A research funnel on this desk's library and models (the chat model loads lazily),
        within `scope` (a scope.Scope; None or empty: the whole library).

        Core-internal: deep research, drafting and the manuscript check build on it; front
        ends call `research` / `deep_research` instead."""
        from dataclasses import replace

        from ..research.evidence.first_turn_size import sized
        from ..research.funnel import Funnel, resolve_cutoffs
        from ..scope import resolve as resolve_scope

        params = replace(self.settings.research, **{k: v for k, v in (overrides or {}).items() if v is not None})
        # A faster model reads a larger first turn and more evidence; a slower one gets more time (issue 51).
        params = sized(params, self._chat, self.rated_speeds(), keep=set(overrides or {}))
        stale = self.stale_reason()
        if stale:
            raise ResearchDeskError("The index is stale.", stale, action="reindex")
        cfg = self.embedding_config()
        return Funnel(
            library=self.library,
            embedder=self.embedder(),
            params=params,
            cutoffs=resolve_cutoffs(params, cfg.catalog_id or cfg.path or cfg.model),
            chat_model=self.chat,
            loaded_chat=self.loaded_chat,
            chat_tokens=self.chat_token_counter,
            task=task or Task(),
            scope=None if scope is None or scope.empty else resolve_scope(scope, self.library.list_papers()),
        )
