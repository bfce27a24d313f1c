"""The models of a question loaded from the start of a fresh process (the command line's answers).

A `research-desk research` spends ~1.5 s importing the core before it embeds the question, and
finds its evidence (~1 s) before it asks for the chat model; loading the models (llama.cpp, with
the GIL released) beside that work takes them off the time to the first words. Light on imports:
this runs before the core is imported.
"""

from __future__ import annotations

from ..errors import ResearchDeskError
from ..models.configured import effective_config
from ..models.factory import drop_ahead, load_ahead
from ..settings import Settings


def load_models_ahead(settings: Settings) -> None:
    """Start loading the embedding and chat models `settings` name on a thread; the Desk's first
    `embedder()` and `chat()` with the same configuration take them."""
    try:
        load_ahead(embedding=effective_config(settings.embedding, "embedding"), chat=effective_config(settings.chat, "chat"))
    except ResearchDeskError:  # a model not configured: the command says so in its own words
        pass


def drop_models_ahead() -> None:
    """Close the models loaded ahead that nobody took (the command failed before it asked)."""
    drop_ahead()
