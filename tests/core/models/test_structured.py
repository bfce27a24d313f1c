"""Structured model output: schemas built from pydantic models, replies read back through them.

The expected schemas below are the hand-written ones the app sent before pydantic built
them: the grammar llama.cpp derives from a schema must stay exactly as constraining.
"""

from __future__ import annotations

import json

import pytest
from llama_cpp.llama_grammar import json_schema_to_gbnf
from pydantic import BaseModel, Field, create_model

from app.core.models.structured import json_schema
from app.core.research.answer.claims import MAX_CLAIM_CHARS, claims_model, claims_schema, parse_claims
from app.core.research.check.support import read_verdicts, verdict_schema, verdicts_model


def _claims_by_hand(numbers, min_items=1, max_items=6, min_sources=0):
    source = {"type": "integer", "enum": sorted(set(numbers))} if numbers else {"type": "integer"}
    item = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": 400},
            "sources": {"type": "array", "items": source, "minItems": min_sources, "maxItems": 3},
        },
        "required": ["text", "sources"],
    }
    claims = {"type": "array", "minItems": min_items, "maxItems": max_items, "items": item}
    return {"type": "object", "properties": {"claims": claims}, "required": ["claims"]}


def _verdicts_by_hand(n):
    verdict = {"type": "string", "enum": ["supported", "partial", "unsupported"]}
    item = {"type": "object", "properties": {"pair": {"type": "integer"}, "verdict": verdict}, "required": ["pair", "verdict"]}
    return {
        "type": "object",
        "properties": {"verdicts": {"type": "array", "minItems": n, "maxItems": n, "items": item}},
        "required": ["verdicts"],
    }


def _grammar(schema: dict) -> str:
    return json_schema_to_gbnf(json.dumps(schema))


@pytest.mark.parametrize(
    "numbers, kwargs",
    [([3, 1, 2], {}), ([], {}), ([1, 2, 2, 9], {"min_items": 2, "max_items": 4}), ([4, 6], {"min_sources": 1})],
)
def test_claims_schema_is_the_hand_written_one(numbers, kwargs):
    assert claims_schema(numbers, **kwargs) == _claims_by_hand(numbers, **kwargs)


def test_a_single_allowed_source_gives_the_same_grammar():
    # pydantic writes Literal[5] as "const": 5, the hand-written schema as "enum": [5].
    schema = claims_schema([5], min_items=1, max_items=1, min_sources=1)
    assert schema["properties"]["claims"]["items"]["properties"]["sources"]["items"] == {"const": 5, "type": "integer"}
    assert _grammar(schema) == _grammar(_claims_by_hand([5], 1, 1, 1))


@pytest.mark.parametrize("n", [1, 3])
def test_verdict_schema_is_the_hand_written_one(n):
    assert verdict_schema(n) == _verdicts_by_hand(n)
    assert _grammar(verdict_schema(n)) == _grammar(_verdicts_by_hand(n))


def test_the_models_validate_what_the_schema_allows_and_refuse_the_rest():
    reply = claims_model([1, 2], min_sources=1)
    good = {"claims": [{"text": "x", "sources": [2]}]}
    assert reply.model_validate(good).claims[0].sources == [2]
    for bad in (
        {"claims": []},  # min_items
        {"claims": [{"text": "x", "sources": [7]}]},  # a passage it was never shown
        {"claims": [{"text": "x", "sources": []}]},  # min_sources
        {"claims": [{"text": "x" * 401, "sources": [1]}]},  # one sentence, not a paragraph
    ):
        with pytest.raises(ValueError):
            reply.model_validate(bad)
    verdicts = verdicts_model(2)
    with pytest.raises(ValueError):
        verdicts.model_validate({"verdicts": [{"pair": 1, "verdict": "maybe"}, {"pair": 2, "verdict": "partial"}]})
    with pytest.raises(ValueError):
        verdicts.model_validate({"verdicts": [{"pair": 1, "verdict": "partial"}]})


def test_json_schema_inlines_nested_models_and_keeps_a_property_named_title():
    inner = create_model("Inner", title=(str, Field(max_length=5)))

    class Outer(BaseModel):
        items: list[inner]  # type: ignore[valid-type]
        best: inner  # type: ignore[valid-type]

    schema = json_schema(Outer)
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    assert schema["properties"]["best"] == {
        "type": "object", "properties": {"title": {"type": "string", "maxLength": 5}}, "required": ["title"],
    }
    assert schema["properties"]["items"]["items"] == schema["properties"]["best"]


def test_parse_claims_keeps_good_claims_and_drops_bad_parts():
    reply = json.dumps({"claims": [
        {"text": "  Kestrels   leave in September. ", "sources": [2, 9, 2, "3", True]},
        "not an object",
        {"text": "", "sources": [2]},
        {"text": None, "sources": [2]},
        {"text": 14, "sources": 3},
        {"text": "No sources given."},
    ]})
    claims = parse_claims(reply, {2, 3})
    assert [(c.text, c.sources) for c in claims] == [
        ("Kestrels leave in September.", [2]),
        ("No sources given.", []),
    ]
    for broken in ('{"answer": "x"}', "[]", "not json", '{"claims": 3}'):
        with pytest.raises(ValueError, match="no list of claims"):
            parse_claims(broken, {1})


def test_a_claim_cut_by_the_length_cap_ends_at_its_last_whole_sentence():
    whole = ("The risk of insertion related complications, such as arterial puncture, hematoma, infection "
             "and pneumothorax, is calculated to be 2.6%. There were no reported filter migration or IVC "
             "occlusion events in the short term. Although a failed retrieval is not a direct complication, "
             "it results in permanent IVC filtration and places the patient at risk.")
    cut = (whole + " The failed retrieval rate, which the review calculates over all the filter studies that "
           "reported retrieval attempts, is about")[:MAX_CLAIM_CHARS]
    assert len(cut) == MAX_CLAIM_CHARS
    one_sentence = ("Dropout nets " + "with max-norm constraints and rectified linear units " * 9)[:MAX_CLAIM_CHARS]
    reply = json.dumps({"claims": [{"text": cut, "sources": [1]}, {"text": one_sentence, "sources": [1]},
                                   {"text": "Short, and cut by nothing", "sources": [1]}]})
    claims = parse_claims(reply, {1})
    assert claims[0].text == whole  # "The failed retrieval rate is…" is dropped, not shown half-written
    assert claims[1].text.endswith(" …") and claims[1].text[:-2].split()[-1] in one_sentence.split()
    assert claims[2].text == "Short, and cut by nothing"  # under the cap: as the model wrote it


def test_a_claim_that_loops_on_a_list_is_cut_where_the_loop_begins():
    """The starter model copied a paper's list of compounds and went round it until the length cap."""
    items = "cosmosiin, ergostane-3,6-diol, ergost-4-en-3-one, estrone, isoquercitrin, mannose, rhipocephalin, "
    looping = ("Earlier work isolated 3-O-caffeoylshikimic acid, " + items * 6)[:MAX_CLAIM_CHARS]
    reply = json.dumps({"claims": [{"text": looping, "sources": [1]},
                                   {"text": "Lupeol, epilupeol and beta-sitosterol were isolated.", "sources": [1]}]})
    first, second = parse_claims(reply, {1})
    assert first.text == "Earlier work isolated 3-O-caffeoylshikimic acid, " + items.rstrip(", ") + " …"
    assert second.text == "Lupeol, epilupeol and beta-sitosterol were isolated."


def test_a_claim_that_answers_two_parts_in_parallel_is_no_loop():
    """Two parts answered in one sentence repeat its frame once; seen cut to "…, and the non-singularity …"."""
    parallel = ("The squareness of the Z22 block corresponds to the Blanchard and Kahn (1980) order condition, and the "
                "non-singularity of the Z22 block corresponds to the Blanchard and Kahn (1980) rank condition.")
    looping = "The rate was 0.42 in strain B and " + "the rate was 0.40 in strain C and " * 3 + "so on."
    reply = json.dumps({"claims": [{"text": parallel, "sources": [1]}, {"text": looping, "sources": [1]}]})
    first, second = parse_claims(reply, {1})
    assert first.text == parallel
    assert second.text.startswith("The rate was 0.42 in strain B and the rate was 0.40 in strain C") and second.text.endswith(" …")
    assert second.text.count("0.40") == 1


def test_read_verdicts_by_pair_number_or_position():
    reply = json.dumps({"verdicts": [
        {"pair": 3, "verdict": "partial"},
        {"verdict": "supported"},  # no pair number: its position (2)
        {"pair": 3, "verdict": "unsupported"},  # pair 3 already answered: the first stands
        "junk",
    ]})
    assert read_verdicts(reply, 3) == ["", "supported", "partial"]
    assert read_verdicts("[1, 2]", 2) == ["", ""]
    assert read_verdicts('{"verdicts": [{"pair": 1, "verdict": "supp', 1) == [""]
