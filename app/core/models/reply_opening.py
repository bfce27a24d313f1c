"""A structured reply's fixed opening, read with the prompt instead of written token by token.

Every claim-bound answer begins `{"claims": [{"text": "`: seven tokens the schema leaves no
choice about, which the starter model writes at ~105 ms each on a 2-core laptop before the
first word of the answer, and reads in ~0.1 s as part of a prompt. So the llama.cpp backend
puts the opening at the start of the assistant's turn, moves the grammar past it
(grammar_sampling.GrammarLastSampler), and the model writes from the first free token on.
The reply and the streamed pieces still hold the whole JSON, opening included.

The opening follows the schema's first required property down through objects, non-empty
arrays and into a plain string; it is spelled as the model spells JSON itself (`", "` and
`": "`), so the tokens it reads are the tokens it would have written. An opening the grammar
refuses (a schema the grammar orders differently) is not used: the reply is written whole.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterator

from llama_cpp.llama_grammar import LlamaGrammar

from .grammar_sampling import GrammarLastLlama, accepts_opening

log = logging.getLogger(__name__)

# Keywords that make a string's first character the grammar's choice, not the model's free text.
_SHAPED_STRING = ("enum", "const", "pattern", "format")


def forced_opening(schema: dict[str, Any]) -> str:
    """The text every reply to `schema` begins with (JSON spaced as `json.dumps` spaces it); "" if none."""
    out: list[str] = []
    node: Any = schema
    while isinstance(node, dict):
        kind = node.get("type")
        if kind == "object":
            properties = node.get("properties") or {}
            required = [name for name in properties if name in (node.get("required") or [])]
            if not required or list(properties)[0] != required[0]:
                break  # the grammar puts required properties first, in the schema's order: only that one is certain
            out.append("{" + json.dumps(required[0]) + ":")
            node = properties[required[0]]
            if isinstance(node, dict) and node.get("type") in ("object", "array", "string"):
                out.append(" ")  # the space before a value the opening goes into (a number's is the model's)
        elif kind == "array" and (node.get("minItems") or 0) >= 1 and isinstance(node.get("items"), dict):
            out.append("[")
            node = node["items"]
        elif kind == "string" and not any(k in node for k in _SHAPED_STRING):
            out.append('"')
            break
        else:
            break
    text = "".join(out)
    return text.rstrip() if text.endswith(" ") else text


def opened_completion(llm: Any, prompt: list[int], stop: list[str], schema: dict[str, Any],
                     **sampling: Any) -> tuple[Iterator[dict[str, Any]], str] | None:
    """Start a reply to `schema` after its opening: (completion chunks, the opening's text),
    or None where no opening applies and the reply is written whole.

    `prompt`: the chat prompt's tokens, ending where the assistant's turn begins."""
    opening = forced_opening(schema)
    if not opening or not isinstance(llm, GrammarLastLlama):
        return None
    try:
        grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except Exception as exc:  # noqa: BLE001 - the converter's own errors: the whole-reply path falls back to plain JSON
        log.warning("no reply opening: llama-cpp-python could not turn the schema into a grammar (%s)", exc)
        return None
    tokens = llm.tokenize(opening.encode("utf-8"), add_bos=False, special=False)
    if not accepts_opening(llm, grammar, tokens):
        return None
    llm.reply_opening = tokens  # the sampler moves its grammar past them (GrammarLastLlama)
    chunks = llm.create_completion(prompt=prompt + tokens, grammar=grammar, stop=stop, stream=True, **sampling)
    return chunks, opening
