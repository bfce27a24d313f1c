"""Section drafting: one section of the user's own paper, with citations, from the library.

`context` and `queries` are light (the CLI's parser imports them); the
pipeline (`draft`) and the writers (`outputs`) load on first use.
"""

from __future__ import annotations

from typing import Any

from .context import DraftContext, context_from_dict, load_context
from .queries import SECTIONS, default_queries

_LAZY = {
    "DraftParams": "draft", "DraftResult": "draft", "SectionDrafter": "draft", "draft_section": "draft",
    "write_outputs": "outputs", "markdown_document": "outputs", "latex_document": "outputs",
    "bib_document": "outputs", "ledger_csv": "outputs", "ledger_markdown": "outputs",
}

__all__ = ["DraftContext", "context_from_dict", "load_context", "SECTIONS", "default_queries", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(name)
