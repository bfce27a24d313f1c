"""Quotes in place of withdrawn claims (research/requotes.py)."""

from __future__ import annotations

from app.core.records import Claim
from app.core.research.requotes import read_sentence, requote, withdrawal_messages
from tests.evidence_factory import focused_passage as _passage


FRAMING = "Treating the three tumour grades as unordered categories throws away information about their order."
METHOD = "Instead of dummy codes, each tumour grade can be given a numeric score such as 1, 2 and 3 in the linear statistic."
ASIDE = "Tumour grade was assessed by two pathologists who did not know the treatment arm of each patient."


def test_the_sentence_a_withdrawn_claim_read_takes_its_place():
    """The check withdrew a right paraphrase; the best-ranked sentence left is the framing one, but
    the sentence the claim was written from says the answer, in the paper's words."""
    evidence = [_passage(1, (FRAMING, 0.9), (METHOD, 0.5), (ASIDE, 0.6))]
    withdrawn = "A permutation test can use the ordering by giving each tumour grade a numeric score instead of dummy codes."
    ratings = {FRAMING: 0.6, ASIDE: 0.3}
    assert requote([], evidence, 1, ratings)[0].text == f"“{FRAMING.rstrip('.')}”"  # ranked as the quotes were
    again = requote([], evidence, 1, ratings, withdrawn=[withdrawn])
    assert [q.text for q in again] == [f"“{METHOD.rstrip('.')}”"] and again[0].quoted and again[0].sources == [1]


def test_a_claim_that_read_no_sentence_leaves_the_ranking_as_it_was():
    evidence = [_passage(1, (FRAMING, 0.9), (METHOD, 0.5), (ASIDE, 0.6))]
    unrelated = "Survival at five years was higher among patients who received the adjuvant regimen."
    assert read_sentence(unrelated, [FRAMING, METHOD, ASIDE]) is None
    assert requote([], evidence, 1, {}, withdrawn=[unrelated])[0].text == f"“{FRAMING.rstrip('.')}”"


def test_a_read_sentence_the_claims_say_is_not_requoted_one_from_a_full_passage_is():
    """The sentence a withdrawn claim read stands for the claim, so it is quoted even from a passage
    quoted twice already; the other places go to passages with room, as before."""
    other = "The linear-by-linear association test gave a single statistic with one degree of freedom."
    evidence = [_passage(1, (FRAMING, 0.9), (METHOD, 0.5), (ASIDE, 0.6)), _passage(2, (other, 0.4))]
    withdrawn = "Each tumour grade can be given a numeric score instead of dummy codes."
    said = Claim("Instead of dummy codes, each tumour grade can be given a numeric score such as 1, 2 and 3.", [1])
    again = requote([said], evidence, 1, {}, withdrawn=[withdrawn])
    assert again and "numeric score" not in again[0].text
    full = [Claim(f"“{FRAMING.rstrip('.')}”", [1], quoted=True), Claim(f"“{ASIDE.rstrip('.')}”", [1], quoted=True)]
    two = requote(full, evidence, 2, {}, withdrawn=[withdrawn, "Survival was higher with the adjuvant regimen."])
    assert [(q.text, q.sources) for q in two] == [(f"“{METHOD.rstrip('.')}”", [1]), (f"“{other.rstrip('.')}”", [2])]


def test_what_the_answer_says_of_withdrawn_claims():
    messages = withdrawal_messages([("Mortality fell by 12 %.", ["12 %"]), ("Grades were scored 1-3.", [])], 1)
    assert messages == ["Support check: withdrew the claim “Mortality fell by 12 %”: no passage it cites states 12 %.",
                        "Support check: withdrew the claim “Grades were scored 1-3”: no cited passage supports it.",
                        "Support check: quoted 1 sentence of the papers in place of the withdrawn claims."]
