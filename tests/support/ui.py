"""Shared pieces of the UI tests: a small paper corpus, settings, waiting for a worker's job, and
the scripted chat model put into a window's Desk.

The scripted chat model is only for UI-state tests (deterministic citations,
slow streaming to cancel); the main flow test uses the real tiny GGUF.
"""

from __future__ import annotations

from pathlib import Path

from app.core.models.base import ChatModel
from app.core.settings import Settings
from tests.support.chat import ScriptedChat
from tests.support.library import write_papers

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
    return write_papers(folder, PAPERS)


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


def ui_chat(cls: type[ScriptedChat] = ScriptedChat, **options) -> ScriptedChat:
    """The scripted chat model as the UI tests use it (tests/support/chat.py): it answers by citing
    the evidence in its prompt, claims and bullets word by word, the support check with `verdicts`
    in turn; asked for deep research's loop decision it finds one gap on the glacier papers, then
    none. `delay` slows streaming (for cancel tests). `cls`: a subclass, `options` its arguments."""
    summary = "Retreat rates and the method are covered."
    gap = "how accurate the photogrammetry was"
    return cls(decisions=[{"iteration": 1, "summary": summary, "gaps": [gap], "nextSearchTopic": gap}],
               after_decisions={"iteration": 1, "summary": summary, "shouldContinue": False}, **options)


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
