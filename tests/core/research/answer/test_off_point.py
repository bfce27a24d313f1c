"""A green mark means "answers, and is supported" (issue 78, item 6): a claim its passage supports
but that does not answer what was asked is marked apart (Claim.off_point), counted apart, and in
`--json` carries `"answers": false`."""

from __future__ import annotations

import pytest

from app.core.events import Task
from app.core.models.catalog import JudgeCutoffs
from app.core.records import Citation, Claim, Evidence, ResearchResult, Support
from app.core.research.answer.check import ANSWER_MARGIN, mark_off_point, off_question
from tests.support.library import desk_on, tiny_settings

QUESTION = "Which enzyme methylates SmD1 in the cytoplasm?"
SPLICING = ("Assembly of Spliceosomal Proteins", ["Mara Okafor"], [
    "# Results\n\nGem2 binds the SMN complex in the cytoplasm of HeLa cells.\n\n"
    "Knock-down of Gem2 reduced the assembly of U snRNPs by half.",
    "# Methylation\n\nSmD1 is symmetrically dimethylated on arginine by PRMT5 in the cytoplasm.\n\n"
    "Without this methylation SmD1 binds the SMN complex poorly.",
])
OFF = "Gem2 binds the SMN complex in the cytoplasm of HeLa cells."
ON = "PRMT5 dimethylates SmD1 on arginine in the cytoplasm."


@pytest.mark.parametrize("query, claim, quote, off", [
    (QUESTION, OFF, OFF, True),  # another protein, and its sentence says nothing of SmD1
    (QUESTION, ON, "", False),
    (QUESTION, "PRMT5 does, in the cytoplasm.", "SmD1 is symmetrically dimethylated by PRMT5.", False),  # its sentence is about SmD1
    ("What does D215W change in the kinase?", "G140A lowers the kinase's activity by 40 %.", "G140A lowers activity.", True),
    ("Which enzyme methylates Sm proteins?", OFF, OFF, False),  # no coded name asked: the rule cannot tell
    (QUESTION, "The enzyme works in the cytoplasm.", "", False),  # the claim names nothing coded
])
def test_the_rule_reads_what_the_claim_and_its_sentences_speak_of(query, claim, quote, off):
    assert bool(off_question(query, claim, quote)) is off


def _result(claims: list[tuple[str, str, float | None]]) -> ResearchResult:
    """An answer whose claims (text, verdict, P(yes) of answering) each cite passage 1 and quote themselves."""
    e = Evidence(number=1, paper_id="okafor", page=2, page_label="2", section="Results", text=OFF + " " + ON, score=0.7)
    result = ResearchResult(query=QUESTION, evidence=[e])
    for i, (text, verdict, p) in enumerate(claims):
        result.claims.append(Claim(text, [1], verdict, answers=p))
        result.citations.append(Citation("[okafor, page 2]", "okafor", 2, "verified", support=verdict, quote=text, claim=i))
    return result


def test_a_supported_claim_rated_clearly_below_the_best_sentence_is_not_an_answer():
    result = _result([("The enzyme is active.", "supported", 0.1), ("It acts in the cytoplasm.", "supported", 0.8),
                      ("The enzyme is PRMT7.", "unsupported", 0.1)])
    assert mark_off_point(result, best_answer=0.1 + ANSWER_MARGIN) == 1
    assert result.claims[0].off_point and not result.claims[1].off_point
    assert not result.claims[2].off_point  # not supported: its own mark already says so
    view = result.claims_view()
    assert [c["answers"] for c in view] == [False, True, None]
    assert view[0]["answers_note"] == result.claims[0].off_point
    counts = result.claim_counts()
    assert (counts["supported"], counts["off_point"]) == (1, 1)  # never counted as a supported answer


@pytest.mark.slow
def test_a_true_claim_about_another_protein_is_not_marked_green_with_the_real_model(tmp_path, tiny_models):
    """A real PDF, the real check with SmolLM2 as judge: the claim about Gem2 is supported by its
    passage (the judge's cut-offs set to pass whatever the rules pass, so the support is not in
    doubt) and is still not marked as an answer to a question about SmD1; the claim about SmD1 is."""
    from app.core.research.answer.synthesis import check_claims
    from app.ui.common.answer_render import render_answer

    with desk_on(tmp_path, {"okafor.pdf": SPLICING}, tiny_settings(tiny_models)) as desk:
        found = desk.research(QUESTION, Task(), evidence_only=True,
                              overrides={"cutoff_summaries": 0.0, "cutoff_evidence": 0.0, "k_evidence": 10})
        by_sentence = {s: next(e for e in found.evidence if s.split(" in the")[0] in " ".join(e.text.split()))
                       for s in (OFF, "SmD1 is symmetrically dimethylated")}
        result = ResearchResult(query=QUESTION, evidence=found.evidence)
        result.claims = [Claim(OFF, [by_sentence[OFF].number]), Claim(ON, [by_sentence["SmD1 is symmetrically dimethylated"].number])]
        chat = desk.chat()
        chat.judge_cutoffs = JudgeCutoffs(supported=0.0, partial=0.0)
        check_claims(desk.funnel(Task()), result, chat)
    off, on = result.claims
    assert off.support == on.support == Support.SUPPORTED.value, [c.note for c in result.citations]
    assert "gem2" in off.off_point and "smd1" in off.off_point and not on.off_point
    assert [c["answers"] for c in result.claims_view()] == [False, True]
    html = render_answer(result)
    first, second = html.split("PRMT5", 1)  # the Gem2 claim's citation comes first
    assert 'class="mark aside"' in first and 'class="mark ok"' not in first
    assert 'class="mark ok"' in second
    assert any(m.startswith("Answer check: 1 supported claim") for m in result.messages)
