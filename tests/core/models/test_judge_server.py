"""The support check's judge on an OpenAI-compatible server: P(yes) from `top_logprobs` equals the
in-process P(yes) of the same model (llama_cpp.server with SmolLM2 started here, stopped after), and
a server that gives no probabilities judges in words (a stand-in server: failure injection)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from app.core.models import factory
from app.core.models.llamacpp import LlamaCppChat
from app.core.models.openai_compat import choice_mass
from app.core.rating.labelled import load_rows, pairs_of
from app.core.research.check.support import check_pairs, judge_beginning, judge_text, support_probability
from app.core.settings import ModelConfig

from tests.support.servers import llama_server


@pytest.fixture(scope="module")
def pairs():
    rows = load_rows()
    # Constructed pairs and the model's own claims, supported and not.
    picked = [r for r in rows if r["id"] in {"s01", "s02", "s03", "s10"}] + [r for r in rows if r.get("source") == "answers"][:4]
    return pairs_of(picked)


@pytest.mark.slow
def test_p_yes_through_the_server_equals_in_process_within_0_02(tiny_models, pairs, tmp_path):
    local = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    try:
        local.prefill(judge_beginning())
        here = [support_probability(local, p.claim, judge_text(p)) for p in pairs]
    finally:
        local.close()
    with llama_server(tiny_models["chat"], tmp_path / "server.log", "--n_ctx", "2048") as url:
        remote = factory.make_chat(ModelConfig(backend="openai", base_url=url, context_length=2048))
        try:
            there = [support_probability(remote, p.claim, judge_text(p)) for p in pairs]
            assert remote.gives_probabilities
        finally:
            remote.close()
    assert None not in here and None not in there
    assert max(abs(a - b) for a, b in zip(here, there)) <= 0.02, list(zip(here, there))
    assert max(here) - min(here) > 0.05  # the pairs differ: equal because read alike, not because constant


def test_choice_mass_counts_every_spelling_and_bounds_a_missing_choice():
    import math

    top = {"Yes": math.log(0.5), " yes": math.log(0.1), "The": math.log(0.3), "no": math.log(0.05)}
    mass = choice_mass(top, ["yes", "no"])
    assert mass["yes"] == pytest.approx(0.6 / 0.65)
    only_yes = choice_mass({"Yes": math.log(0.9), "The": math.log(0.01)}, ["yes", "no"])
    assert only_yes["no"] == pytest.approx(0.01 / 0.91)  # at most the least likely listed token


class _NoLogprobs(BaseHTTPRequestHandler):
    """An OpenAI-compatible stand-in that answers without logprobs (as some servers do)."""

    def _send(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send({"object": "list", "data": [{"id": "words-only", "object": "model"}]})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        n = request["messages"][-1]["content"].count("Claim:") or 1
        content = json.dumps({"verdicts": [{"pair": i + 1, "verdict": "supported"} for i in range(n)]})
        if request.get("stream"):
            chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "words-only",
                     "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": "stop"}]}
            data = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self._send({"id": "x", "object": "chat.completion", "created": 0, "model": "words-only",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Yes"}, "finish_reason": "length"}]})

    def log_message(self, *args):
        pass


@pytest.fixture
def words_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoLogprobs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_server_without_logprobs_judges_in_words(words_server, pairs):
    remote = factory.make_chat(ModelConfig(backend="openai", base_url=words_server))
    try:
        assert support_probability(remote, pairs[0].claim, judge_text(pairs[0])) is None
        assert not remote.gives_probabilities  # asked once: the rest go straight to words
        checked = check_pairs([pairs[0]], remote)
    finally:
        remote.close()
    assert checked[0].verdict == "supported" and checked[0].confidence is None


@pytest.mark.slow
def test_an_answer_judged_by_a_server_without_probabilities_says_uncalibrated_in_its_notes(make_desk, fact_pdfs, tmp_path, words_server):
    desk = make_desk(tmp_path / "lib")
    assert desk.add([fact_pdfs]).ok
    desk.settings.judge = ModelConfig(backend="openai", base_url=words_server)
    result = desk.research("How fast did the glacier front retreat?")
    assert desk.chat().judge is not None and desk.chat().judge.name == "words-only"
    assert result.citations and any("uncalibrated" in m for m in result.messages), result.messages
    # The chat model judging its own claims (in process, with probabilities): no such note.
    desk.settings.judge = ModelConfig(backend="")
    again = desk.research("How fast did the glacier front retreat?")
    assert desk.chat().judge is None and not any("uncalibrated" in m for m in again.messages)
