"""One long-lived worker thread that owns the Desk (models + LanceDB connection).

The UI never touches the Desk. It submits jobs — plain functions taking a
`JobContext` — and gets a `JobHandle` back whose signals fire in the UI
thread. A job passes `ctx.task` to the Desk; the core's typed events
(app/core/events.py) reach the handle's `event` signal unchanged, here, in one
place: tokens batched, progress thinned out, nothing parsed.

Why one thread: llama.cpp models and the LanceDB connection are not meant to
be driven from several threads at once, and loading a model twice would double
the memory. Jobs therefore run one after another, in submission order.

Stale results: every job has an id; a handle that was cancelled or discarded
is forgotten, so whatever its job still reports is dropped. A job submitted
with a `key` supersedes queued jobs with the same key (e.g. re-indexing the
notes of one paper after every autosave: only the newest needs to run).
"""

from __future__ import annotations

import copy
import itertools
import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Qt, Signal, Slot

from app.core.errors import Cancelled, ResearchDeskError
from app.core.events import CancelToken, Event, Progress, Task, Token
from app.core.settings import Settings

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.05  # at most 20 progress updates a second reach the UI
TOKEN_INTERVAL_S = 0.03  # tokens are batched to ~30 signals a second


@dataclass
class Job:
    id: int
    kind: str
    fn: Callable[["JobContext"], Any]
    key: str = ""
    cancel: CancelToken = field(default_factory=CancelToken)


class JobContext:
    """What a job function sees: the Desk and the task to hand to it."""

    def __init__(self, job: Job, worker: "DeskWorker") -> None:
        self._job = job
        self._worker = worker
        self._last_progress = 0.0
        self._token_buffer: list[str] = []
        self._last_token = 0.0
        self.task = Task(sink=self.emit, token=job.cancel)

    @property
    def job_id(self) -> int:
        return self._job.id

    @property
    def desk(self):
        return self._worker.desk()

    @property
    def settings(self) -> Settings:
        return self._worker.settings

    def cancelled(self) -> bool:
        return self._job.cancel.cancelled

    def check(self) -> None:
        self._job.cancel.raise_if_cancelled()

    def emit(self, event: Event) -> None:
        """The task's sink: forward a core event to the UI thread."""
        now = time.monotonic()
        if isinstance(event, Token):
            self._token_buffer.append(event.text)
            if now - self._last_token >= TOKEN_INTERVAL_S:
                self.flush_tokens()
                self._last_token = now
            return
        if isinstance(event, Progress):
            # Page-by-page progress is thinned out so the UI is not flooded; the last step always shows.
            last = event.total > 0 and event.done >= event.total
            if not last and now - self._last_progress < PROGRESS_INTERVAL_S:
                return
            self._last_progress = now
        self.flush_tokens()
        self._worker.event.emit(self._job.id, event)

    def flush_tokens(self) -> None:
        if self._token_buffer:
            text, self._token_buffer = "".join(self._token_buffer), []
            self._worker.event.emit(self._job.id, Token(text))


class DeskWorker(QObject):
    """Lives in the worker thread; runs jobs and owns the Desk."""

    started = Signal(int)
    event = Signal(int, object)  # (job id, an app.core.events event)
    finished = Signal(int, object)
    failed = Signal(int, object)  # the exception
    cancelled = Signal(int, object)  # the Cancelled exception (may carry partial results), or None

    def __init__(self, settings: Settings, library: str | None, owns_desk: bool = True) -> None:
        super().__init__()
        self.settings = settings
        self.library_flag = library
        self.owns_desk = owns_desk
        self._desk = None
        self._superseded: dict[str, int] = {}  # key -> newest job id
        self._lock = threading.Lock()

    # -- the Desk, created lazily in this thread ------------------------------------
    def desk(self):
        if not self.owns_desk:
            raise RuntimeError("this worker does not own the Desk; submit the job to the main worker")
        if self._desk is None:
            from app.core.desk import Desk

            self._desk = Desk(settings=copy.deepcopy(self.settings), library=self.library_flag)
        return self._desk

    def replace_settings(self, settings: Settings, library: str | None) -> None:
        """Called from a job: new settings/library; models reload on next use."""
        self.close_desk()
        self.settings = settings
        self.library_flag = library

    def note_key(self, key: str, job_id: int) -> None:
        with self._lock:
            self._superseded[key] = job_id

    @Slot(object)
    def execute(self, job: Job) -> None:
        if job.key:
            with self._lock:
                newest = self._superseded.get(job.key, job.id)
            if newest != job.id:
                job.cancel.cancel()
        if job.cancel.cancelled:
            self.cancelled.emit(job.id, None)
            return
        self.started.emit(job.id)
        ctx = JobContext(job, self)
        try:
            result = job.fn(ctx)
        except Cancelled as exc:
            ctx.flush_tokens()
            self.cancelled.emit(job.id, exc)
        except ResearchDeskError as exc:
            ctx.flush_tokens()
            self.failed.emit(job.id, exc)
        except Exception as exc:  # noqa: BLE001 - a bug must reach the UI as a message, not kill the thread
            ctx.flush_tokens()
            exc.ui_traceback = traceback.format_exc()  # type: ignore[attr-defined]
            exc.job_kind = job.kind  # type: ignore[attr-defined]
            log.error("job %d (%s) failed unexpectedly", job.id, job.kind, exc_info=exc)
            self.failed.emit(job.id, exc)
        else:
            ctx.flush_tokens()
            self.finished.emit(job.id, result)

    @Slot()
    def close_desk(self) -> None:
        if self._desk is not None:
            try:
                self._desk.close()
            finally:
                self._desk = None


class JobHandle(QObject):
    """The UI side of one job. Signals fire in the UI thread."""

    started = Signal()
    event = Signal(object)  # an app.core.events event (Stage, Progress, Token, EvidenceFound, …)
    finished = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    ended = Signal()  # after any of finished / failed / cancelled

    def __init__(self, job: Job, host: "WorkerHost") -> None:
        super().__init__(host)
        self.job = job
        self._host = host
        self.running = False
        self.done = False
        self.outcome: tuple[str, Any] | None = None  # ("finished" | "failed" | "cancelled", payload)

    @property
    def id(self) -> int:
        return self.job.id

    @property
    def kind(self) -> str:
        return self.job.kind

    def cancel(self) -> None:
        """Ask the job to stop; it reports `cancelled` when it has."""
        self.job.cancel.cancel()

    def discard(self) -> None:
        """Cancel and forget: nothing this job reports reaches the UI any more."""
        self.job.cancel.cancel()
        self._host._forget(self.job.id)


class WorkerHost(QObject):
    """Owns the worker thread; the UI's only door to the core."""

    busy_changed = Signal(bool)
    # A job's exception that is not one of the core's errors: a bug. Its handle still reports
    # `failed`; the window shows this in an error dialog with the traceback (error_dialog.py).
    unexpected = Signal(object, str)  # (exception with .ui_traceback, job kind)

    def __init__(
        self, settings: Settings, library: str | None = None, parent: QObject | None = None, *, owns_desk: bool = True
    ) -> None:
        super().__init__(parent)
        self._ids = itertools.count(1)
        self._handles: dict[int, JobHandle] = {}
        self._thread = QThread()
        self._thread.setObjectName("desk-worker")
        self.worker = DeskWorker(copy.deepcopy(settings), library, owns_desk)
        self.worker.moveToThread(self._thread)
        self._submit_signal_owner = _Submitter()
        self._submit_signal_owner.submit.connect(self.worker.execute, Qt.ConnectionType.QueuedConnection)
        self._submit_signal_owner.close.connect(self.worker.close_desk, Qt.ConnectionType.BlockingQueuedConnection)
        # Bound slots of this QObject (which lives in the UI thread), with queued
        # connections: every report is delivered in the UI thread, in order.
        w = self.worker
        queued = Qt.ConnectionType.QueuedConnection
        w.started.connect(self._on_started, queued)
        w.event.connect(self._on_event, queued)
        w.finished.connect(self._on_finished, queued)
        w.failed.connect(self._on_failed, queued)
        w.cancelled.connect(self._on_cancelled, queued)
        self._thread.start()
        self._closed = False

    # -- submitting ---------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """Shut down: `submit` refuses new jobs."""
        return self._closed

    def submit(self, kind: str, fn: Callable[[JobContext], Any], *, key: str = "") -> JobHandle:
        if self._closed:
            raise RuntimeError("the worker has been shut down")
        job = Job(next(self._ids), kind, fn, key)
        handle = JobHandle(job, self)
        self._handles[job.id] = handle
        if key:
            self.worker.note_key(key, job.id)
        self._submit_signal_owner.submit.emit(job)
        self.busy_changed.emit(True)
        return handle

    def pending(self, kind: str | None = None) -> list[JobHandle]:
        return [h for h in self._handles.values() if kind is None or h.kind == kind]

    def running_handle(self) -> JobHandle | None:
        return next((h for h in self._handles.values() if h.running), None)

    @property
    def busy(self) -> bool:
        return bool(self._handles)

    # -- dispatch (UI thread) ------------------------------------------------------------
    @Slot(int)
    def _on_started(self, job_id: int) -> None:
        handle = self._handles.get(job_id)
        if handle is not None:
            handle.running = True
            handle.started.emit()

    @Slot(int, object)
    def _on_event(self, job_id: int, event: object) -> None:
        self._emit(job_id, "event", event)

    @Slot(int, object)
    def _on_finished(self, job_id: int, result: object) -> None:
        self._end(job_id, "finished", result)

    @Slot(int, object)
    def _on_failed(self, job_id: int, exc: object) -> None:
        self._end(job_id, "failed", exc)
        if getattr(exc, "ui_traceback", ""):
            self.unexpected.emit(exc, getattr(exc, "job_kind", ""))

    @Slot(int, object)
    def _on_cancelled(self, job_id: int, exc: object) -> None:
        self._end(job_id, "cancelled", exc)

    def _emit(self, job_id: int, name: str, *args: Any) -> None:
        handle = self._handles.get(job_id)
        if handle is not None:  # unknown id: a discarded job; drop what it says
            getattr(handle, name).emit(*args)

    def _end(self, job_id: int, name: str, *args: Any) -> None:
        handle = self._handles.pop(job_id, None)
        if handle is None:
            return
        handle.running = False
        handle.done = True
        handle.outcome = (name, args[0] if args else None)
        if name == "cancelled":
            handle.cancelled.emit()  # the exception stays in `outcome` (e.g. a deep run's partial result)
        else:
            getattr(handle, name).emit(*args)
        handle.ended.emit()
        # Hand the handle to Python: it lives while someone holds it, then is freed.
        handle.setParent(None)
        if not self._handles:
            self.busy_changed.emit(False)

    def _forget(self, job_id: int) -> None:
        handle = self._handles.pop(job_id, None)
        if handle is not None:
            handle.setParent(None)
        if not self._handles:
            self.busy_changed.emit(False)

    # -- shutdown ------------------------------------------------------------------------
    def shutdown(self, timeout_ms: int = 60_000) -> bool:
        """Cancel everything, close the Desk in its own thread, stop the thread.

        Blocks until the running job has noticed the cancel flag (llama.cpp
        checks it every token, the importer every page), which is short.
        """
        if self._closed:
            return True
        self._closed = True
        for handle in list(self._handles.values()):
            handle.job.cancel.cancel()
        self._handles.clear()
        # Runs after the current job in the worker thread (queued jobs are
        # already cancelled and return at once), then returns here.
        self._submit_signal_owner.close.emit()
        self._thread.quit()
        finished = self._thread.wait(timeout_ms)
        return bool(finished)


class _Submitter(QObject):
    """Signals the UI thread emits to the worker (queued across threads)."""

    submit = Signal(object)
    close = Signal()
