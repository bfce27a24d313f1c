"""Small helpers for the sentences the app shows (shared by the core's messages and the UI)."""

from __future__ import annotations


def plural(n: int, word: str) -> str:
    """'1 paper', '3 papers', '2 passages'."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('s', 'ch', 'sh', 'x')) else 's'}"
