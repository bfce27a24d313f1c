"""What a faulted claim is written again from (rewrite.sentences_for): the cited passage's best
sentence is always read, however long the key passages, and leads where the claim misread a figure."""

from __future__ import annotations

from app.core.records import Claim, Evidence, Sentence
from app.core.research.answer.rewrite import REWRITE_CHARS, sentences_for

ROW = "Dimethylmaleate · Grain yield per spike: 0.55 · Individual kernel weight: 0.66"


def _answer() -> tuple[list[Claim], list[Evidence]]:
    long = "Dimethylmaleate had some of the strongest positive correlations with yield, SPAD and Fv/Fm " * 7
    # two key passages fill the budget to the character: the row came after them and was left out
    key = [Evidence(k, "wheat", 15, "15", "Discussion", f"{long[:REWRITE_CHARS // 2 - 4]}({k})", 0.6) for k in (1, 2, 3)]
    table = Evidence(4, "wheat", 16, "16", "Table 7", ROW, 0.5, sentences=[Sentence(ROW, 0, len(ROW), 0.48)])
    claims = [Claim("Dimethylmaleate correlated with kernel weight at -0.85.", [4])]
    claims += [Claim(f"“{e.text}”", [e.number], quoted=True) for e in key]
    return claims, key + [table]


def test_the_cited_row_is_read_however_long_the_key_passages():
    claims, evidence = _answer()
    assert sum(len(e.text) for e in evidence[:3]) > REWRITE_CHARS  # the key passages alone fill the budget
    picked = sentences_for(claims[0], claims, evidence)
    assert (ROW, 4) in picked and picked[0][1] == 1  # key passages first, the row among what is read
    assert sum(len(t) for t, _ in picked) <= REWRITE_CHARS + len(picked[0][0])


def test_a_claim_that_misread_a_figure_reads_its_passage_first():
    claims, evidence = _answer()
    assert sentences_for(claims[0], claims, evidence, cited_first=True)[0] == (ROW, 4)
