"""Prompt-lookup drafting (app/core/models/prompt_lookup.py): which drafts it offers, and the
llama.cpp backend reading them in batches with the real SmolLM2-135M, the reply unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.models.llamacpp import LlamaCppChat
from app.core.models.prompt_lookup import PromptLookup
from app.core.research.answer.claims import claims_schema, parse_claims
from app.core.settings import ModelConfig


def ids(*tokens: int) -> np.ndarray:
    return np.array(tokens, dtype=np.intc)


def test_the_draft_is_what_followed_the_last_tokens_where_they_last_occurred():
    draft = PromptLookup(min_match=3, num_pred_tokens=4)
    context = ids(1, 2, 3, 4, 5, 6, 7, 9, 1, 2, 3, 8, 8, 8, 8, 0, 1, 2, 3)
    assert draft(context).tolist() == [8, 8, 8, 8]  # the later of two occurrences
    assert draft.offered == 4 and draft.calls == 1


def test_a_longer_match_wins_and_drafts_stop_at_the_context_end():
    draft = PromptLookup(min_match=2, num_pred_tokens=8)
    context = ids(5, 2, 3, 40, 41, 9, 1, 2, 3, 50, 51, 52, 7, 1, 2, 3)
    assert draft(context).tolist()[:3] == [50, 51, 52]  # "1 2 3" beats the later-starting "2 3"
    assert draft(ids(9, 9, 1, 2, 1, 2)).tolist() == [1, 2]  # the continuation runs into the tail itself


def test_no_draft_without_a_long_enough_match():
    draft = PromptLookup(min_match=3)
    assert draft(ids(1, 2, 3, 4, 2, 3)).size == 0  # only two tokens recur
    assert draft(ids(7)).size == 0 and draft.offered == 0


@pytest.fixture(scope="module")
def chat(tiny_models):
    model = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048))
    yield model
    model.close()


PASSAGE = ("The median surgeon-scrub teaming score was 0.08 (IQR 0.03-0.19), and the median "
           "surgeon-circulator teaming score was 0.06 (IQR 0.03-0.13), which indicates low team familiarity.")
MESSAGES = [
    {"role": "system", "content": "Answer in JSON claims, copying the passage's words; cite the passage by number."},
    {"role": "user", "content": f"[1] {PASSAGE}\n\nQuestion: How familiar were the surgical teams? "
                                "Repeat the passage's sentence as the claim."},
]


@pytest.mark.slow
def test_the_backend_drafts_from_the_prompt_and_writes_the_same_claim_in_fewer_passes(chat):
    schema = claims_schema([1], min_items=1, max_items=1)
    before = chat.choice_probabilities(MESSAGES, ["yes", "no"])
    drafts, chat.drafts = chat.drafts, None
    try:
        plain = chat.chat(MESSAGES, max_tokens=120, temperature=0.0, json_schema=schema)
    finally:
        chat.drafts = drafts
    drafted = chat.chat(MESSAGES, max_tokens=120, temperature=0.0, json_schema=schema)
    # Each token is still the model's choice; a batch read rounds differently from one token at a
    # time, so near-ties in the JSON's spacing may fall either way, not the words of the claim.
    [claim] = parse_claims(drafted, {1})
    assert claim.text == parse_claims(plain, {1})[0].text and "0.08 (IQR 0.03-0.19)" in claim.text
    written = chat.count_tokens(drafted) - chat.count_tokens('{"claims": [{"text": "')
    assert drafts.offered > 0 and drafts.calls < written / 2  # a pass per draft, most tokens came in drafts
    assert chat._llm.draft_model is None  # only while a reply is written: other reads want one row of logits
    after = chat.choice_probabilities(MESSAGES, ["yes", "no"])  # the prompt's last row, not a drafted one
    assert before is not None and after is not None and abs(after["yes"] - before["yes"]) < 0.02
