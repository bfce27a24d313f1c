"""The answer's first turn grows with the chat model's measured reading speed (research/evidence/first_turn_size.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.research.evidence.first_turn_size import first_turn_tokens, record_reading, reading_speed, split_first
from app.core.settings import ResearchParams


@pytest.mark.parametrize("speed, expected", [
    (None, 300),  # not measured yet: the setting
    (20.0, 300),  # a slow machine keeps the floor (5 s reads 100 tokens there)
    (66.0, 330),  # the starter model on 2 cores: 5 s of reading
    (90.0, 450),
    (5000.0, 500),  # a GPU: capped
])
def test_the_first_turn_is_what_the_model_reads_in_the_allotted_seconds(speed, expected):
    assert first_turn_tokens(ResearchParams(first_claim_read_s=5.0), speed) == expected


def test_one_prompt_and_sizing_turned_off_keep_the_setting():
    assert first_turn_tokens(ResearchParams(first_claim_tokens=0), 5000.0) == 0
    assert first_turn_tokens(ResearchParams(first_claim_read_s=0), 5000.0) == 300


class _Chat:
    read_speeds: tuple[float, ...] = ()


def test_the_speed_is_the_median_of_the_last_answers_and_short_reads_do_not_count():
    chat = _Chat()
    assert reading_speed(chat) is None
    record_reading(chat, 10, 0.1)  # mostly the call's fixed cost
    assert reading_speed(chat) is None
    for tokens, seconds in [(300, 6.0), (300, 30.0), (300, 5.0)]:  # one slow answer (a busy machine)
        record_reading(chat, tokens, seconds)
    assert reading_speed(chat) == 50.0
    for _ in range(10):
        record_reading(chat, 600, 1.0)
    assert len(chat.read_speeds) == 5 and reading_speed(chat) == 600.0


def test_the_first_turn_takes_the_best_passages_up_to_its_budget_and_at_least_one():
    evidence = ["a", "b", "c"]
    cost = {"a": 200, "b": 150, "c": 50}.get
    assert split_first(evidence, 300, cost) == (["a"], ["b", "c"])
    assert split_first(evidence, 380, cost) == (["a", "b"], ["c"])
    assert split_first(evidence, 400, cost) == (evidence, [])
    assert split_first(evidence, 100, cost) == (["a"], ["b", "c"])
    assert split_first(evidence, 0, cost) == (evidence, [])


@pytest.mark.slow
def test_an_answer_times_its_reading_and_the_next_answer_reads_more_with_the_real_model(fact_library):
    desk = fact_library
    chat = desk.chat()
    saved = desk.settings.research, chat.read_speeds
    try:
        # A first turn of one passage, so that the answer has a first turn and a rest.
        desk.settings.research = replace(saved[0], first_claim_tokens=1, first_claim_max_tokens=4000, first_claim_read_s=5.0)
        chat.read_speeds = ()
        assert desk.funnel().params.first_claim_tokens == 1  # nothing measured yet
        result = desk.funnel().run("When do kestrels depart from alpine valleys in autumn?")
        assert result.claims, result.messages
        assert len(chat.read_speeds) == 1 and chat.read_speeds[0] > 0
        sized = desk.funnel().params.first_claim_tokens
        assert sized == min(4000, int(chat.read_speeds[0] * 5.0)) > 1
        # A first turn the caller sets is kept as set.
        assert desk.funnel(overrides={"first_claim_tokens": 1}).params.first_claim_tokens == 1
    finally:
        desk.settings.research, chat.read_speeds = saved


def test_passages_fit_the_budget_in_order_passing_over_one_too_big():
    from app.core.records import Evidence
    from app.core.research.evidence.first_turn_size import fit_within

    passages = [Evidence(number=n, paper_id="p", page=n, page_label=str(n), section="", text="x", score=0.5) for n in range(1, 5)]
    cost = {1: 50, 2: 80, 3: 30, 4: 40}
    fitted = fit_within(passages, 100, lambda e: cost[e.number])
    assert [e.number for e in fitted] == [1, 3]  # 2 would overflow; 3 still fits after it, 4 does not
    assert fit_within(passages[1:2], 60, lambda e: cost[e.number]) == []


def test_a_rated_model_sizes_its_evidence_and_time_limit_before_its_first_answer():
    from app.core.rating.rate import rated_speeds
    from app.core.research.evidence.first_turn_size import Rated, answer_timeout, evidence_tokens, sized

    params = ResearchParams(first_claim_read_s=5.0)  # the first turn sized by speed too (off by default)
    assert evidence_tokens(params, None) == 800 and evidence_tokens(params, 60.0) == 800  # the starter here: the setting
    assert evidence_tokens(params, 100.0) == 1200 and evidence_tokens(params, 5000.0) == 2400  # faster: more, capped
    assert answer_timeout(params, 60.0, 15.0, 800) == params.synthesis_timeout_s  # well within the limit
    assert answer_timeout(params, 20.0, 1.0, 800) == 4 * (800 / 20 + 300 / 1)  # a slow model gets the time it needs
    stored = {"models": [{"name": "big", "read_tps": 100.0, "write_tps": 1.0}, {"name": "gone", "error": "x", "read_tps": 9.0}]}
    assert rated_speeds(stored, "big") == Rated(100.0, 1.0) and rated_speeds(stored, "gone") == Rated() == rated_speeds(None, "big")
    grown = sized(params, _Chat(), rated_speeds(stored, "big"))
    assert (grown.first_claim_tokens, grown.focus_tokens, grown.synthesis_timeout_s) == (500, 1200, 4 * (12 + 300))
    # A field the question sets itself is left as set; a model that has answered here goes by its own reads.
    assert sized(params, _Chat(), Rated(100.0, 1.0), keep={"focus_tokens"}).focus_tokens == 800
    chat = _Chat()
    chat.read_speeds = (40.0,)
    assert sized(params, chat, Rated(100.0, None)) is params


def _spy_on_counters(monkeypatch) -> list:
    """The token counters focusing is given, one per call, as the calls come."""
    from app.core.research.answer import synthesis

    counters: list = []
    real = synthesis.focus_evidence

    def spy(*args, **kwargs):
        counters.append(kwargs.get("count_tokens"))
        return real(*args, **kwargs)

    monkeypatch.setattr(synthesis, "focus_evidence", spy)
    return counters


def test_focusing_counts_in_the_chat_models_tokens_once_the_model_is_loaded(fact_library, monkeypatch):
    """Focusing runs before synthesis loads the chat model. Each question's funnel had no model of
    its own when it focused, so it counted 4 characters a token: a row of figures costs far more
    in the model's tokens ("59.1 66.9 55.0 …"), the best passage's window overflowed the first
    turn, and the table row after it was left out of what the model read. With the model loaded
    (the desk warms it up), focusing counts with its tokenizer, as the first turn is cut."""
    from app.core.research.answer import synthesis

    counters = _spy_on_counters(monkeypatch)
    chat = fact_library.chat()
    funnel = fact_library.funnel()
    assert funnel.chat_loaded() is None and funnel.loaded_chat() is chat  # loaded by the desk, not by this funnel
    result = funnel.run("When do kestrels leave the alpine valleys?", evidence_only=True)
    synthesis.focus_into(funnel, result)
    assert counters and counters[0] is not None and counters[0].__self__ is chat
    figures = "59.1 66.9 55.0 70.9 68.8 73.7 76.7 71.1 84.1 80.0"
    assert chat.count_tokens(figures) > 1.5 * (len(figures) // 4)  # why the estimate misled


def test_focusing_counts_in_the_chat_models_tokens_before_the_model_is_loaded(tmp_path, tiny_models, monkeypatch):
    """A one-shot answer (`research-desk research`) focuses before anything has loaded the chat
    model. The GGUF's vocabulary alone (models.factory.token_counter) counts as the model will."""
    from app.core.desk import Desk
    from app.core.models.factory import token_counter
    from app.core.research.answer import synthesis
    from app.core.settings import ModelConfig
    from tests.support.library import tiny_settings

    counters = _spy_on_counters(monkeypatch)
    settings = tiny_settings(tiny_models)
    chat_cfg = settings.chat
    desk = Desk(settings, library=str(tmp_path / "lib"))
    try:
        from tests.support.pdf_factory import make_paper

        make_paper(tmp_path / "p.pdf", "Kestrel migration", ["A. Author"],
                   ["Kestrels leave the alpine valleys in late September. " * 3])
        assert desk.add([tmp_path / "p.pdf"]).ok
        funnel = desk.funnel(None)
        assert desk.loaded_chat() is None  # nothing has loaded the chat model
        result = funnel.run("When do kestrels leave the alpine valleys?", evidence_only=True)
        synthesis.focus_into(funnel, result)
        assert desk.loaded_chat() is None  # counting did not load the weights
    finally:
        desk.close()
    figures = "59.1 66.9 55.0 70.9 68.8 73.7 76.7 71.1 84.1 80.0"
    assert counters and counters[0] is not None and counters[0](figures) == token_counter(chat_cfg)(figures)
    assert counters[0](figures) > 1.5 * (len(figures) // 4)
    assert token_counter(ModelConfig(backend="lmstudio", model="any")) is None  # a server counts its own
    (tmp_path / "damaged.gguf").write_bytes(b"not a model")
    assert token_counter(ModelConfig(path=str(tmp_path / "damaged.gguf"))) is None  # estimated, not raised
