"""The three model backends against real models: llama.cpp in-process (SmolLM2-135M,
all-MiniLM-L6-v2), an OpenAI-compatible server (llama_cpp.server with SmolLM2 in a
subprocess) and LM Studio's failure paths (nothing listening, a stand-in that only
greets). No mocks of the model code."""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import numpy as np
import pytest

from app.core.errors import BackendUnavailable, Cancelled, ModelError, ModelNotFound, ModelTimeout
from app.core.models import factory
from app.core.models.llamacpp import LlamaCppChat
from app.core.models.llamacpp_embedding import LlamaCppEmbedding
from app.core.models.lmstudio_backend import LMStudioChat
from app.core.models.lmstudio_backend import list_models as lms_list_models
from app.core.models.openai_compat import OpenAIChat, OpenAIEmbedding
from app.core.models.openai_compat import list_models as oai_list_models
from app.core.settings import ModelConfig

from tests.support.paths import REFERENCE
from tests.support.servers import free_port, llama_server

HELLO = [{"role": "user", "content": "Say hello in one short sentence."}]
SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 40},
        "confident": {"type": "boolean"},
    },
    "required": ["answer", "confident"],
}
JSON_ASK = [
    {"role": "system", "content": "Reply in JSON."},
    {"role": "user", "content": "What is the capital of France?"},
]


# -- llama.cpp chat --------------------------------------------------------------


@pytest.fixture(scope="module")
def chat(tiny_models) -> Iterator[LlamaCppChat]:
    model = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    yield model
    model.close()


def test_chat_streams_tokens_and_returns_their_concatenation(chat):
    tokens: list[str] = []
    reply = chat.chat(HELLO, max_tokens=24, on_token=tokens.append)
    assert len(tokens) >= 1
    assert reply == "".join(tokens)
    assert reply.strip()


@pytest.mark.slow
def test_a_reseeded_model_writes_the_same_sampled_reply_again(chat):
    ask = [{"role": "user", "content": "Write one sentence about a river."}]
    replies = []
    for _ in range(2):
        chat.reseed(7)
        replies.append(chat.chat(ask, max_tokens=24, temperature=1.0))
    chat.reseed(8)
    others = {chat.chat(ask, max_tokens=24, temperature=1.0) for _ in range(3)}
    assert replies[0] == replies[1]
    assert others != {replies[0]}  # at this temperature another seed writes something else


def test_chat_cancel_after_three_tokens_stops_early_and_model_stays_usable(chat):
    tokens: list[str] = []
    with pytest.raises(Cancelled):
        chat.chat(HELLO, max_tokens=200, on_token=tokens.append, cancelled=lambda: len(tokens) >= 3)
    assert len(tokens) == 3
    assert chat.chat(HELLO, max_tokens=4)  # the instance is not left mid-generation


def test_chat_json_schema_reply_parses_with_required_keys(chat):
    reply = chat.chat(JSON_ASK, max_tokens=120, json_schema=SCHEMA, temperature=0.0)
    data = json.loads(reply)
    assert set(SCHEMA["required"]) <= set(data)
    assert isinstance(data["confident"], bool)


def test_chat_json_cut_off_at_max_tokens_is_a_clear_model_error(chat):
    with pytest.raises(ModelError, match="cut off at the 3-token limit"):
        chat.chat(JSON_ASK, max_tokens=3, json_schema=SCHEMA)


def test_chat_timeout(chat):
    with pytest.raises(ModelTimeout):
        chat.chat(HELLO, max_tokens=200, timeout_s=1e-6)


def test_chat_prompt_longer_than_context_is_a_clear_model_error(chat):
    with pytest.raises(ModelError, match="does not fit the model's context") as err:
        chat.chat([{"role": "user", "content": "word " * 3000}], max_tokens=8)
    assert err.value.hint


def test_chat_count_tokens_uses_the_tokenizer(chat):
    assert chat.count_tokens("hello world") == 2
    assert chat.context_length == 2048


@pytest.mark.slow
def test_prefilled_prompt_beginning_is_restored_and_gives_the_same_reply(chat, tiny_models, caplog):
    """A beginning read ahead is put back after another prompt evicted it, and the reply is
    the one a fresh model gives to the whole prompt (greedy decoding)."""
    system = {"role": "system", "content": "You answer questions about papers in one short sentence. " * 6}
    fixed = "Rules: use only the passage. Copy numbers exactly. Say nothing else.\n\nQuestion:"
    prompt = [system, {"role": "user", "content": fixed + " What colour is the sky in the passage?\nPassage: The sky was green."}]
    assert chat.prefill([system, {"role": "user", "content": fixed}]) > 40
    chat.chat([{"role": "user", "content": "Say hello."}], max_tokens=4, temperature=0.0)  # evicts the beginning
    prefixes = chat._prefixes
    tokens = prefixes.tokens(prompt)
    assert prefixes.cached(tokens) < 10
    with caplog.at_level(logging.DEBUG, logger="app.core.models.llamacpp"):
        reply = chat.chat(prompt, max_tokens=16, temperature=0.0)
    assert any("restored instead of read" in r.getMessage() for r in caplog.records)
    assert prefixes.cached(tokens) == len(tokens)  # restored, then the rest read on top of it
    fresh = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    try:
        assert fresh.chat(prompt, max_tokens=16, temperature=0.0) == reply
    finally:
        fresh.close()


@pytest.mark.slow
def test_beginnings_used_by_every_answer_stay_kept_beside_one_new_each_time(chat):
    """Each answer reads ahead the answer prompt's beginning, the quote rating's system prompt,
    a rating beginning that holds its question (new every time) and the check's, in that order.
    Dropped in the order first read, the answer's beginning was read again every third answer;
    kept least-recently-used, none of the shared ones is read twice."""
    from app.core.models.llama_prefix import CAPACITY

    answer = [{"role": "user", "content": "Answer from the passages below. Copy numbers exactly. " * 3}]
    rating_system = {"role": "system", "content": "You find the sentences of papers that answer a question. " * 3}
    rating = [rating_system, {"role": "user", "content": "Question:"}]
    check = [{"role": "user", "content": "Does the cited text state this claim? Reply yes or no. " * 3}]
    for n in range(8):
        first = n == 0
        assert (chat.prefill(answer) > 0) == first, f"answer {n}: the answer's beginning was read again"
        assert (chat.prefill(rating) > 0) == first, f"answer {n}: the rating's beginning was read again"
        question = [rating_system, {"role": "user", "content": f"Question: which gene did knockout {n} remove?"}]
        assert 0 < chat.prefill(question) < 30  # only its question: the kept system prompt is put back
        assert (chat.prefill(check) > 0) == first, f"answer {n}: the check's beginning was read again"
    prefixes = chat._prefixes
    assert len(prefixes.kept()) == CAPACITY and prefixes.kept()[-1] == prefixes.tokens(check)


def test_reading_ahead_a_longer_beginning_restores_the_kept_shorter_one(chat):
    """The quote rating keeps its system prompt once per model, then reads ahead the question of
    each answer: only the part after the kept beginning is read, even after other prompts."""
    system = {"role": "system", "content": "Strictly rate each sentence of a paper against the question. " * 5}
    shared = [system, {"role": "user", "content": "Question:"}]
    assert chat.prefill(shared) > 40
    chat.chat([{"role": "user", "content": "Say hello."}], max_tokens=4, temperature=0.0)  # the cache moves on
    longer = [system, {"role": "user", "content": "Question: which gene did the knockout remove?\n\nDoes the sentence say?"}]
    prefixes = chat._prefixes
    full, kept = prefixes.tokens(longer), prefixes.tokens(shared)
    from app.core.models.llama_prefix import common_prefix

    assert chat.prefill(longer) == len(full) - common_prefix(full, kept) < len(full) // 2


def test_missing_or_bad_gguf_is_model_not_found(tmp_path):
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ModelNotFound) as err:
        factory.make_chat(ModelConfig(path=str(missing)))
    assert str(missing) in str(err.value)
    assert "models setup" in err.value.hint
    fake = tmp_path / "notes.gguf"
    fake.write_text("not a model")
    with pytest.raises(ModelNotFound, match="Not a GGUF"):
        LlamaCppEmbedding(ModelConfig(path=str(fake)))


def test_unknown_backend_is_model_error():
    with pytest.raises(ModelError, match="Unknown model backend 'ollama'"):
        factory.make_chat(ModelConfig(backend="ollama"))
    with pytest.raises(ModelError):
        factory.make_embedding(ModelConfig(backend=""))


# -- llama.cpp embeddings --------------------------------------------------------


@pytest.fixture(scope="module")
def embedder(tiny_models) -> Iterator[LlamaCppEmbedding]:
    cfg = ModelConfig(path=str(tiny_models["embedding"]), context_length=512, threads=2)
    model = factory.make_embedding(cfg)
    yield model
    model.close()


def test_embeddings_are_unit_vectors_batch_equals_single_and_match_reference(embedder):
    ref = json.loads((REFERENCE / "minilm-reference-embeddings.json").read_text(encoding="utf-8"))
    texts = ref["texts"]
    batch = embedder.embed(texts)
    assert batch.shape == (5, 384) and batch.dtype == np.float32 and embedder.dimension == 384
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    single = np.stack([embedder.embed_one(t) for t in texts])
    assert (np.sum(batch * single, axis=1) > 0.999).all()
    expected = np.asarray(ref["embeddings"], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert (np.sum(batch * expected, axis=1) >= 0.999).all()


def test_short_texts_run_on_one_thread_with_the_same_vectors(embedder, monkeypatch):
    from app.core.models import llamacpp_embedding

    short = "How are heteroskedasticity-consistent standard errors computed?"
    long = "Sandwich estimators of the covariance matrix stay valid under heteroskedasticity. " * 12
    assert embedder.count_tokens(short) <= llamacpp_embedding.SINGLE_THREAD_TOKENS < embedder.count_tokens(long)
    mixed = embedder.embed([short, long, short])  # switches 1 → 2 → 1 threads
    assert embedder._threads_now == 1, "the last text was short: one thread"
    monkeypatch.setattr(llamacpp_embedding, "SINGLE_THREAD_TOKENS", 0)  # every text on all threads
    every_core = embedder.embed([short, long])
    assert embedder._threads_now == embedder._threads == 2
    assert np.allclose(mixed[0], mixed[2], atol=1e-6)
    assert (np.sum(mixed[:2] * every_core, axis=1) > 0.9999).all()


def test_leaving_a_core_to_the_reading_runs_one_thread_fewer_with_the_same_vectors(embedder):
    """Import leaves the PDF reader a core while it reads (ingest/pipeline.py)."""
    long = "Sandwich estimators of the covariance matrix stay valid under heteroskedasticity. " * 12
    every_core = embedder.embed([long])
    assert embedder._threads_now == embedder._threads == 2
    try:
        embedder.leave_cores(1)
        shared = embedder.embed([long])
        assert embedder._threads_now == 1
        embedder.leave_cores(5)  # never under one thread
        embedder.embed([long])
        assert embedder._threads_now == 1
    finally:
        embedder.leave_cores(0)
    embedder.embed([long])
    assert embedder._threads_now == 2
    assert float(np.dot(every_core[0], shared[0])) > 0.9999


def test_embedding_truncates_long_input_instead_of_failing(embedder):
    long_text = "regression models with heteroskedastic errors " * 400  # ~2,400 tokens
    assert embedder.count_tokens(long_text) == embedder.max_tokens == 512
    vectors = embedder.embed([long_text, "short", ""])
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


# -- LM Studio -------------------------------------------------------------------


def test_lmstudio_not_running_is_one_clear_message_quickly():
    start = time.monotonic()
    with pytest.raises(BackendUnavailable) as err:
        factory.make_chat(ModelConfig(backend="lmstudio", host="127.0.0.1:1", model="any"))
    assert time.monotonic() - start < 3.5
    assert err.value.message == "LM Studio is not running at 127.0.0.1:1"
    assert "Start Server" in err.value.hint
    assert "Traceback" not in str(err.value) and err.value.__cause__ is None
    with pytest.raises(BackendUnavailable, match="not running at 127.0.0.1:1"):
        lms_list_models("http://127.0.0.1:1/")


def test_lmstudio_greeting_without_api_is_backend_unavailable():
    # Answers LM Studio's greeting but has no websocket API: the SDK's own
    # failure must come out as one of our errors, not an SDK exception.
    class Greeter(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b'{"lmstudio": true}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Greeter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host = f"127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(BackendUnavailable, match=f"LM Studio at {host}"):
            LMStudioChat(ModelConfig(backend="lmstudio", host=host, model="qwen"))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# -- OpenAI-compatible server ------------------------------------------------------


@pytest.fixture(scope="module")
def openai_server(tiny_models, tmp_path_factory) -> Iterator[str]:
    """llama_cpp.server serving SmolLM2 (chat)."""
    log = tmp_path_factory.mktemp("server") / "chat.log"
    with llama_server(tiny_models["chat"], log, "--n_ctx", "2048") as url:
        yield url


@pytest.fixture(scope="module")
def remote_chat(openai_server) -> Iterator[OpenAIChat]:
    model = factory.make_chat(ModelConfig(backend="openai", base_url=openai_server))
    yield model
    model.close()


def test_openai_chat_streams(remote_chat):
    tokens: list[str] = []
    reply = remote_chat.chat(HELLO, max_tokens=24, on_token=tokens.append)
    assert len(tokens) >= 1 and reply == "".join(tokens)


def test_openai_chat_cancel(remote_chat):
    tokens: list[str] = []
    with pytest.raises(Cancelled):
        remote_chat.chat(HELLO, max_tokens=200, on_token=tokens.append, cancelled=lambda: len(tokens) >= 3)
    assert len(tokens) == 3


def test_openai_chat_json_schema_falls_back_to_json_object(remote_chat):
    # llama_cpp.server rejects response_format "json_schema" (with a 500) but reads a
    # schema in "json_object": the first call must fall back transparently.
    reply = remote_chat.chat(JSON_ASK, max_tokens=120, json_schema=SCHEMA, temperature=0.0)
    assert set(SCHEMA["required"]) <= set(json.loads(reply))


def test_openai_list_models_and_lmstudio_probe_of_a_foreign_server(openai_server, tiny_models):
    models = oai_list_models(openai_server.removesuffix("/v1"))  # a bare host gets /v1
    assert [m.id for m in models] == [str(tiny_models["chat"])]
    host = openai_server.removeprefix("http://").removesuffix("/v1")
    with pytest.raises(BackendUnavailable, match="is not LM Studio"):
        LMStudioChat(ModelConfig(backend="lmstudio", host=host))


def test_openai_unreachable_names_the_url():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(BackendUnavailable) as err:
        factory.make_chat(ModelConfig(backend="openai", base_url=url))
    assert url in err.value.message
    with pytest.raises(BackendUnavailable, match="127.0.0.1"):
        factory.list_models(ModelConfig(backend="openai", base_url=url))


def test_openai_embeddings_match_in_process_llama_cpp(tiny_models, embedder, tmp_path):
    texts = ["The cat sat on the mat.", "Linear mixed-effects models in lme4."]
    log = tmp_path / "emb.log"
    with llama_server(tiny_models["embedding"], log, "--embedding", "true", "--n_ctx", "512") as url:
        remote = factory.make_embedding(ModelConfig(backend="openai", base_url=url))
        try:
            assert isinstance(remote, OpenAIEmbedding) and remote.dimension == 384
            vectors = remote.embed(texts)
        finally:
            remote.close()
    assert (np.sum(vectors * embedder.embed(texts), axis=1) > 0.999).all()


def test_openai_chat_timeout_is_model_timeout(remote_chat):
    with pytest.raises(ModelTimeout):
        remote_chat.chat(HELLO, max_tokens=200, timeout_s=1e-6)
    assert remote_chat.chat(HELLO, max_tokens=4)  # the shared client still works afterwards
