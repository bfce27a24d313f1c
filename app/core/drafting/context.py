"""The description of the user's own work that a section is drafted for.

Read from a YAML or JSON file (CLI) or built from a form (UI). Keys:
`concept` (required), `open_questions`, `hypothesis`, `method`, `results`,
`verdict` (optional). Values are strings; a list of strings (natural in YAML
for open questions) is joined with "; ". Any other key is an error that
names it, so a typo never silently drops part of the description.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import ResearchDeskError

REQUIRED = ("concept",)
OPTIONAL = ("open_questions", "hypothesis", "method", "results", "verdict")
KEYS = REQUIRED + OPTIONAL
# How each field is introduced to the model.
LABELS = {
    "concept": "Concept",
    "open_questions": "Open questions",
    "hypothesis": "Hypothesis",
    "method": "Method",
    "results": "Results",
    "verdict": "Verdict",
}


class ContextError(ResearchDeskError):
    """The context file or form is unusable (unknown keys, missing concept, wrong types)."""


@dataclass
class DraftContext:
    concept: str
    open_questions: str = ""
    hypothesis: str = ""
    method: str = ""
    results: str = ""
    verdict: str = ""

    def get(self, key: str) -> str:
        return getattr(self, key, "") or ""

    def present(self) -> list[str]:
        """Keys with a non-empty value, in file order."""
        return [k for k in KEYS if self.get(k).strip()]

    def block(self, clip: int = 600) -> str:
        """The description as labelled lines for a prompt."""
        return "\n".join(f"- {LABELS[k]}: {_clip(self.get(k), clip)}" for k in self.present())

    def to_dict(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v}


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[:n].rsplit(" ", 1)[0]
    return cut + " …"


def _as_text(key: str, value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return "; ".join(" ".join(str(v).split()) for v in value if str(v).strip())
    raise ContextError(
        f"{where}: `{key}` must be text, not {type(value).__name__}.",
        f"Write `{key}` as a string (a YAML block `{key}: |` for several lines).",
    )


def context_from_dict(data: Any, where: str = "The context") -> DraftContext:
    """Validate a mapping (parsed file or form) into a DraftContext."""
    if not isinstance(data, dict):
        raise ContextError(
            f"{where} must be a mapping of keys to text, not {type(data).__name__}.",
            "Start the file with `concept: …` (see docs/drafting.md).",
        )
    unknown = [str(k) for k in data if k not in KEYS]
    if unknown:
        guesses = []
        for k in unknown:
            close = difflib.get_close_matches(k.replace("-", "_").lower(), KEYS, n=1, cutoff=0.6)
            if close:
                guesses.append(f"`{k}` → `{close[0]}`?")
        hint = "Allowed keys: concept (required), " + ", ".join(OPTIONAL) + "."
        if guesses:
            hint += " Did you mean " + ", ".join(guesses)
        raise ContextError(f"{where} has unknown key{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}.", hint)
    values = {k: _as_text(k, data.get(k), where) for k in KEYS}
    if not values["concept"].strip():
        raise ContextError(
            f"{where} has no `concept`.",
            "Describe your work in one or two sentences under `concept:`; the other keys are optional.",
        )
    return DraftContext(**values)


def load_context(path: str | Path) -> DraftContext:
    """Read and validate a YAML (.yaml/.yml, or anything else) or JSON (.json) context file."""
    import yaml

    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ContextError(f"Context file not found: {path}", "Give the path of a YAML or JSON file with at least `concept:`.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ContextError(f"Context file cannot be read: {path} ({exc})", "Save it as UTF-8 text.") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        detail = " ".join(str(exc).split())[:300]
        raise ContextError(f"Context file {path} is not valid {kind}: {detail}", "Check the indentation and quoting.") from None
    if data is None:
        raise ContextError(f"Context file {path} is empty.", "Write at least `concept: …`.")
    return context_from_dict(data, f"Context file {path.name}")


