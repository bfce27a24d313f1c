"""A rewritten claim's check (rewrite.judged_until_supported): the model reads the passages most
like the claim first and stops at the first it finds supported; the rules read them all, so a
passage stating otherwise still turns the claim down."""

from __future__ import annotations

import pytest

from app.core.records import Evidence, Support
from app.core.research.answer.rewrite import judged_until_supported
from app.core.research.check.support import Pair, check_pairs
from tests.support.chat import ScriptedChat

CLAIM = "Young birds departed 9 days later than adults."
UNRELATED = "Adult kestrels were tracked with 4 gram loggers across the eastern valleys."
STATES = "The median departure date was 14 September. Young birds departed 9 days later than adults."
ALSO = "Young kestrels left their valleys 9 days after the adults had departed."  # the model's to judge too
OTHERWISE = "Young birds departed 4 days later than adults, not 9 days as earlier work said."


def _pairs(*texts: str) -> list[Pair]:
    return [Pair(CLAIM, Evidence(number=n, paper_id="kestrel", page=n, page_label=str(n), section="Results",
                                 text=t, score=0.7)) for n, t in enumerate(texts, 1)]


class Judge(ScriptedChat):
    """A probability judge that says yes to every pair it reads, and counts its reads."""

    def __init__(self, p_yes: float = 0.95) -> None:
        super().__init__()
        self.p_yes, self.read = p_yes, []

    def choice_probabilities(self, messages, choices, *, cancelled=None):
        self.read.append(messages[-1]["content"])
        return {"yes": self.p_yes, "no": 1 - self.p_yes}


def test_the_model_stops_at_the_first_passage_it_finds_supported():
    judge = Judge()
    out = judged_until_supported(_pairs(UNRELATED, ALSO, STATES), judge, context="When do kestrels leave?")
    assert len(judge.read) == 1 and "14 September" in judge.read[0]  # the most alike read first, and alone
    assert [p.evidence.number for p in out] == [3]
    assert out[0].verdict == Support.SUPPORTED.value


def test_every_pair_is_read_where_none_is_supported():
    judge = Judge(p_yes=0.05)
    out = judged_until_supported(_pairs(STATES, ALSO), judge)
    assert len(judge.read) == 2  # as many reads as the check of every pair
    assert {p.evidence.number for p in out} == {1, 2}
    assert all(p.verdict != Support.SUPPORTED.value for p in out)


def test_a_passage_stating_otherwise_is_kept_though_the_model_never_reads_it():
    judge = Judge()
    out = judged_until_supported(_pairs(STATES, OTHERWISE, UNRELATED), judge)
    assert len(judge.read) == 1
    assert [p.evidence.number for p in out if p.contradicts] == [2]  # the rewrite is turned down by it
    assert 3 not in [p.evidence.number for p in out]  # unread and not contradicting: not cited


@pytest.mark.slow
def test_with_the_real_model_its_verdicts_are_the_per_pair_checks(tiny_models):
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.settings import ModelConfig

    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    try:
        every = {p.evidence.number: p for p in check_pairs(_pairs(UNRELATED, STATES, ALSO), chat)}
        out = judged_until_supported(_pairs(UNRELATED, STATES, ALSO), chat)
    finally:
        chat.close()
    assert out and {p.evidence.number for p in out} <= set(every)
    for p in out:  # each pair read gets the verdict the whole check gives it
        assert p.verdict == every[p.evidence.number].verdict
        if p.confidence is not None:  # read by the model (the rules decide some pairs alone)
            assert p.confidence == pytest.approx(every[p.evidence.number].confidence, abs=0.02)
    supported = [p for p in out if p.verdict == Support.SUPPORTED.value]
    assert len(supported) <= 1 and (not supported or out[-1] is supported[0])  # nothing read after a "yes"
