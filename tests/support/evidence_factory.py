"""Focused passages for tests of what is quoted from them: sentences with their focus scores."""

from __future__ import annotations

from app.core.records import Evidence, Sentence


def focused_passage(number: int, *sentences: tuple[str, float], page: int = 3) -> Evidence:
    """Passage `number` of paper "p<number>" on `page`, made of `sentences` (text, focus score) in order."""
    text, spans = "", []
    for s, score in sentences:
        start = len(text)
        text += s + " "
        spans.append(Sentence(s, start, start + len(s), score))
    return Evidence(number, f"p{number}", page, str(page), "", text, 0.5, sentences=spans)
