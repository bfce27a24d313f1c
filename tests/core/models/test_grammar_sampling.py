"""Grammar-last sampling (app/core/models/grammar_sampling.py) against the real SmolLM2-135M:
the same greedy reply as llama-cpp-python's grammar-first chain, schema-valid replies when the
unconstrained draw is often refused, and the chat backend using it."""

from __future__ import annotations

import json

import llama_cpp
import pytest
from llama_cpp.llama_grammar import LlamaGrammar

from app.core.models.grammar_sampling import GrammarLastLlama, GrammarLastSampler
from app.core.models.llamacpp import LlamaCppChat
from app.core.research.answer.claims import claims_schema, parse_claims
from app.core.settings import ModelConfig

PASSAGES = ("[1] The median surgeon-scrub teaming score was 0.08 (IQR 0.03-0.19).\n"
            "[2] The median surgeon-circulator teaming score was 0.06 (IQR 0.03-0.13).")
MESSAGES = [
    {"role": "system", "content": "Answer in JSON claims; cite the passages by number."},
    {"role": "user", "content": PASSAGES + "\n\nQuestion: How familiar were the surgical teams?"},
]
SCHEMA = claims_schema([1, 2], min_items=1, max_items=3)


def _reply(llm, temperature: float, max_tokens: int = 160) -> str:
    llm.reset()
    out = llm.create_chat_completion(messages=MESSAGES, max_tokens=max_tokens, temperature=temperature,
                                     response_format={"type": "json_object", "schema": SCHEMA})
    return out["choices"][0]["message"]["content"]


@pytest.fixture(scope="module")
def models(tiny_models):
    path = str(tiny_models["chat"])
    stock = llama_cpp.Llama(model_path=path, n_ctx=1024, verbose=False, seed=3)
    fast = GrammarLastLlama(model_path=path, n_ctx=1024, verbose=False, seed=3)
    yield stock, fast
    stock.close()
    fast.close()


@pytest.mark.slow
def test_greedy_reply_is_the_grammar_first_chains_reply(models):
    stock, fast = models
    expected = _reply(stock, 0.0)
    assert _reply(fast, 0.0) == expected
    assert isinstance(fast._sampler, GrammarLastSampler)  # the grammar-last path ran, not the stock one
    # The claims structure; whole where the 135M model closed it within the token limit (on the
    # portable CPU build its greedy reply runs on past 160 tokens, so the JSON is cut there).
    assert expected.startswith('{"claims":[{"text":"')
    if expected.rstrip().endswith("}"):
        assert parse_claims(expected, {1, 2})


@pytest.mark.slow
def test_hot_sampling_redraws_refused_tokens_and_stays_schema_valid(models):
    _, fast = models
    redrawn = 0
    for _ in range(3):
        reply = _reply(fast, 1.5, max_tokens=400)  # a hot 135M model proposes tokens JSON forbids
        data = json.loads(reply)
        assert data["claims"] and all(set(c["sources"]) <= {1, 2} for c in data["claims"])
        redrawn += fast._sampler.redrawn
    assert redrawn > 0  # the constrained redraw was exercised, and its tokens kept the structure


def test_a_grammar_llama_cpp_cannot_parse_is_a_runtime_error(models):
    """Not a ValueError: the chat backend reads that as a prompt too long for the context."""
    _, fast = models
    broken = LlamaGrammar.from_string('root ::= "a"')
    broken._grammar = 'root ::= ( "unclosed'
    with pytest.raises(RuntimeError, match="could not parse the grammar"):
        GrammarLastSampler(fast, broken, top_k=40, top_p=0.95, min_p=0.05, typical_p=1.0, temp=0.2, seed=1)


@pytest.mark.slow
def test_the_chat_backend_samples_grammar_last_and_free_text_as_before(tiny_models):
    chat = LlamaCppChat(ModelConfig(backend="llamacpp", path=str(tiny_models["chat"]), context_length=1024))
    try:
        assert isinstance(chat._llm, GrammarLastLlama)
        one_claim = claims_schema([1, 2], min_items=1, max_items=1)
        reply = chat.chat(MESSAGES, max_tokens=400, temperature=0.2, json_schema=one_claim)
        assert parse_claims(reply, {1, 2})
        text = chat.chat([{"role": "user", "content": "Say hello."}], max_tokens=12, temperature=0.0)
        assert text.strip() and not isinstance(chat._llm._sampler, GrammarLastSampler)
    finally:
        chat.close()
