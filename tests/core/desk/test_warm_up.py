"""A question's chat model loads on a thread while stages 1-2 find the evidence (a fresh process,
as the command line runs one, then waits for the slower of the two, not for both in turn)."""

from __future__ import annotations

import threading

from app.core.errors import ModelError
from app.core.models import factory
from tests.support.papers import FACT_PAPERS
from tests.support.library import write_papers

QUESTION = "What was the median departure date of the kestrels?"


def _recording_make_chat(monkeypatch, fail_first: bool = False) -> list[str]:
    """Wrap the real make_chat; the names of the threads that called it, in order."""
    real = factory.make_chat
    calls: list[str] = []

    def make_chat(cfg):
        calls.append(threading.current_thread().name)
        if fail_first and len(calls) == 1:
            raise ModelError("the model file is being written by another program")
        return real(cfg)

    monkeypatch.setattr(factory, "make_chat", make_chat)
    return calls


def test_the_answer_uses_the_model_loaded_beside_the_evidence(make_desk, tmp_path, monkeypatch):
    desk = make_desk(tmp_path / "lib")
    desk.add([write_papers(tmp_path / "incoming", FACT_PAPERS)])
    calls = _recording_make_chat(monkeypatch)

    result = desk.research(QUESTION)

    assert calls == ["chat-warm-up"], calls  # loaded once, on the warm-up thread, not again by the answer
    assert result.claims and result.citations
    assert desk.loaded_chat() is not None


def test_a_failed_warm_up_leaves_the_answer_its_own_load(make_desk, tmp_path, monkeypatch):
    desk = make_desk(tmp_path / "lib")
    desk.add([write_papers(tmp_path / "incoming", FACT_PAPERS)])
    calls = _recording_make_chat(monkeypatch, fail_first=True)

    result = desk.research(QUESTION)

    assert calls[0] == "chat-warm-up" and len(calls) == 2, calls
    assert calls[1] != "chat-warm-up"
    assert result.claims and result.citations


def test_evidence_only_loads_no_chat_model(make_desk, tmp_path, monkeypatch):
    desk = make_desk(tmp_path / "lib")
    desk.add([write_papers(tmp_path / "incoming", FACT_PAPERS)])
    calls = _recording_make_chat(monkeypatch)

    result = desk.research(QUESTION, evidence_only=True)

    assert result.evidence and calls == []
