"""Where a cited passage sits on its PDF page: the core's highlight (app/core/pdf/highlight.py),
read through the Desk.

The viewer, the shared web page's crops and the annotated PDFs find a passage the same way, so
the core holds it; the names stay importable from here for the reader's modules.
"""

from __future__ import annotations

from app.core.desk import PageHighlight, Rect, locate_passage, normalise_word, passage_words, to_display

__all__ = ["PageHighlight", "Rect", "locate_passage", "normalise_word", "passage_words", "to_display"]
