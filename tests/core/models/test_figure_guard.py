"""A structured reply's figures are those its evidence prints (app/core/models/figure_guard.py):
the guard's reading of a JSON reply, and the real SmolLM2-135M held to it through the chat backend
and the answer engine's writer."""

from __future__ import annotations

import json
import re

import pytest

from app.core.models.figure_guard import FigureGuard, figures_of, small
from app.core.models.llamacpp import LlamaCppChat
from app.core.settings import ModelConfig

EVIDENCE = "The n-hexane fraction gave an LC50 of 2.17 µg/ml; 37,364 operations; share 0.083 (Table 6)."


def _written(guard: FigureGuard, pieces: list[str]) -> list[bool]:
    """Whether each piece is allowed after the ones before it (refused pieces are not written)."""
    out = []
    for piece in pieces:
        ok = guard.allows(piece.encode("utf-8"))
        if ok:
            guard.accept(piece.encode("utf-8"))
        out.append(ok)
    return out


def test_the_figures_a_passage_prints_in_the_forms_a_claim_may_write_them():
    printed = figures_of(EVIDENCE)
    assert {"2.17", "37,364", "0.083", "50", "6"} <= printed
    assert "37364" in printed, "a thousands separator may be left out"
    assert "8.3" in printed, "a share may be written as a percentage"
    assert figures_of("since release 0.9.11") == {"0.9.11"}, "a version is no share"
    assert {"12", "25", "0.83", "10", "6"} <= figures_of("twelve plots; Twenty-five sites; 83 % of 10⁶ cells")
    assert small("2") and small("0.05") and not small("10") and not small("300")


def test_a_passage_header_is_a_label_not_figures_a_claim_may_write():
    """The starter model wrote a DOI-made paper id and a page from the headers as its answer."""
    from types import SimpleNamespace

    from app.core.records import Evidence
    from app.core.research.answer.prompt import format_passage, printed_figures

    passage = Evidence(3, "10.1186-1472-6963-14-1", 5, "5", "3.2 Results", "Out of the 100 sampled outpatients, 98 responded.", 0.5)
    turn = f"Question: How many of the 250 invited answered?\n\n{format_passage(passage)}"
    assert "6963" in turn and "page 5" in turn
    figures = printed_figures(SimpleNamespace(holds_figures=True), turn)["figures"]
    assert {"100", "98", "250"} <= figures, "the passage's own figures and the question's stay"
    assert not {"10.1186", "1472", "6963", "14", "5", "3.2"} & figures
    assert printed_figures(SimpleNamespace(holds_figures=False), turn) == {}


def test_a_figure_is_held_while_written_and_when_it_ends():
    opening = b'{"claims": [{"text": "'
    assert _written(FigureGuard(figures_of(EVIDENCE), opening), ["LC50 of ", "2", ".", "1", "7", " µg/ml."]) == [True] * 6
    # "2.5": the "5" would make a figure the evidence does not print; it is refused as it comes.
    assert _written(FigureGuard(figures_of(EVIDENCE), opening), ["was 2", ".", "5"]) == [True, True, False]
    # "17" may still become "17.3" while it is written; it is refused once the run ends.
    assert _written(FigureGuard(figures_of("17.3 units"), opening), ["1", "7", " units"]) == [True, True, False]
    # A figure at the end of a sentence, or before a comma in a list, is the figure without them.
    assert _written(FigureGuard(figures_of(EVIDENCE), opening), ["2.17", ".", ' "', "}"]) == [True] * 4
    # A count the passage spells out may be written in digits: not turned away at "1" of "12".
    assert _written(FigureGuard(figures_of("twelve plots"), opening), ["1", "2", " plots"]) == [True] * 3
    # One significant digit is always allowed, as the support check allows it.
    assert _written(FigureGuard(frozenset(), opening), ["2 models, p < 0.05, Table 3"]) == [True]


def test_only_strings_are_held_and_escapes_are_read():
    guard = FigureGuard(frozenset({"2.17"}))
    assert _written(guard, ['{"text": "LC value ', "2.17", '", "sources": [', "12, 14", "]}"]) == [True] * 5
    guard = FigureGuard(frozenset({"2.17"}))
    assert _written(guard, ['{"text": "a \\"', "2.17", '\\" b ', "99"]) == [True, True, True, False]


def test_an_opening_that_states_an_unprinted_figure_is_refused():
    with pytest.raises(ValueError):
        FigureGuard(frozenset({"2.17"}), b'{"text": "about 45 ')


# -- the real model ------------------------------------------------------------------------------

CLAIM_SCHEMA = {"type": "object", "properties": {"claim": {"type": "string"}}, "required": ["claim"]}
COPY = [{"role": "user", "content": 'Reply with JSON {"claim": "..."} holding this sentence copied exactly: '
                                    "The dropout net reached a test error of 43.48 percent on CIFAR-100."}]
FIGURE = re.compile(r"[0-9]+(?:[.,][0-9]+)*")


@pytest.fixture(scope="module")
def chat(tiny_models):
    model = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=1024, threads=2))
    yield model
    model.close()


@pytest.mark.slow
def test_the_real_model_writes_only_figures_its_evidence_prints(chat):
    free = json.loads(chat.chat(COPY, max_tokens=60, temperature=0.0, json_schema=CLAIM_SCHEMA))["claim"]
    assert "43.48" in free, "unheld, the model copies the figure (the case the guard must change)"
    allowed = figures_of("Its error was 37.20 percent, and 21.8 percent on TIMIT.")
    reply = chat.chat(COPY, max_tokens=60, temperature=0.0, json_schema=CLAIM_SCHEMA, figures=allowed)
    held = json.loads(reply)["claim"]  # still the schema's JSON
    assert "43.48" not in held
    written = FIGURE.findall(held)
    assert written and all(f in allowed or small(f) for f in written), held
    assert chat._llm.reply_figures is None, "figures hold one reply only"
    again = json.loads(chat.chat(COPY, max_tokens=60, temperature=0.0, json_schema=CLAIM_SCHEMA))["claim"]
    assert again == free


@pytest.mark.slow
def test_an_answer_holds_the_real_models_claims_to_the_figures_of_their_passages(fact_library):
    """Through the answer engine: each claim-writing call gets the figures of the turn that holds
    the passages and the question (not the worked answers' invented ones), and the real model's
    claims state no other figure."""
    from app.core.models import grammar_sampling
    from app.core.events import Task

    calls: list[tuple[str, frozenset[str] | None]] = []
    real = grammar_sampling.GrammarLastLlama._init_sampler

    def recording(self, *args, **kwargs):
        calls.append((kwargs.get("grammar") is not None, self.reply_figures))
        return real(self, *args, **kwargs)

    grammar_sampling.GrammarLastLlama._init_sampler = recording
    try:
        result = fact_library.funnel(Task()).run("How far did the glacier front retreat each year?")
    finally:
        grammar_sampling.GrammarLastLlama._init_sampler = real
    held = [figures for structured, figures in calls if structured and figures is not None]
    assert held, "the claims were written without the evidence's figures"
    assert all("38" in figures for figures in held)
    worked = " ".join(m["content"] for m in _worked_turns())
    invented = figures_of(worked) - figures_of(" ".join(e.text for e in result.evidence))
    assert invented and all(not (invented & figures) - {f for f in invented if small(f)} for figures in held)
    printed = frozenset().union(*held)
    for claim in result.claims:
        if not claim.quoted:
            assert all(f in printed or small(f) for f in FIGURE.findall(claim.text.rstrip("."))), claim.text


def _worked_turns():
    from app.core.research.answer.worked_answers import worked_turns

    return worked_turns("synthesis_first.md", {}, 2)
