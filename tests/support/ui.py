"""Shared pieces of the UI tests: a small paper corpus, settings, the window, a scripted chat model.

The scripted chat model is only for UI-state tests (deterministic citations,
slow streaming to cancel); the main flow test uses the real tiny GGUF.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from app.core.errors import Cancelled
from app.core.models.base import ChatModel
from app.core.settings import Settings

PAPERS = {
    "glaciers.pdf": (
        "Alpine Glacier Retreat Measured by Repeat Photogrammetry",
        ["Ingrid Holm", "Marco Bernasconi"],
        [
            "# Abstract\n\nWe measure the retreat of forty alpine glaciers between 1990 and 2020 using repeat "
            "photogrammetry. Glacier tongues retreated by 31 metres per year on average.\n\n# Introduction\n\n"
            "Alpine glaciers are sensitive indicators of summer temperature. Their retreat accelerated after 1990.",
            "# Methods\n\nRepeat photogrammetry compares aerial images of the same glacier taken decades apart. "
            "Ground control points on stable bedrock align the image pairs to within half a metre.\n\n"
            "The ice surface elevation change is converted to mass loss with a density of 850 kilograms per cubic metre.",
            "# Results\n\nThe median glacier lost 0.9 metres of ice thickness per year. Small glaciers below one square "
            "kilometre lost a larger fraction of their area than large valley glaciers.\n\n# Discussion\n\n"
            "Debris cover slowed the melt of some glacier tongues, which explains part of the spread between glaciers.",
        ],
    ),
    "bees.pdf": (
        "Honeybee Navigation with Polarized Skylight",
        ["Sofia Lindqvist"],
        [
            "# Abstract\n\nHoneybees navigate with the pattern of polarized light in the sky. We trained foragers in a "
            "flight tunnel and rotated the polarization filter above them.\n\n# Introduction\n\nThe bee's dorsal rim "
            "area of the compound eye detects the polarization angle of skylight.",
            "# Experiments\n\nForagers trained to a feeder flew in the tunnel under a rotating polarizer. When the filter "
            "turned by ninety degrees, the waggle dance direction of returning bees turned by ninety degrees as well.\n\n"
            "Bees with painted dorsal rim areas lost their orientation under an overcast sky.",
            "# Conclusion\n\nPolarized skylight is a compass cue for honeybees when the sun is hidden, and the dorsal rim "
            "area is required to read it.",
        ],
    ),
    "bread.pdf": (
        "Sourdough Fermentation and Bread Volume",
        ["Luca Ferretti", "Anne Dubois"],
        [
            "# Abstract\n\nWe study how the ratio of lactic acid bacteria to yeast in a sourdough starter affects bread "
            "volume.\n\n# Introduction\n\nSourdough starters are stable communities of wild yeast and lactic acid bacteria.",
            "# Methods\n\nDough was fermented at 24 and 30 degrees Celsius for eight hours. Loaf volume was measured by "
            "rapeseed displacement after baking.\n\n# Results\n\nWarmer fermentation at 30 degrees increased acidity and "
            "reduced loaf volume by twelve percent.",
        ],
    ),
}


def make_corpus(folder: Path) -> Path:
    """Three small papers on unrelated topics, several pages each (page numbers matter)."""
    from tests.support.pdf_factory import make_paper

    folder.mkdir(parents=True, exist_ok=True)
    for name, (title, authors, pages) in PAPERS.items():
        make_paper(folder / name, title, authors, pages)
    return folder


def ui_settings(tiny_models: dict[str, Path], library: Path) -> Settings:
    s = Settings(library=str(library))
    s.chat.path = str(tiny_models["chat"])
    s.chat.context_length = 2048
    s.chat.threads = 2
    s.embedding.path = str(tiny_models["embedding"])
    s.embedding.threads = 2
    s.research.answer_max_tokens = 160
    s.research.min_shortlist = 2
    s.theme = "light"
    return s


_SOURCE = re.compile(r"Passage (\d+)[^\n]*? cite it as \[(\S+), page (\d+)\]\n([^\n]+)")  # citation style "tags"
_NUMBERED = re.compile(r"^\[(\d+)\] \((\S+), page (\d+)[^\n]*\)\n([^\n]+)", re.M)  # citation style "numbers"


class ScriptedChat(ChatModel):
    """Writes a short answer citing the evidence in its prompt, word by word.

    Each bullet (or, asked for claims, each claim) repeats the start of one
    evidence passage, so the core's citation check verifies it; the support
    check gets `verdicts` in turn. `delay` slows streaming (for cancel tests).
    """

    name = "scripted"

    def __init__(self, delay: float = 0.0, context_length: int = 4096, sources: int = 3, verdicts: list[str] | None = None) -> None:
        self.delay = delay
        self.context_length = context_length
        self.sources = sources
        self.verdicts = verdicts or ["supported"]  # the support check's verdicts, in turn
        self.calls = 0

    def chat(self, messages, *, max_tokens=512, temperature=0.2, on_token=None, cancelled=None, json_schema=None, timeout_s=None):
        self.calls += 1
        prompt = messages[-1]["content"]
        properties = (json_schema or {}).get("properties", {})
        if "claims" in properties:  # the claim-bound answer: one claim per passage, streamed
            return self._stream(self._claims(prompt), on_token, cancelled)
        if "verdicts" in properties:  # the support check
            n = properties["verdicts"].get("maxItems") or 1
            return json.dumps({"verdicts": [{"pair": i + 1, "verdict": self.verdicts[i % len(self.verdicts)]} for i in range(n)]})
        if json_schema is not None:  # deep research: loop decisions and passage scores
            if self.delay:
                time.sleep(self.delay * 5)
            if cancelled is not None and cancelled():
                raise Cancelled()
            return self._json(json_schema, prompt)
        numbered = _NUMBERED.findall(prompt)[: self.sources]
        found = numbered or _SOURCE.findall(prompt)[: self.sources]
        lines = ["The library answers this directly.", ""]
        for n, paper_id, page, text in found:
            words = re.sub(r"[#*`]", "", text).split()[:14]
            tag = f"[{n}]" if numbered else f"[{paper_id}, page {page}]"
            lines.append(f"- {' '.join(words).rstrip('.,;:')} {tag}")
        if not found:
            lines.append("The evidence does not answer the question.")
        return self._stream("\n".join(lines) + "\n", on_token, cancelled)

    def _claims(self, prompt: str) -> str:
        """Each claim repeats the start of one passage and cites it, so the rules agree with it."""
        claims = []
        for n, _paper_id, _page, text in _NUMBERED.findall(prompt)[: self.sources]:
            words = re.sub(r"[#*`]", "", text).split()[:14]
            claims.append({"text": " ".join(words).rstrip(".,;:") + ".", "sources": [int(n)]})
        if not claims:
            claims.append({"text": "The passages do not answer the question.", "sources": []})
        return json.dumps({"claims": claims})

    def _stream(self, answer: str, on_token, cancelled) -> str:
        out: list[str] = []
        for piece in re.findall(r"\S+\s*|\s+", answer):
            if cancelled is not None and cancelled():
                raise Cancelled()
            if self.delay:
                time.sleep(self.delay)
            out.append(piece)
            if on_token is not None:
                on_token(piece)
        return "".join(out)

    def _json(self, schema: dict, prompt: str) -> str:
        if "gaps" in schema.get("properties", {}):
            first = not getattr(self, "_decided", False)
            self._decided = True
            gaps = ["how accurate the photogrammetry was"] if first else []
            return json.dumps({"iteration": 1, "summary": "Retreat rates and the method are covered.", "gaps": gaps,
                               "shouldContinue": first, "nextSearchTopic": gaps[0] if gaps else "", "timeRemainingMinutes": 1.0})
        n = prompt.count("[Source ")
        return json.dumps({"items": [{"source": i, "summary": "relevant", "score": 0.8} for i in range(1, n + 1)]})


def wait_for_handle(qtbot, handle, timeout: int = 120_000):
    """Wait until a worker job has ended; return (kind, payload)."""
    if handle.outcome is not None:
        return handle.outcome
    box: dict = {}
    handle.finished.connect(lambda r: box.update(kind="finished", payload=r))
    handle.failed.connect(lambda e: box.update(kind="failed", payload=e))
    handle.cancelled.connect(lambda: box.update(kind="cancelled", payload=None))
    qtbot.waitUntil(lambda: "kind" in box, timeout=timeout)
    return handle.outcome or (box["kind"], box["payload"])


def use_chat(qtbot, window, model: ChatModel) -> None:
    """Put a chat model into the worker's Desk (in the worker thread)."""
    handle = window.host.submit("test", lambda ctx: ctx.desk.set_chat_model(model))
    kind, payload = wait_for_handle(qtbot, handle)
    assert kind == "finished", payload


@pytest.fixture
def corpus(tmp_path) -> Path:
    return make_corpus(tmp_path / "papers")
