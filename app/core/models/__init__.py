"""Chat and embedding models behind small interfaces, with three backends."""

# First of all: libgomp reads its wait policy when llama_cpp is first imported (omp_policy.py).
from . import omp_policy  # noqa: F401  (isort: skip)
from .base import ChatModel, EmbeddingModel, ChatMessage

__all__ = ["ChatModel", "EmbeddingModel", "ChatMessage"]
