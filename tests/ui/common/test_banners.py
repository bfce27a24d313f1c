"""A banner's action for an error (app/ui/common/banners.py)."""

from __future__ import annotations

from app.core.errors import NoRelevantPapers
from app.ui.common.banners import error_action


def test_error_action_looks_through_synthesis_wrapper():
    from app.core.errors import BackendUnavailable, SynthesisFailed

    try:
        try:
            raise BackendUnavailable("LM Studio is not running at 127.0.0.1:1", "start it")
        except BackendUnavailable as exc:
            raise SynthesisFailed("Synthesis failed: could not load the chat model") from exc
    except SynthesisFailed as wrapped:
        assert error_action(wrapped) == "start-lmstudio"
    assert error_action(NoRelevantPapers("none")) == ""
