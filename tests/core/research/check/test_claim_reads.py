"""The support check's cost: with `per_claim` the judge reads all the passages one claim cites in
one read (support.claim_text), with the real model; without it, one read a pair as before."""

from __future__ import annotations

import pytest

from app.core.records import Evidence, Support
from app.core.research.check.support import Pair, check_pairs, claim_text, support_probability

DEPARTURE = ("The median departure date was 14 September. Young birds departed 9 days later than adults. "
             "Adult kestrels in the eastern valleys were tracked with 4 gram loggers.")
ROUTE = ("The loggers showed the birds crossing the Sahara in three to five days. Young birds departed "
         "9 days later than adults and flew alone.")  # states the claim too: the rules leave both pairs to the model
CLAIM = "Young birds departed 9 days later than adults."
OTHER = "Adult kestrels were tracked with 4 gram loggers."


def _evidence(number: int, text: str) -> Evidence:
    return Evidence(number=number, paper_id="kestrel", page=number + 2, page_label=str(number + 2), section="Results",
                    text=text, score=0.7)


def _pairs() -> list[Pair]:
    return [Pair(CLAIM, _evidence(1, DEPARTURE)), Pair(CLAIM, _evidence(2, ROUTE)), Pair(OTHER, _evidence(1, DEPARTURE))]


def test_the_windows_of_a_claims_passages_share_the_judges_length():
    pairs = check_pairs(_pairs(), None, context="When do kestrels leave?")  # rules only: the quotes
    text = claim_text(pairs[:2])
    assert pairs[0].quote in text and pairs[1].quote in text
    assert claim_text(pairs[:1]) == " ".join(DEPARTURE.split())


@pytest.mark.slow
def test_one_read_a_claim_for_all_the_passages_it_cites(tiny_models):
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.settings import ModelConfig

    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    reads: list[str] = []
    original = chat.choice_probabilities

    def counted(messages, choices, **kw):  # the real model's read, counted
        reads.append(messages[-1]["content"])
        return original(messages, choices, **kw)

    chat.choice_probabilities = counted
    try:
        per_pair = check_pairs(_pairs(), chat, context="When do kestrels leave?")
        assert len(reads) == 3
        reads.clear()
        grouped = check_pairs(_pairs(), chat, context="When do kestrels leave?", per_claim=True)
        assert len(reads) == 2  # the claim citing two passages is read once
        assert ROUTE.split(".")[0] in reads[0] and "14 September" in reads[0]
        assert grouped[0].confidence == grouped[1].confidence
        assert grouped[0].confidence == pytest.approx(support_probability(chat, CLAIM, claim_text(grouped[:2])), abs=0.02)
        assert grouped[2].confidence == pytest.approx(per_pair[2].confidence, abs=0.02)  # a claim citing one: as before
    finally:
        chat.close()
    for p in grouped:  # the rules still cap each pair on its own passage
        assert p.verdict in {v.value for v in Support}
