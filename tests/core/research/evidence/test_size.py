"""Stage 2 counts its evidence in tokens (research/evidence/evidence_size.py): at least k_evidence
passages, more while they fit evidence_tokens; the order is MMR's either way."""

from __future__ import annotations

import pytest

from app.core.research.evidence.size import PASSAGE_TOKENS, candidates_to_fetch, tokens, within_tokens
from tests.support.pdf_factory import make_paper

# Ten pages on one topic, so that many passages of one paper pass the cutoff.
PAGES = [
    f"# Observations {n}\n\nKestrels left the alpine valley in autumn of year {2010 + n}, "
    f"{n + 3} days after the first frost; the departure of young kestrels from the valley followed "
    f"the adults by {n + 5} days, and ringing data from {20 + n} birds tracked the autumn migration."
    for n in range(10)
]
QUESTION = "When did kestrels leave the alpine valley in autumn, and how late did young kestrels depart?"


def test_within_tokens_keeps_k_then_what_fits_in_order():
    texts = ["a" * 400, "b" * 400, "c" * 800, "d" * 40]  # 100, 100, 200, 10 tokens
    assert [tokens(t) for t in texts] == [100, 100, 200, 10]
    assert within_tokens(texts, 2, 0) == [0, 1]  # no budget: k passages, as before
    assert within_tokens(texts, 2, 250) == [0, 1]  # the third does not fit; the small fourth is not taken past it
    assert within_tokens(texts, 2, 400) == [0, 1, 2]
    assert within_tokens(texts, 2, 410) == [0, 1, 2, 3]
    assert within_tokens(texts, 3, 50) == [0, 1, 2]  # k passages even past the budget
    assert within_tokens(texts, 1, 10_000, order=[7, 3, 9, 4]) == [7, 3, 9, 4]
    assert candidates_to_fetch(15, 0, 2) == 30
    assert candidates_to_fetch(15, 4800, 2) > 30  # room to fill the budget
    assert candidates_to_fetch(15, 100, 2) == 30


@pytest.fixture(scope="module")
def kestrel_desk(tmp_path_factory, tiny_models):
    from app.core.desk import Desk
    from app.core.settings import ModelConfig, Settings

    root = tmp_path_factory.mktemp("tokens")
    (root / "in").mkdir()
    make_paper(root / "in" / "kestrels.pdf", "Kestrel Departures from Alpine Valleys", ["Maria Lindqvist"], PAGES)
    settings = Settings(embedding=ModelConfig(path=str(tiny_models["embedding"]), context_length=512))
    desk = Desk(settings, library=str(root / "lib"))
    assert desk.add([root / "in"]).ok
    yield desk
    desk.close()


def test_stage_two_keeps_evidence_by_tokens_on_a_real_library(kestrel_desk):
    def evidence(**overrides):
        result = kestrel_desk.funnel(overrides={"k_evidence": 3, **overrides}).run(QUESTION, evidence_only=True)
        return [(e.page, e.char_start, e.text) for e in result.evidence]

    by_passages = evidence(evidence_tokens=0)
    assert len(by_passages) == 3
    # Up to 3 x PASSAGE_TOKENS the same candidates are fetched as for 3 passages, so the order is comparable.
    room = evidence(evidence_tokens=3 * PASSAGE_TOKENS)
    assert len(room) > 3 and room[:3] == by_passages  # counting in tokens extends the list; it never reorders it
    assert sum(tokens(text) for _, _, text in room) <= 3 * PASSAGE_TOKENS

    # A budget that five passages fill exactly keeps those five.
    five = sum(tokens(text) for _, _, text in room[:5])
    assert evidence(evidence_tokens=five) == room[:5]
    assert evidence(evidence_tokens=five - 1) == room[:4]
    # Fewer tokens than k passages hold: still k passages.
    assert evidence(evidence_tokens=1) == by_passages
    # A large budget fetches more candidates to fill it: every page of the paper here.
    everything = evidence(evidence_tokens=100_000)
    assert len(everything) > len(room) and {page for page, _, _ in everything} == set(range(1, len(PAGES) + 1))
