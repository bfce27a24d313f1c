"""Models measured (issue 51) with the real tiny model: the judge calibrated and its cut-offs kept per
model, a rating on a real library built here, a judge chosen (the previous one kept when the new one
fails), and questions made from a paper's sentences."""

from __future__ import annotations

import json

import pytest

from app.core.errors import ResearchDeskError
from app.core.models import calibrations, factory
from app.core.rating import labelled
from app.core.rating.calibrate import calibrate, rescored
from app.core.rating.questions import Question, is_right, questions_from
from app.core.settings import ModelConfig
from tests.support.servers import free_port

# Sentences of the kinds the questions are made from: a figure, a name, a direction.
SURVEY = (
    "Household Water Use in Three Districts",
    ["Ana Ruiz", "Jon Park"],
    ["# Abstract\n\nWe surveyed how households in three districts use water across one dry season.",
     "# Methods\n\nThe survey reached 1,240 households in the northern districts during the spring of the dry year. "
     "Meters were read by trained volunteers from the local water board every single week.",
     "# Results\n\nAverage daily use per household was 312.5 litres across all of the surveyed districts. "
     "Water use increased with household size in every district that the volunteers visited. "
     "Leaks were found in 18% of the houses where the volunteers inspected the kitchen pipes."],
)


@pytest.fixture
def some_pairs(monkeypatch):
    """The first 24 labelled pairs (constructed: supported and misattributed), to keep the tiny model's run short."""
    rows = labelled.load_rows()[:24]
    monkeypatch.setattr(labelled, "load_rows", lambda path=None: rows)
    monkeypatch.setattr("app.core.rating.calibrate.load_rows", lambda path=None: rows)
    return rows


def test_questions_from_a_papers_sentences_and_their_answers():
    text = " ".join(SURVEY[2])
    qs = {q.kind: q for q in questions_from("survey", "Title line of the paper.\n" + text)}
    assert qs["figure"].answer in {"1,240", "312.5", "18%"} and "___" in qs["figure"].text
    assert qs["direction"].answer == "increased" and "“decreased” or “increased”" in qs["direction"].text
    q = Question("…", "312.5", "figure", "survey", "")
    assert is_right(q, "Households used 312.5 litres a day [1].")
    assert not is_right(q, "Households used 1312.5 litres.") and not is_right(q, "They used 312.55 litres.")
    d = Question("…", "increased", "direction", "survey", "")
    assert is_right(d, "Use increased with size.") and not is_right(d, "It increased, then decreased.")


@pytest.mark.slow
def test_calibrate_chooses_cutoffs_by_the_rule_and_the_factory_uses_them(tiny_models, some_pairs):
    cfg = ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2)
    chat = factory.make_chat(cfg)
    try:
        seen = []
        cal = calibrate(chat, progress=lambda n, total: seen.append((n, total)))
    finally:
        chat.close()
    assert cal.calibrated and cal.score.pairs == 24 and seen[-1][0] == seen[-1][1] == cal.asked
    pairs = labelled.pairs_of(some_pairs)
    # The rule: no cut-off passing more misattributions than one in ten agrees better.
    assert (cal.score.misattributions_passed <= 0.1 * cal.score.misattributions
            or (cal.cutoffs.supported, cal.cutoffs.partial) == labelled.GRID[-1])
    assert cal.cutoffs.not_found <= cal.cutoffs.partial
    assert 0 < cal.score.agreement <= 1 and len(pairs) == 24
    key = calibrations.model_key(cfg)
    assert key.startswith("gguf:") and len(key) == 5 + 64
    calibrations.save(calibrations.StoredCalibration(key, "smollm2", cal.cutoffs.supported, cal.cutoffs.partial,
                                                     cal.score.agreement, cal.score.misattributions_passed,
                                                     cal.score.misattributions, cal.score.pairs,
                                                     not_found=cal.cutoffs.not_found))
    again = factory.make_chat(cfg)
    try:
        assert again.judge_cutoffs == cal.cutoffs
    finally:
        again.close()
    # A server's model is known by the server and its id.
    assert calibrations.model_key(ModelConfig(backend="openai", base_url="http://h:1/v1/", model="m")) == "openai:http://h:1/v1|m"


@pytest.mark.slow
def test_desk_calibrates_the_judge_and_keeps_its_cutoffs(make_desk, tmp_path, some_pairs, tiny_models):
    desk = make_desk(tmp_path / "lib")
    assert desk.model_state().uncalibrated_judge == desk.chat_config().describe()  # the window offers calibrating
    cal = desk.calibrate_judge(None)
    assert desk.model_state().uncalibrated_judge == ""
    stored = json.loads(calibrations.store_path().read_text())
    (record,) = stored.values()
    assert record["model"] == tiny_models["chat"].name and record["pairs"] == 24
    assert (record["supported"], record["partial"]) == (cal.cutoffs.supported, cal.cutoffs.partial)
    assert desk.chat().judge_cutoffs == cal.cutoffs
    # P(yes) is kept per pair (None where the rules decided), so the cut-offs can be chosen again
    # from it without the model: the same values give the same cut-offs and agreement.
    pairs = labelled.pairs_of(some_pairs)
    assert len(record["p_yes"]) == 24 and all((v is not None) == p.for_model for v, p in zip(record["p_yes"], pairs))
    again = rescored("judge", tuple(record["p_yes"]))
    assert again.cutoffs == cal.cutoffs and again.score == cal.score
    assert rescored("judge", tuple(record["p_yes"][:-1])) is None  # other pairs: the values no longer fit


def test_the_starter_comes_calibrated_at_the_catalogs_cutoffs():
    """The starter's P(yes) on every labelled pair ships with it (resources/judge/calibrations.json,
    measured with `models calibrate`), so rating it reads no pairs; scored again by today's rules
    and labels at the catalog's cut-offs, they give the agreement recorded with them."""
    from app.core.models import catalog

    entry = next(e for e in catalog.entries() if e.starter and e.role == "chat")
    stored = calibrations.lookup(f"gguf:{entry.sha256}")
    assert stored is not None and stored.cutoffs == entry.judge and len(stored.p_yes) == stored.pairs
    again = rescored(stored.model, stored.p_yes, entry.judge)
    assert again is not None and abs(again.score.agreement - stored.agreement) < 0.005
    assert again.score.misattributions_passed == stored.misattributions_passed
    # The manuscript check's "not found" cut is the rule's, on the same values: at most one in ten of
    # the supported pairs the model reads lie below it, and the next cut up would let more.
    rows, pairs = labelled.load_rows(), labelled.pairs_of(labelled.load_rows())
    asked = [v if p.for_model else None for v, p in zip(stored.p_yes, pairs)]
    assert labelled.choose_not_found(rows, pairs, asked, entry.judge.partial) == entry.judge.not_found
    supported = [v for r, v in zip(rows, asked) if r["label"] == "supported" and v is not None]
    assert sum(v < entry.judge.not_found for v in supported) <= 0.1 * len(supported)
    higher = min(c for c in labelled.NOT_FOUND_CUTS if c > entry.judge.not_found)
    assert sum(v < higher for v in supported) > 0.1 * len(supported)
    assert calibrations.is_calibrated(ModelConfig(path="/elsewhere/starter.gguf", catalog_id=entry.id)) is True
    assert calibrations.is_calibrated(ModelConfig(backend="openai")) is None  # which model: the server would say


def test_a_judge_that_does_not_load_or_a_server_that_is_down_keeps_the_previous_judge(make_desk, tmp_path, tiny_models):
    desk = make_desk(tmp_path / "lib")
    assert desk.choose_judge(str(tiny_models["chat"])) == f"judge: llama.cpp: {tiny_models['chat']}"
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ResearchDeskError, match="could not load .*The judge stays llama.cpp"):
        desk.choose_judge(str(broken))
    assert desk.settings.judge.path == str(tiny_models["chat"])
    desk.settings.chat = ModelConfig(backend="openai", base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ResearchDeskError, match="No OpenAI-compatible server answers .*The judge stays"):
        desk.choose_judge("some-model")
    saved = json.loads(desk.settings.file().read_text())
    assert saved["judge"]["path"] == str(tiny_models["chat"])
    assert desk.choose_judge("same") == "judge: the chat model"


@pytest.mark.slow
def test_rate_asks_questions_made_from_the_library_and_keeps_the_report(make_desk, tmp_path, some_pairs, tiny_models):
    from tests.support.pdf_factory import make_paper

    (tmp_path / "in").mkdir()
    make_paper(tmp_path / "in" / "survey.pdf", *SURVEY)
    desk = make_desk(tmp_path / "lib")
    assert desk.add([tmp_path / "in"]).ok
    report = desk.rate_models([str(tiny_models["chat"]), str(tmp_path / "missing.gguf")], questions=3)
    doc = report.to_dict()
    assert set(doc) == {"models", "recommended"} and set(doc["recommended"]) == {"chat", "judge"}
    good, missing = doc["models"]
    assert set(good) == {"name", "backend", "read_tps", "write_tps", "peak_mb", "judge", "answers", "answer_s_p50"}
    assert set(good["judge"]) == {"agreement", "misattributions_passed", "cutoffs"} and set(good["answers"]) == {"asked", "right"}
    assert good["answers"]["asked"] == 3 and good["read_tps"] > 0 and good["write_tps"] > 0 and good["peak_mb"] > 0
    assert good["judge"]["cutoffs"] is not None and good["answer_s_p50"] > 0
    assert "not found" in report.models[1].error and missing["answers"]["asked"] == 0 and missing["read_tps"] is None
    assert doc["recommended"]["chat"] == good["name"]
    kept = desk.last_rating()
    assert kept is not None and kept.to_dict() == doc and kept.models[1].error == report.models[1].error


def test_the_rule_takes_the_best_agreement_that_passes_at_most_one_misattribution_and_unsupported_pair_in_ten():
    rows = labelled.load_rows()
    pairs = labelled.pairs_of(rows)
    # A judge sure of what is supported, half-sure of what is partial: the rule finds where it cuts.
    level = {"supported": 0.9, "partial": 0.5, "unsupported": 0.1}
    p = [level[r["label"]] if pair.for_model else None for r, pair in zip(rows, pairs)]
    cuts = labelled.choose_cutoffs(rows, pairs, p)
    assert cuts.partial <= 0.5 < cuts.supported <= 0.9
    # One that says yes to unsupported pairs at 0.62: a cut at or below it passes them, so it is not taken.
    p = [0.62 if r["label"] == "unsupported" and v is not None else v for r, v in zip(rows, p)]
    cuts = labelled.choose_cutoffs(rows, pairs, p)
    s = labelled.score_cuts(rows, pairs, p, cuts)
    assert cuts.supported > 0.62 and s.unsupported_passed <= 0.1 * s.unsupported
