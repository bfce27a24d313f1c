"""Focusing scores each sentence by the question's ask as well as the whole question (research/evidence/focus.py)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence

QUESTION = ("In the situational analysis of care quality at the medical department of Kamuzu Central Hospital "
            "in Malawi, how many outpatients answered the exit interviews?")
ANSWER = "Out of the 100 sampled outpatients, 98 answered the exit interviews and only two declined."


def _passage(number: int, section: str, text: str, score: float) -> Evidence:
    return Evidence(number, "malawi", number, str(number), section, text, score, char_start=0, char_end=len(text))


@pytest.mark.parametrize("on", [True, False])
def test_the_sentence_that_answers_the_ask_leads_the_first_turn_over_the_ones_that_repeat_the_frame(fact_library, monkeypatch, on):
    """A researcher's question first says where to look ("In the situational analysis … in Malawi,");
    the sentences that say the same outscored the one that answers, which shares only the ask's
    words, and the first turn's window stood around them. Scored by the ask as well, the answer is
    the best sentence and the window stands around it."""
    from app.core.research.evidence import focus
    from app.core.research.evidence.first_turn_size import split_first

    monkeypatch.setattr(focus, "ASK_SCORING", on)
    passage = " ".join([
        "The Medical Department of Kamuzu Central Hospital in Malawi set out to improve the quality of care.",
        "A situational analysis of care quality was carried out at the medical department in 2012.",
        "Kamuzu Central Hospital is the tertiary referral hospital of the Central Region of Malawi.",
        *[f"Ward {k} was visited twice during the study week by two of the researchers." for k in range(16)],
        "Structured interviews were held as patients left the consulting rooms.", ANSWER])
    evidence = [_passage(1, "Methods", passage, 0.7)]
    embedder = fact_library.embedder()
    count = lambda s: max(1, len(s) // 4)  # the focus step's default count, used for the first turn too
    focused = focus.focus_evidence(QUESTION, embedder.embed_one(QUESTION), evidence, embedder,
                                   token_budget=800, first_tokens=300)
    first, _ = split_first(focused, 300, lambda e: count(e.focus_text) + focus.HEADER_TOKENS)
    assert (ANSWER in "\n".join(e.focus_text for e in first)) is on
