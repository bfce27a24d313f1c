"""Focusing: a question's term in a sentence's section heading counts for the sentence (research/evidence/focus.py)."""

from __future__ import annotations

from app.core.records import Evidence
from app.core.research.evidence.focus import _lexical_scores, split_sentences

QUESTION = "What did the study find about the drought's impact on maize yields?"
PASSAGE = ("## Rainfall records\n\n"
           "Rainfall was recorded at twelve stations across the region every day.\n\n"
           "## Impact of the 2012 Drought\n\n"
           "Overall, mean output fell from 9.1 to 7.4 t/ha between the two seasons (P < 0.001).\n\n"
           "Irrigated farms lost less, and farms on clay soils lost the least.")


def test_the_sentence_under_the_heading_that_names_the_topic_outscores_one_under_another():
    e = Evidence(1, "p", 3, "3", "Study area", PASSAGE, 0.5)
    candidates = split_sentences(e)
    assert [c.heading for c in candidates] == ["Rainfall records", "Impact of the 2012 Drought", "Impact of the 2012 Drought"]
    _lexical_scores(QUESTION, candidates)
    rainfall, overall, irrigated = (c.lexical for c in candidates)
    # None of the three says "drought" or "impact"; the two under the heading that does count them.
    assert overall > rainfall and irrigated > rainfall
    assert rainfall == 0.0


def test_a_passage_that_opens_under_its_chunks_section_takes_that_heading():
    e = Evidence(1, "p", 3, "3", "## Impact of the 2012 Drought", "Overall, mean output fell by a fifth.", 0.5)
    (only,) = split_sentences(e)
    assert only.heading == "Impact of the 2012 Drought"
    _lexical_scores(QUESTION, [only])
    assert only.lexical > 0.0
