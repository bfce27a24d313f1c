"""A structured reply's fixed opening read with the prompt (app/core/models/reply_opening.py):
which openings a schema forces, and the llama.cpp backend using them with the real SmolLM2-135M."""

from __future__ import annotations

import json

import pytest
from llama_cpp.llama_grammar import LlamaGrammar

from app.core.models import reply_opening
from app.core.models.grammar_sampling import GrammarLastSampler, accepts_opening
from app.core.models.llamacpp import LlamaCppChat
from app.core.research.answer.claims import claims_schema, parse_claims
from app.core.research.deep.loop import LOOP_SCHEMA
from app.core.research.answer.rewrite import REWRITE_SCHEMA
from app.core.research.check.support import verdict_schema
from app.core.settings import ModelConfig

MESSAGES = [
    {"role": "system", "content": "Answer in JSON claims; cite the passages by number."},
    {"role": "user", "content": "[1] The median surgeon-scrub teaming score was 0.08 (IQR 0.03-0.19).\n"
                                "[2] The median surgeon-circulator teaming score was 0.06 (IQR 0.03-0.13).\n\n"
                                "Question: How familiar were the surgical teams?"},
]


def test_the_opening_follows_the_first_required_property_into_free_text():
    assert reply_opening.forced_opening(claims_schema([1, 2], min_items=1, max_items=3)) == '{"claims": [{"text": "'
    assert reply_opening.forced_opening(REWRITE_SCHEMA) == '{"claim": "'
    assert reply_opening.forced_opening(verdict_schema(2)) == '{"verdicts": [{"pair":'  # the number is the model's
    assert reply_opening.forced_opening(LOOP_SCHEMA) == '{"iteration":'


def test_no_opening_where_the_model_has_a_choice():
    may_be_empty = {"type": "object", "properties": {"claims": {"type": "array", "minItems": 0, "items": {"type": "string"}}},
                    "required": ["claims"]}
    assert reply_opening.forced_opening(may_be_empty) == '{"claims":'  # "[]" or "[...": the model's choice
    optional_first = {"type": "object", "properties": {"note": {"type": "string"}, "claim": {"type": "string"}},
                      "required": ["claim"]}
    assert reply_opening.forced_opening(optional_first) == ""
    enum = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}}, "required": ["verdict"]}
    assert reply_opening.forced_opening(enum) == '{"verdict":'
    assert reply_opening.forced_opening({"type": "string"}) == '"'
    assert reply_opening.forced_opening({}) == ""


@pytest.fixture(scope="module")
def chat(tiny_models):
    model = LlamaCppChat(ModelConfig(backend="llamacpp", path=str(tiny_models["chat"]), context_length=1024))
    yield model
    model.close()


def test_the_backend_reads_the_opening_and_the_model_writes_the_rest(chat):
    schema = claims_schema([1, 2], min_items=1, max_items=2)
    pieces: list[str] = []
    reply = chat.chat(MESSAGES, max_tokens=300, temperature=0.2, json_schema=schema, on_token=pieces.append)
    assert reply.startswith('{"claims": [{"text": "') and parse_claims(reply, {1, 2})
    assert "".join(pieces) == reply  # the stream holds the whole JSON, opening included
    assert pieces[0].startswith('{"claims": [{"text": "') and len(pieces[0]) > len('{"claims": [{"text": "')
    sampler = chat._llm._sampler
    assert isinstance(sampler, GrammarLastSampler) and sampler.opened >= 5  # its grammar started past the opening
    assert chat._llm.reply_opening is None  # consumed: the next reply starts clean


@pytest.mark.slow
def test_an_opening_the_grammar_refuses_is_not_used(chat, monkeypatch):
    monkeypatch.setattr(reply_opening, "forced_opening", lambda schema: '{"answer": "')
    reply = chat.chat(MESSAGES, max_tokens=400, temperature=0.2, json_schema=claims_schema([1, 2], min_items=1, max_items=1))
    assert parse_claims(reply, {1, 2})  # written whole, still the schema's shape
    assert chat._llm._sampler.opened == 0


def test_the_grammar_checks_an_opening_token_by_token(chat):
    llm = chat._llm
    grammar = LlamaGrammar.from_json_schema(json.dumps(REWRITE_SCHEMA), verbose=False)
    tokens = lambda text: llm.tokenize(text.encode(), add_bos=False, special=False)  # noqa: E731
    assert accepts_opening(llm, grammar, tokens('{"claim": "'))
    assert not accepts_opening(llm, grammar, tokens('{"claims": "'))
    with pytest.raises(RuntimeError, match="refuses the reply's opening"):
        GrammarLastSampler(llm, grammar, opening=tokens('["'), top_k=40, top_p=0.95, min_p=0.05, typical_p=1.0,
                           temp=0.2, seed=1)
