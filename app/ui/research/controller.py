"""Research work: run / cancel / improve / save / export — panes → worker jobs.

Only one research run is current. Starting another discards the previous
handle (its late tokens and results are dropped by the worker host).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import time

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.core.desk import Desk
from app.core.events import EvidenceFound, Notice, Round, Shortlisted, Stage, Token
from app.core.records import Citation, Evidence, ResearchResult
from app.core.settings import DeepParams

from . import jobs
from ..common.answer_render import CiteLink
from ..common.export_menu import ask_export_path, desk_format
from .answer_view import AnswerView
from .pane import ResearchPane
from ..common.worker import JobHandle, WorkerHost

# The status line under the answer while each of the funnel's stages runs (events.Stage names).
STAGE_STATUS = {
    "scope": "Searching summaries…",
    "evidence": "Gathering evidence…",
    "synthesis": "Synthesizing…",
    "check": "Checking each claim…",
}


class ResearchController(QObject):
    result_changed = Signal(object)  # ResearchResult
    message = Signal(str)
    saved = Signal(object)  # Path of a saved/exported file

    def __init__(self, host: WorkerHost, pane: ResearchPane, answer: AnswerView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.pane = pane
        self.answer = answer
        self.result: ResearchResult | None = None
        self.current: JobHandle | None = None
        self.shortlist: list[str] = []
        self.live_evidence: list[Evidence] = []
        self.last_request: tuple | None = None
        self.cancelled_deep = None  # a cancelled deep run's exception, holding its gathered evidence
        self.scope = None  # the research pane's scope line (scope_bar.py): what the next question may read
        # A model can think for minutes before its first token: a ticking clock
        # in the answer's status line shows the run is alive.
        self._stage_text = ""
        self._stage_number = 0
        self._stage_started = 0.0
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        pane.run_requested.connect(self.run)
        pane.cancel_requested.connect(self.cancel)
        answer.improve_requested.connect(self.improve)
        answer.save_requested.connect(self.save)
        answer.export_requested.connect(self.export)

    # -- run ------------------------------------------------------------------------------
    def run(self, question: str, mode: str = "standard", minutes: float | None = None) -> JobHandle:
        self.last_request = ("run", question, mode, minutes)
        fn = partial(jobs.research, question=question, mode=mode, time_minutes=minutes, scope=self.scope)
        handle = self._start(fn, question, "research")
        if mode == "deep":
            params = self._deep_params()
            self.pane.show_deep_run(question, minutes, params.max_iterations_deep, params.max_attempts_per_question)
        return handle

    def _deep_params(self) -> DeepParams:
        """The loop's limits as the worker will run it (its copy of the settings)."""
        settings = getattr(getattr(self.host, "worker", None), "settings", None)
        return getattr(settings, "deep", None) or DeepParams()

    def improve(self, feedback: str) -> JobHandle | None:
        if self.result is None:
            return None
        previous = self.result
        self.last_request = ("improve", feedback)
        handle = self._start(partial(jobs.improve, previous=previous, feedback=feedback), previous.query, "improve", keep_lists=True)
        self.pane.show_stage_lines()
        return handle

    def retry(self) -> JobHandle | None:
        if not self.last_request:
            return None
        if self.last_request[0] == "run":
            _, question, mode, minutes = self.last_request
            return self.run(question, mode, minutes)
        return self.improve(self.last_request[1])

    def _start(self, fn, question: str, kind: str, keep_lists: bool = False) -> JobHandle:
        if self.current is not None:
            self.current.discard()
        busy = self.host.running_handle()
        handle = self.host.submit(kind, fn)
        self.current = handle
        self.pane.banner.hide()
        self.answer.banner.hide()
        if not keep_lists:
            self.pane.clear_results()
            self.shortlist, self.live_evidence = [], []
        else:
            self.pane.stages.reset()
        self.pane.set_running(True)
        waiting = busy is not None and busy is not handle and busy.kind != "warm"  # the model loading for this very task
        note = f"Waiting for the current task ({busy.kind}) to finish…" if waiting else "Working…"
        self.pane.set_queued(note if waiting else "")
        self.answer.begin_stream(question, note)
        handle.started.connect(lambda: self._started(handle))
        handle.event.connect(lambda e: self._event(handle, e))
        handle.finished.connect(lambda r: self._finished(handle, r))
        handle.failed.connect(lambda e: self._failed(handle, e))
        handle.cancelled.connect(lambda: self._cancelled(handle))
        return handle

    def cancel(self) -> None:
        if self.current is not None:
            self.current.cancel()
            self.pane.rounds.cancelling()

    # -- live updates (only from the current run) -------------------------------------------
    def _started(self, handle: JobHandle) -> None:
        if handle is self.current:
            self.pane.set_queued("")
            self.pane.rounds.start_clock()  # a queued deep run's budget starts only now
            self.answer.set_status("Working…")
            self._stage_text = ""
            self._stage_number = 0
            self._clock.start()

    def _event(self, handle: JobHandle, event) -> None:
        if handle is not self.current:
            return
        if self.pane.rounds.active:
            self.pane.rounds.on_event(event)
        if isinstance(event, Token):
            self.answer.append_tokens(event.text)
        elif isinstance(event, Stage):
            if event.detail:
                self.message.emit(event.detail)
            if event.name in STAGE_STATUS:  # the funnel's four stages (deep and drafting name theirs otherwise)
                self.pane.stages.stage(event.index, event.detail)
                self._stage_text = STAGE_STATUS[event.name]
                self._stage_number = event.index
                self._stage_started = time.monotonic()
                self._tick()
        elif isinstance(event, Round):
            # Deep research: its rounds are the evidence stage.
            self.pane.stages.stage(2, f"Round {event.index}")
        elif isinstance(event, Notice):
            self.message.emit(event.message)
        elif isinstance(event, Shortlisted):
            self.shortlist = [p.id for p in event.papers]
            self.pane.show_shortlist(event.papers)
        elif isinstance(event, EvidenceFound):
            self.live_evidence = list(event.evidence)
            self.pane.show_evidence(event.evidence)
            if any(e.sentences for e in event.evidence):
                # Focused evidence (before any model time): its best sentences are the first useful screen.
                self.answer.show_evidence_preview(event.evidence)

    def _tick(self) -> None:
        if self.current is None or not self._stage_text:
            return
        if self.answer.streamed_text() and self._stage_number < 4:
            self._stage_text = "Writing…"
        seconds = int(time.monotonic() - self._stage_started)
        clock = f" {seconds // 60}:{seconds % 60:02d}" if seconds >= 2 else ""
        self.answer.set_status(self._stage_text + clock)

    def _finished(self, handle: JobHandle, result: ResearchResult) -> None:
        if handle is not self.current:
            return
        self.current = None
        self._clock.stop()
        self.pane.set_running(False)
        self.pane.stages.finish()
        self.pane.rounds.finish(result)
        self.set_result(result)
        n, m = len(result.citations), len(result.references)
        self.message.emit(f"Answer ready: {n} citation{'s' if n != 1 else ''} from {m} paper{'s' if m != 1 else ''}")

    def set_result(self, result: ResearchResult) -> None:
        self.result = result
        self.answer.show_result(result)
        if result.evidence:
            self.pane.show_evidence(result.evidence)
        self.result_changed.emit(result)

    def _failed(self, handle: JobHandle, exc: BaseException) -> None:
        if handle is not self.current:
            return
        self.current = None
        self._clock.stop()
        self.pane.set_running(False)
        message = getattr(exc, "message", str(exc))
        self.pane.stages.fail()
        self.pane.rounds.fail(message)
        self.answer.show_stopped("The run stopped: " + message)
        self.pane.banner.show_error(exc)
        self.message.emit(message)

    def _cancelled(self, handle: JobHandle) -> None:
        if handle is not self.current:
            return
        self.current = None
        self._clock.stop()
        self.pane.set_running(False)
        self.pane.stages.fail("Cancelled")
        exc = handle.outcome[1] if handle.outcome else None
        gathered = getattr(exc, "partial", None)
        self.pane.rounds.cancel(len(gathered.evidence) if gathered is not None else None)
        if gathered is not None and gathered.evidence:
            # Deep research keeps what it gathered; offer to write the report from it.
            self.cancelled_deep = exc
            self.answer.show_stopped(f"Cancelled with {len(gathered.evidence)} passages gathered.")
            self.pane.banner.show_message(
                "info", exc.message, "Write the report from the evidence gathered so far, or ask again.",
                ["synthesize-partial:Synthesize from it"],
            )
        else:
            self.answer.show_stopped("Cancelled.")
        self.message.emit("Research cancelled")

    def synthesize_partial(self) -> JobHandle | None:
        """After a cancelled deep run: the report from the evidence it had gathered."""
        exc, self.cancelled_deep = self.cancelled_deep, None
        if exc is None:
            return None
        handle = self._start(partial(jobs.synthesize_partial, cancelled_exc=exc), exc.partial.query, "research", keep_lists=True)
        self.pane.rounds.begin_report()
        return handle

    # -- citations ------------------------------------------------------------------------
    def evidence_for(self, link: CiteLink) -> Evidence | None:
        # While a run is on screen, its links point into its own evidence, not the last answer's.
        running = self.current is not None and self.live_evidence
        pool = self.live_evidence if running or self.result is None else self.result.evidence
        if link.evidence_number:
            for e in pool:
                if e.number == link.evidence_number and e.paper_id == link.paper_id:
                    return e
        return next((e for e in pool if e.paper_id == link.paper_id and e.page == link.page), None)

    def citation_for(self, link: CiteLink) -> Citation | None:
        """The checked citation a link of the shown answer points to (its quote is what to highlight)."""
        if link.citation is None or self.result is None or self.current is not None:
            return None
        if not 0 <= link.citation < len(self.result.citations):
            return None
        c = self.result.citations[link.citation]
        return c if c.paper_id == link.paper_id and (c.page or 1) == link.page else None

    # -- save / export -------------------------------------------------------------------
    def save(self) -> JobHandle | None:
        if self.result is None:
            return None
        handle = self.host.submit("save", partial(jobs.save_result, result=self.result))
        handle.finished.connect(self._saved)
        handle.failed.connect(self.answer.banner.show_error)
        return handle

    def export(self, fmt: str, path: str | None = None) -> JobHandle | None:
        """`fmt`: a format of the export menu (common/export_menu.py); `path` None: ask where."""
        if self.result is None:
            return None
        if path is None:
            path = self._ask_path(fmt)
            if not path:
                return None
        handle = self.host.submit("export", partial(jobs.export_answer, fmt=desk_format(fmt), result=self.result, path=path))
        handle.finished.connect(self._saved)
        handle.failed.connect(self.answer.banner.show_error)
        return handle

    def _ask_path(self, fmt: str) -> str:
        parent = self.answer if isinstance(self.answer, QWidget) else None
        return ask_export_path(parent, fmt, str(Path.home() / Desk.export_file_name(self.result, desk_format(fmt))))

    def _saved(self, path: Path) -> None:
        self.answer.banner.show_message("info", f"Saved {Path(path).name}", str(path))
        self.saved.emit(Path(path))
        self.message.emit(f"Saved {path}")
