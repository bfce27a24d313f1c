"""Prompt beginnings' states saved on disk (prefix_store.py): a fresh model loads them instead of
reading, replies as it would have, and ignores a file that is truncated or made for another key."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from app.core.models.llamacpp import LlamaCppChat
from app.core.models.prefix_store import PrefixStore
from app.core.settings import ModelConfig

SYSTEM = {"role": "system", "content": "You answer questions about papers in one short sentence. " * 6}
FIXED = "Rules: use only the passage. Copy numbers exactly. Say nothing else.\n\nQuestion:"
BEGINNING = [SYSTEM, {"role": "user", "content": FIXED}]
PROMPT = [SYSTEM, {"role": "user", "content": FIXED + " What colour is the sky in the passage?\nPassage: The sky was green."}]


def _model(tiny_models) -> LlamaCppChat:
    return LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))


def _states(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.kv"))


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "states"
    monkeypatch.setenv("RESEARCH_DESK_PREFIX_STATES_DIR", str(path))
    return path


@pytest.mark.slow
def test_a_fresh_model_loads_the_saved_beginning_and_replies_the_same(tiny_models, folder, caplog):
    first = _model(tiny_models)
    try:
        unwarmed = first.chat(PROMPT, max_tokens=16, temperature=0.0)  # the whole prompt read, nothing saved
        assert _states(folder) == []
        first.chat([{"role": "user", "content": "Say hello."}], max_tokens=4, temperature=0.0)  # the cache moves on
        assert first.prefill(BEGINNING) > 40  # read, kept, and saved
        assert len(_states(folder)) == 1
    finally:
        first.close()
    second = _model(tiny_models)
    try:
        with caplog.at_level(logging.DEBUG, logger="app.core.models.llama_prefix"):
            assert second.prefill(BEGINNING) == 0  # loaded, not read
        assert any("loaded from disk" in r.getMessage() for r in caplog.records)
        tokens = second._prefixes.tokens(BEGINNING)
        assert second._prefixes.cached(tokens) == len(tokens)
        assert second.chat(PROMPT, max_tokens=16, temperature=0.0) == unwarmed
        # a beginning that extends the kept one holds this question: read on top of it, not saved
        question = [SYSTEM, {"role": "user", "content": FIXED + " Which gene did knockout 4 remove?"}]
        assert 0 < second.prefill(question) < 30
        assert len(_states(folder)) == 1
    finally:
        second.close()


@pytest.mark.slow
def test_a_truncated_or_foreign_state_is_ignored_with_a_log_line(tiny_models, folder, caplog, monkeypatch):
    model = _model(tiny_models)
    try:
        model.prefill(BEGINNING)
        reference = model.chat(PROMPT, max_tokens=16, temperature=0.0)
    finally:
        model.close()
    (saved,) = _states(folder)
    whole = saved.read_bytes()
    saved.write_bytes(whole[: len(whole) // 2])  # a write cut short (disk full, killed)
    model = _model(tiny_models)
    try:
        with caplog.at_level(logging.INFO, logger="app.core.models.prefix_store"):
            assert model.prefill(BEGINNING) > 40  # read again
        assert any("ignored (truncated or damaged" in r.getMessage() for r in caplog.records)
        assert saved.read_bytes() == whole  # and saved whole again
        assert model.chat(PROMPT, max_tokens=16, temperature=0.0) == reference
    finally:
        model.close()

    caplog.clear()
    import llama_cpp

    monkeypatch.setattr(llama_cpp, "__version__", "0.0.1")  # a newer (here: other) llama.cpp reads the folder
    model = _model(tiny_models)
    try:
        with caplog.at_level(logging.INFO, logger="app.core.models.prefix_store"):
            assert model.prefill(BEGINNING) > 40
        assert any("saved for another llama_cpp" in r.getMessage() for r in caplog.records)
        assert model.chat(PROMPT, max_tokens=16, temperature=0.0) == reference
    finally:
        model.close()


def test_a_file_that_is_not_a_state_or_for_another_beginning_is_ignored(tmp_path, tiny_models, caplog):
    key = {"model": str(tiny_models["chat"]), "size": 1, "mtime_ns": 2, "llama_cpp": "x", "n_ctx": 2048}
    store = PrefixStore(tmp_path, key)
    store.save([1, 2, 3], b"state bytes")
    assert store.load([1, 2, 3]) == b"state bytes"
    assert store.load([1, 2, 4]) is None  # none saved: no line
    path = store._path([1, 2, 3])
    path.rename(store._path([1, 2, 4]))  # a file under another beginning's name
    with caplog.at_level(logging.INFO, logger="app.core.models.prefix_store"):
        assert store.load([1, 2, 4]) is None
        store._path([1, 2, 4]).write_bytes(b"\x00" * 64)
        assert store.load([1, 2, 4]) is None
    messages = [r.getMessage() for r in caplog.records]
    assert any("another prompt beginning" in m for m in messages) and any("not a saved state" in m for m in messages)
    assert PrefixStore(tmp_path, {**key, "size": 5}).load([1, 2, 3]) is None


def test_the_folder_keeps_the_most_recently_used_within_its_count_and_bytes(tmp_path, tiny_models, monkeypatch):
    import os

    from app.core.models import prefix_store

    monkeypatch.setattr(prefix_store, "MAX_FILES", 3)
    monkeypatch.setattr(prefix_store, "MAX_BYTES", 10_000)
    key = {"model": str(tiny_models["chat"]), "size": 1, "mtime_ns": 2, "llama_cpp": "x", "n_ctx": 2048}
    store = PrefixStore(tmp_path, key)
    for n in range(4):
        store.save([n], bytes(100))
        os.utime(store._path([n]), ns=(n * 10**9, n * 10**9))  # saved one after another
    assert store.load([0]) is None and store.load([1]) == bytes(100)  # the oldest dropped; [1] used now
    store.save([9], bytes(6_000))
    store.save([8], bytes(6_000))  # over the bytes: the least recently used go first
    assert store.load([8]) == bytes(6_000) and store.load([9]) is None
    assert store.load([1]) == bytes(100)
