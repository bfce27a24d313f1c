"""The two model interfaces every backend implements.

Backends: llama.cpp in-process (`llamacpp.py`), LM Studio through its SDK
(`lmstudio_backend.py`) and any OpenAI-compatible server (`openai_compat.py`).
`factory.py` builds them from the settings. What the backends share (the record of a
model a server offers, the check of a JSON reply) lives here too, so that no backend
imports the factory that imports it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, TypedDict

import numpy as np

from ..callbacks import IsCancelled, OnToken
from ..errors import ModelError

if TYPE_CHECKING:
    from .catalog import JudgeCutoffs


class ChatMessage(TypedDict):
    role: str  # system | user | assistant
    content: str


@dataclass
class Tool:
    """A function the model may call during `ChatModel.act` (string parameters only)."""

    name: str
    description: str
    parameters: dict[str, str]  # parameter name → what to put in it
    run: Callable[..., str]  # called with the parameters as keyword arguments; returns the result text


class ChatModel(ABC):
    """A chat model that streams tokens and can be held to a JSON schema."""

    name: str = ""
    context_length: int = 4096
    supports_tools = False  # True where `act` drives the backend's own tool calling
    # What deep research's planner may count on when it prices an answer (deep_plan.py): a
    # backend that keeps prefilled prompt beginnings (`prefill`) reads them once per model, not
    # once per answer; one that gives `choice_probabilities` checks a pair by reading it and
    # writing nothing, where the others write a verdict per pair.
    keeps_prefixes = False
    gives_probabilities = False
    # A backend that samples each token itself can hold a JSON reply's figures to those its evidence
    # prints (`chat(figures=…)`, figure_guard.py); a server samples on its own and cannot.
    holds_figures = False
    # Prompt tokens a second read by the answers' first turns on this machine, latest last
    # (research/evidence/first_turn_size.py sizes the next answer's first turn by them).
    read_speeds: tuple[float, ...] = ()
    # The support check's cut-offs on this model's P(yes), where the catalog has them calibrated
    # (set by the factory); None: research/check/support.py's defaults.
    judge_cutoffs: "JudgeCutoffs | None" = None
    # The model that judges this one's claims in the support check, where the settings name another
    # (a stronger model, or one whose backend gives probabilities); None: the model judges itself.
    judge: "ChatModel | None" = None

    @abstractmethod
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
        """Return the full reply; call `on_token` with each piece as it arrives.

        With `json_schema` the reply is constrained to JSON matching it (grammar
        or structured output, never regex repair); with `figures` too, where the
        backend `holds_figures`, its strings state no figure outside them. Raises `Cancelled` when
        `cancelled()` turns true, `ModelTimeout` past `timeout_s`, `ModelError`
        on backend failures.
        """

    def count_tokens(self, text: str) -> int:
        """Token count of `text`; backends with a tokenizer override this."""
        return max(1, len(text) // 4)

    def count_message_tokens(self, messages: list[ChatMessage]) -> int:
        """Tokens of the messages' contents (the chat template's few tokens a turn aside)."""
        return sum(self.count_tokens(m["content"]) for m in messages)

    def prefill(self, messages: list[ChatMessage]) -> int:
        """Read `messages` now, the fixed beginning of prompts to come, so those start from it.

        Returns the tokens read. Backends that keep no state between calls (servers that
        manage their own cache) do nothing.
        """
        return 0

    def choice_probabilities(self, messages: list[ChatMessage], choices: list[str], *,
                             cancelled: IsCancelled | None = None) -> dict[str, float] | None:
        """How likely the reply to `messages` begins with each of `choices` (one word each),
        normalised over them; None where the backend cannot tell (it then answers in words).

        A judge that reads probabilities can be held to a confidence, which a constrained
        one-word reply cannot: a small model says "yes" to most claims on the passage's topic.
        """
        return None

    def act(
        self,
        messages: list[ChatMessage],
        tools: list[Tool],
        *,
        max_rounds: int,
        max_tokens: int = 400,
        cancelled: IsCancelled | None = None,
    ) -> list[str]:
        """Let the model call `tools` for up to `max_rounds` rounds; return its texts, one per round.

        Only backends with native tool calling implement this (`supports_tools`).
        Raises `Cancelled` when `cancelled()` turns true (work in flight is abandoned).
        """
        raise NotImplementedError(f"{type(self).__name__} has no tool calling")

    def close(self) -> None:
        """Release the model (memory, connections)."""


class EmbeddingModel(ABC):
    """A sentence embedding model. Vectors come back L2-normalised."""

    name: str = ""
    dimension: int = 0
    max_tokens: int = 512  # longest input it embeds without truncation

    @abstractmethod
    def embed(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array (len(texts), dimension), rows L2-normalised."""

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def leave_cores(self, cores: int) -> None:
        """Run on `cores` fewer threads than configured (never under one) until called again with
        0: the import's reading runs beside the embedding on its own core. Backends whose work
        runs elsewhere (a server) ignore it."""

    def tokenizer_counter(self) -> Callable[[str], int] | None:
        """An exact, local, uncapped token counter for sizing chunks (None: the backend has none
        cheap enough to call thousands of times, e.g. one behind a network round trip)."""
        return None

    def close(self) -> None:
        """Release the model."""


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


@dataclass(frozen=True)
class RemoteModel:
    """A model a server offers, as listed in the settings dialog."""

    id: str  # the key to put in ModelConfig.model
    kind: str = ""  # "llm" | "embedding" | "" (server does not say)
    loaded: bool = False


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
