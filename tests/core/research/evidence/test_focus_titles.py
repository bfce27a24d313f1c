"""Focusing: the words a question shares with the papers' titles weigh less (research/evidence/focus.py)."""

from __future__ import annotations

import pytest

from app.core.research.evidence.focus import _Candidate, _lexical_scores

QUESTION = "Which negatives does dense passage retrieval train with?"
TITLE = "Dense Passage Retrieval for Open-Domain Question Answering"
SENTENCES = [
    "In this section we evaluate the dense passage retrieval model on five datasets.",
    "In-batch negatives reuse the gold passages of the other questions in the batch.",
    "A table of dataset sizes.",
]


def _scored(titles: str) -> list[float]:
    candidates = [_Candidate(0, k, 0, len(t), t, "sentence") for k, t in enumerate(SENTENCES)]
    _lexical_scores(QUESTION, candidates, titles)
    return [c.lexical for c in candidates]


def test_the_sentence_on_what_is_asked_outscores_the_one_that_names_the_paper():
    framing, answer, _ = _scored("")
    assert framing > answer  # by the question's terms alone, the paper's name wins
    framing, answer, none = _scored(TITLE)
    assert answer > framing and none == 0.0


def test_a_question_made_only_of_title_words_is_scored_as_before():
    candidates = [_Candidate(0, k, 0, len(t), t, "sentence") for k, t in enumerate(SENTENCES)]
    _lexical_scores("dense passage retrieval", candidates, TITLE)
    scored = [c.lexical for c in candidates]
    _lexical_scores("dense passage retrieval", candidates, "")
    assert scored == pytest.approx([c.lexical for c in candidates])
