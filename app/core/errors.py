"""Typed errors the UI and CLI can show as one clear message plus a hint.

Every error a user can cause or fix (bad file, missing model, LM Studio not
running, nothing found) is one of these, never a bare stack trace.
"""

from __future__ import annotations


class ResearchDeskError(Exception):
    """Base class: `message` says what went wrong, `hint` how to fix it."""

    action: str = ""  # a UI action that fixes it ("choose-model", "start-lmstudio", "reindex")

    def __init__(self, message: str, hint: str = "", *, action: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if action:
            self.action = action

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class LibraryError(ResearchDeskError):
    """The library folder cannot be used (unwritable, full, damaged)."""


class ImportFailure(ResearchDeskError):
    """One PDF could not be imported; others are unaffected."""


class ModelError(ResearchDeskError):
    """A model could not be loaded or did not answer."""

    action = "choose-model"


class ModelNotFound(ModelError):
    """The configured model file or name does not exist."""


class BackendUnavailable(ModelError):
    """A model server (LM Studio, OpenAI-compatible) cannot be reached."""

    action = "start-lmstudio"


class ModelTimeout(ModelError):
    """The model did not finish within the allowed time."""


class Cancelled(ResearchDeskError):
    """The user cancelled a long operation."""

    def __init__(self, message: str = "Cancelled.", hint: str = "") -> None:
        super().__init__(message, hint)


class ResearchError(ResearchDeskError):
    """Base for the research funnel's per-stage errors."""


class NoRelevantPapers(ResearchError):
    """Stage 1 found no paper above the cutoff."""


class NoIndexedContent(ResearchError):
    """Shortlisted papers have no indexed content chunks."""

    action = "reindex"


class SynthesisFailed(ResearchError):
    """The chat model failed or timed out while writing the answer."""

    action = "retry"
