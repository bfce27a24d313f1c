"""Chat and embedding models behind small interfaces, with three backends."""

from .base import ChatModel, EmbeddingModel, ChatMessage

__all__ = ["ChatModel", "EmbeddingModel", "ChatMessage"]
