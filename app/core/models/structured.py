"""JSON schemas for structured model output, built from pydantic models.

A schema is written once, as a pydantic model (constraints that depend on the request —
allowed passage numbers, item counts — through `create_model`, `Literal` and `Field`),
and handed to every backend as a plain JSON schema. `json_schema` flattens pydantic's
output into the self-contained form grammars handle best: nested models inlined instead
of `$ref`/`$defs`, and pydantic's `title` annotations dropped (they constrain nothing and
only lengthen the schema llama.cpp turns into a grammar).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

# Keywords whose value maps property names to schemas (the names themselves are data, not keywords).
_NAMED_SCHEMAS = ("properties", "patternProperties", "$defs", "definitions")


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, self-contained: refs inlined, titles dropped."""
    raw = model.model_json_schema()
    defs = raw.get("$defs", {})

    def flat(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [flat(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen:
                raise ValueError(f"recursive schema {name!r} cannot be inlined")
            merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
            return flat(merged, seen + (name,))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "$defs"):
                continue
            if key in _NAMED_SCHEMAS and isinstance(value, dict):
                out[key] = {name: flat(sub, seen) for name, sub in value.items()}
            else:
                out[key] = flat(value, seen)
        return out

    return flat(raw, ())
