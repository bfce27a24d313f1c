"""The worker thread's queue rules (app/ui/common/worker.py), and Qt's signals keeping Python's refcounts."""

from __future__ import annotations

import threading
import time

import pytest

from app.core.errors import NoRelevantPapers
from app.core.settings import Settings
from app.ui.common.worker import WorkerHost
from tests.support.ui import wait_for_handle


@pytest.fixture
def host(qapp):
    h = WorkerHost(Settings(), None)
    yield h
    h.shutdown()
    assert not h._thread.isRunning()


def test_worker_runs_jobs_in_order_off_the_ui_thread(qtbot, host):
    seen: list[tuple[str, bool]] = []
    ui = threading.get_ident()
    h1 = host.submit("a", lambda ctx: seen.append(("a", threading.get_ident() != ui)) or 1)
    h2 = host.submit("b", lambda ctx: seen.append(("b", threading.get_ident() != ui)) or 2)
    assert wait_for_handle(qtbot, h2) == ("finished", 2)
    assert seen == [("a", True), ("b", True)]
    assert h1.done


def test_worker_drops_results_of_discarded_jobs(qtbot, host):
    gate = threading.Event()

    def slow(ctx):
        gate.wait(5)
        ctx.task.progress(1, 2, "pages", "late progress")
        return "late"

    stale = host.submit("slow", slow)
    got: list = []
    stale.finished.connect(got.append)
    stale.event.connect(got.append)
    stale.discard()
    gate.set()
    marker = host.submit("after", lambda ctx: "after")
    assert wait_for_handle(qtbot, marker) == ("finished", "after")
    qtbot.wait(50)
    assert got == []


def test_worker_key_supersedes_queued_jobs_and_cancel_reaches_the_job(qtbot, host):
    gate = threading.Event()
    blocker = host.submit("block", lambda ctx: gate.wait(5))
    ran: list[int] = []
    first = host.submit("notes", lambda ctx: ran.append(1), key="notes:x")
    second = host.submit("notes", lambda ctx: ran.append(2), key="notes:x")

    def loop(ctx):
        while True:
            ctx.check()
            time.sleep(0.01)

    looping = host.submit("loop", loop)
    gate.set()
    assert wait_for_handle(qtbot, first)[0] == "cancelled"
    assert wait_for_handle(qtbot, second)[0] == "finished"
    assert ran == [2]
    qtbot.waitUntil(lambda: looping.running, timeout=5000)
    looping.cancel()
    assert wait_for_handle(qtbot, looping)[0] == "cancelled"
    assert blocker.done


def test_worker_reports_core_errors_and_bugs_as_failures(qtbot, host):
    def boom(ctx):
        raise NoRelevantPapers("nothing matches", "rephrase")

    kind, exc = wait_for_handle(qtbot, host.submit("x", boom))
    assert kind == "failed" and exc.message == "nothing matches"
    kind, exc = wait_for_handle(qtbot, host.submit("y", lambda ctx: 1 / 0))
    assert kind == "failed" and isinstance(exc, ZeroDivisionError)


def test_signal_emit_keeps_python_refcounts(qapp):
    """PySide6 6.12.0 drops a reference to True on every Signal.emit(); on Python 3.11,
    where True is not immortal, a few thousand emits abort the interpreter. The app
    emits that many in one import, so the environment must not have that bug."""
    import sys

    from PySide6.QtCore import QObject, Signal

    class Emitter(QObject):
        sig = Signal(object)

    e = Emitter()
    e.sig.connect(lambda _o: None)
    payload = object()
    before_true, before_obj = sys.getrefcount(True), sys.getrefcount(payload)
    for _ in range(200):
        e.sig.emit(payload)
    assert sys.getrefcount(payload) == before_obj
    assert sys.getrefcount(True) >= before_true - 2, "PySide6 Signal.emit() leaks references (use PySide6 < 6.12 or a fixed release)"
