"""Models loaded on a thread while other work goes on (factory.load_ahead), with the real
SmolLM2-135M and MiniLM through llama.cpp: loads side by side leave the process's output where it
was, the models loaded ahead are the ones the question gets, and one nobody takes is closed."""

from __future__ import annotations

import os
import threading

import pytest

from app.core.errors import ModelNotFound
from app.core.models import factory
from app.core.models.llamacpp import _load
from app.core.settings import ModelConfig


def _where(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def test_loads_on_several_threads_at_once_leave_stdout_and_stderr_where_they_were(tiny_models):
    # llama-cpp-python silences a load by pointing fds 1 and 2 at /dev/null and back; two loads
    # that overlap restored each other's /dev/null, and a command's JSON answer went nowhere.
    before = _where(1), _where(2)
    paths = [tiny_models["chat"], tiny_models["embedding"]] * 3
    errors: list[BaseException] = []

    def load(path) -> None:
        try:
            _load(path, n_ctx=256).close()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    for _ in range(3):  # unserialised, one burst of six loads lost the descriptors in 2 runs of 3
        threads = [threading.Thread(target=load, args=(p,)) for p in paths]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert (_where(1), _where(2)) == before


def test_the_models_loaded_ahead_are_the_ones_make_chat_and_make_embedding_return(tiny_models):
    chat_cfg = ModelConfig(path=str(tiny_models["chat"]), context_length=512)
    emb_cfg = ModelConfig(path=str(tiny_models["embedding"]))
    factory.load_ahead(chat=chat_cfg, embedding=emb_cfg)
    ahead = factory._ahead
    assert ahead is not None and ahead.thread.name == "models-ahead"
    count = factory.token_counter(chat_cfg)  # the loaded model's vocabulary, lent
    embedder = factory.make_embedding(emb_cfg)
    chat = factory.make_chat(chat_cfg)
    try:
        assert count == chat.count_tokens and not ahead.models  # both taken
        assert count("Kestrels hover.") == chat.count_tokens("Kestrels hover.") > 0
        assert embedder.embed(["Kestrels hover over meadows."]).shape == (1, embedder.dimension)
        assert "".join(chat.chat([{"role": "user", "content": "Say hi."}], max_tokens=4)).strip()
        other = factory.make_chat(chat_cfg)  # taken once: a second model is a load of its own
        assert other is not chat
        other.close()
    finally:
        chat.close()
        embedder.close()
        factory.drop_ahead()


def test_a_model_loaded_ahead_for_other_settings_is_closed_not_returned(tiny_models):
    factory.load_ahead(chat=ModelConfig(path=str(tiny_models["chat"]), context_length=512))
    ahead = factory._ahead
    ahead.thread.join()
    loaded = ahead.models["chat"]
    chat = factory.make_chat(ModelConfig(path=str(tiny_models["chat"]), context_length=256))
    try:
        assert chat is not loaded and chat.context_length == 256
        assert loaded._llm is None  # closed
    finally:
        chat.close()
        factory.drop_ahead()


def test_a_model_nobody_took_is_closed_and_a_failed_load_leaves_make_chat_to_say_why(tiny_models, tmp_path):
    factory.load_ahead(chat=ModelConfig(path=str(tiny_models["chat"]), context_length=256))
    ahead = factory._ahead
    factory.drop_ahead()
    assert factory._ahead is None and ahead.models["chat"]._llm is None

    missing = ModelConfig(path=str(tmp_path / "gone.gguf"))
    factory.load_ahead(chat=missing)
    try:
        with pytest.raises(ModelNotFound) as raised:
            factory.make_chat(missing)
        assert "gone.gguf" in raised.value.message
    finally:
        factory.drop_ahead()


def test_a_server_backend_is_not_loaded_ahead():
    factory.load_ahead(chat=ModelConfig(backend="openai", model="m"), embedding=ModelConfig(backend="lmstudio", model="e"))
    assert factory._ahead is None


def test_once_its_models_are_taken_a_process_can_load_ahead_again(tiny_models):
    cfg = ModelConfig(path=str(tiny_models["chat"]), context_length=256)
    factory.load_ahead(chat=cfg)
    first = factory.make_chat(cfg)
    factory._ahead.thread.join()
    factory.load_ahead(chat=cfg)  # a second question in the same process (a test calling main twice)
    second = factory.make_chat(cfg)
    try:
        assert second is not first and second._llm is not None
    finally:
        first.close()
        second.close()
        factory.drop_ahead()
