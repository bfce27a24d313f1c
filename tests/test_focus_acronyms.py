"""Focusing reads a paper's acronyms as the words they stand for (abbreviations.definitions)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research import focus
from app.core.research.abbreviations import definitions


@pytest.mark.parametrize("text, expected", [
    ("Surgeon-scrub (SS) and surgeon-circulator (SC) teaming scores were calculated.",
     {"SS": "Surgeon-scrub", "SC": "surgeon-circulator"}),
    ("Retrievable inferior vena cava (IVC) filters were placed.", {"IVC": "inferior vena cava"}),
    ("the US Food and Drug Administration (FDA) approved it", {"FDA": "Food and Drug Administration"}),
    ("images from the Dark Energy Camera (DECam) and near-Earth objects (NEOs)",
     {"DECam": "Dark Energy Camera", "NEOs": "near-Earth objects"}),
])
def test_a_definition_gives_the_words_the_acronym_stands_for(text, expected):
    assert definitions(text) == expected


@pytest.mark.parametrize("text", [
    "as shown before (Table) and after (HC3)",  # not spelled by the words before it
    "the estimator of the model (M) was used",  # one letter is not an acronym
    "a new treatment protocol (GLM) was tried",  # the words before spell TP, not GLM
])
def test_a_bracket_that_the_words_before_do_not_spell_is_not_a_definition(text):
    assert definitions(text) == {}


ABSTRACT = ("Methods: Surgeon-scrub (SS) and surgeon-circulator (SC) teaming scores were calculated "
            "for every operation between 2017 and 2021.")
FILLER = [f"Teaming in operating room {k} was reviewed at the weekly meeting of the evening staff."
          for k in range(10)]
RESULT = "The median SS was 0.08 (IQR 0.03-0.19) and the median SC 0.06 (IQR 0.03-0.13)."


@pytest.mark.parametrize("read_acronyms", [True, False])
def test_a_result_stated_in_acronyms_ranks_first_for_a_question_asked_in_words(fact_library, monkeypatch, read_acronyms):
    """The question names the scores in words; the result sentence only in the paper's acronyms.
    Read through the definitions, it is its passage's best sentence, the one a window grows around
    and a quote is taken from; without them it shares no term with the question and ranks below
    sentences on teaming in the operating rooms."""
    if not read_acronyms:
        monkeypatch.setattr(focus, "definitions", lambda text: {})
    abstract = " ".join([ABSTRACT, *FILLER[:4]])
    results = " ".join([*FILLER[4:8], RESULT, *FILLER[8:10]])
    evidence = [
        Evidence(1, "teams", 1, "1", "Abstract", abstract, 0.8, char_start=0, char_end=len(abstract)),
        Evidence(2, "teams", 5, "5", "Results", results, 0.7, char_start=0, char_end=len(results)),
    ]
    question = "How high were the surgeon-scrub and surgeon-circulator teaming scores?"
    qvec = fact_library.embedder().embed_one(question)
    focused = focus.focus_evidence(question, qvec, evidence, fact_library.embedder(), token_budget=2000)
    on_results = next(e for e in focused if e.page == 5).sentences
    assert len(on_results) == 7  # the whole passage fits: every sentence is scored and kept
    best = max(on_results, key=lambda s: s.score)
    assert (best.text == RESULT) is read_acronyms, [(s.text[:30], s.score) for s in on_results]
