"""The typed settings: validated when built, read from a file without ever stopping the app."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pydantic import ValidationError

from app.core.settings import ModelConfig, ResearchParams, Settings


def test_settings_stay_dataclasses_and_replace_validates():
    s = Settings(chat=ModelConfig(path="/m/chat.gguf", context_length=2048))
    assert dataclasses.is_dataclass(s) and s.chat.path == "/m/chat.gguf"
    tighter = dataclasses.replace(s.research, k_evidence=5, cutoff_evidence=0.4)
    assert (tighter.k_evidence, tighter.cutoff_evidence, s.research.k_evidence) == (5, 0.4, 15)
    with pytest.raises(ValidationError, match="k_evidence"):
        dataclasses.replace(s.research, k_evidence="many")
    with pytest.raises(ValidationError, match="context_length"):
        ModelConfig(context_length="big")


def test_save_and_load_round_trip(tmp_path):
    path = tmp_path / "settings.json"
    s = Settings(library="/papers", theme="dark")
    s.research.k_evidence = 9
    s.deep.time_minutes = None
    s.save(path)
    back, problems = Settings.load_checked(path)
    assert problems == []
    assert back == s and back.deep.time_minutes is None


def test_unknown_keys_and_wrong_types_give_one_line_each_and_keep_the_rest(tmp_path):
    path = tmp_path / "settings.json"
    written = {
        "library": "/papers",
        "from_a_newer_version": True,
        "chat": {"model": "qwen", "threads": "two", "colour": "red"},
        "research": {"k_evidence": "ten", "cutoff_evidence": 0.3, "temperature": 1},
        "deep": 5,
    }
    path.write_text(json.dumps(written), encoding="utf-8")
    s, problems = Settings.load_checked(path)
    # Good values kept, bad ones back to their defaults.
    assert (s.library, s.chat.model, s.research.cutoff_evidence, s.research.temperature) == ("/papers", "qwen", 0.3, 1.0)
    assert (s.chat.threads, s.research.k_evidence, s.deep.time_minutes) == (0, 15, 5.0)
    assert all("\n" not in p and str(path) in p for p in problems)
    text = "\n".join(problems)
    for key in ("'from_a_newer_version' ignored", "'chat.colour' ignored", "'chat.threads' = 'two' rejected",
                "'research.k_evidence' = 'ten' rejected", "'deep' = 5 rejected"):
        assert key in text
    # What the user wrote is not lost when the defaults are saved over it.
    assert json.loads((tmp_path / "settings.rejected.json").read_text(encoding="utf-8")) == written


def test_unknown_keys_alone_keep_no_copy_and_load_logs(tmp_path, caplog):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"theme": "light", "later_option": 1}), encoding="utf-8")
    with caplog.at_level("WARNING", logger="app.core.settings"):
        s = Settings.load(path)
    assert s.theme == "light"
    assert "'later_option' ignored" in caplog.text
    assert not (tmp_path / "settings.rejected.json").exists()


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_unreadable_or_wrong_shape_falls_back_to_defaults(tmp_path, content):
    path = tmp_path / "settings.json"
    path.write_text(content, encoding="utf-8")
    s, problems = Settings.load_checked(path)
    assert s == Settings()
    assert len(problems) >= 1 and str(path) in problems[0]
    kept = tmp_path / ("settings.damaged.json" if content.startswith("{") else "settings.rejected.json")
    assert kept.read_text(encoding="utf-8") == content


def test_research_params_reject_a_string_for_a_number():
    with pytest.raises(ValidationError):
        ResearchParams(focus_tokens="lots")


def test_an_older_file_takes_the_defaults_changed_since_and_keeps_what_the_user_chose(tmp_path):
    """Save writes every value, so a file saved before a default changed holds the old default
    as if chosen: loaded, it takes today's; a value the user set stays, and so does one saved
    under today's defaults."""
    from app.core.settings import SETTINGS_VERSION

    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"research": {"temperature": 0.2, "first_claim_read_s": 5.0, "k_evidence": 9}}),
                    encoding="utf-8")
    s, problems = Settings.load_checked(path)
    assert problems == []
    assert (s.research.temperature, s.research.first_claim_read_s, s.research.k_evidence) == (0.0, 0.0, 9)
    path.write_text(json.dumps({"research": {"temperature": 0.7}}), encoding="utf-8")
    assert Settings.load(path).research.temperature == 0.7  # chosen, not the old default
    s.research.temperature = 0.2  # chosen after the change: saved with today's version, it stays
    s.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == SETTINGS_VERSION
    assert Settings.load(path).research.temperature == 0.2


def test_a_file_of_version_2_keeps_its_import_batch_size_under_ingest(tmp_path):
    """Version 3 moved `import_batch_size` into the import group: a file saved before keeps the
    user's value, with no 'unknown setting' message."""
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 2, "import_batch_size": 4, "research": {"k_evidence": 9}}), encoding="utf-8")
    s, problems = Settings.load_checked(path)
    assert problems == []
    assert (s.ingest.batch_size, s.research.k_evidence) == (4, 9)
    s.save(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert "import_batch_size" not in saved and saved["ingest"] == {"batch_size": 4}


def test_every_stage_setting_has_one_line_of_doc():
    """The settings dialog shows each field's description as its tooltip."""
    from dataclasses import fields

    from app.core.settings import DeepParams, ImportParams, describe

    for group in (ResearchParams, DeepParams, ImportParams):
        for f in fields(group):
            text = describe(group, f.name)
            assert text and "\n" not in text, f"{group.__name__}.{f.name} has no one-line description"
