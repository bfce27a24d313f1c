"""What the answer's stages need of the run that calls them, as a protocol.

Synthesis, the key passages, the parts of a question and the free-text answer are called by
the funnel (and by deep research through it), but they need only this much of it: the settings,
the library and the embedder, the chat model, the task's events and cancel token, and a few
sizes. Typing them against this protocol instead of `Funnel` keeps the import graph one-way:
funnel.py imports the stages, and no stage imports funnel.py, not even for its type.
"""

from __future__ import annotations

from typing import Callable, Protocol

from ..events import CancelToken, Task
from ..library.store import Library
from ..models.base import ChatModel, EmbeddingModel
from ..records import Evidence, Paper, ResearchResult
from ..settings import ResearchParams


class AnswerContext(Protocol):
    """A research run as the answer's stages see it (research/funnel.py's `Funnel` is one)."""

    library: Library
    embedder: EmbeddingModel
    params: ResearchParams
    evidence_tokens_override: int | None
    task: Task
    loaded_chat: Callable[[], ChatModel | None] | None  # the chat model where loaded already; never loads it
    chat_tokens: Callable[[], Callable[[str], int] | None] | None  # its token count from its vocabulary, unloaded

    @property
    def cancelled(self) -> CancelToken: ...

    def load_chat(self) -> ChatModel: ...

    def chat_loaded(self) -> ChatModel | None: ...

    def papers(self) -> dict[str, Paper]: ...

    def evidence_budget(self, chat: ChatModel | None = None, reserved: int = 0) -> int: ...

    def answer_tokens(self, chat: ChatModel, *, structured: bool = False) -> int: ...

    def finish_references(self, result: ResearchResult) -> None: ...

    def format_into(self, result: ResearchResult, answer: str) -> None: ...

    def elapsed(self) -> float: ...

    def stage(self, stage: int, message: str) -> None: ...

    def emit(self, event) -> None: ...

    def build_prompt(self, chat: ChatModel, query: str, evidence: list[Evidence], template: str,
                     extra: dict[str, str]): ...
