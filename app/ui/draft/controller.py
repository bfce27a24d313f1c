"""Section drafting: draft / cancel / retry / save files — the Draft tab → worker jobs.

Follows ResearchController: one current run; starting another discards the
previous handle (its late events are dropped by the worker host); every
report is checked against the current handle. Drafting shares the one
Desk worker with research and imports, so a draft asked for during an
import waits its turn, and says so.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.core.desk import SECTIONS, DraftContext
from app.core.events import ClaimWritten, Notice, Stage

from . import jobs as draft_jobs
from .pane import DraftPane
from ..common.worker import JobHandle, WorkerHost

class DraftController(QObject):
    result_changed = Signal(object)  # DraftResult
    citation_requested = Signal(object)  # DraftCite: the main window opens the PDF
    action_requested = Signal(str)  # banner actions that are the main window's (settings, models, re-index)
    message = Signal(str)  # for the status bar
    files_written = Signal(object)  # {"markdown": Path, ...}

    def __init__(
        self,
        host: WorkerHost,
        pane: DraftPane,
        *,
        files_host: WorkerHost | None = None,
        default_folder: Callable[[], Path] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.host = host
        # Writing files needs no Desk: a helper worker does it, so that saving a draft
        # never waits behind an import on the Desk's worker.
        self.files_host = files_host or host
        self.default_folder = default_folder or (lambda: Path.home())
        self.pane = pane
        self.view = pane.view
        self.current: JobHandle | None = None
        self.last_request: tuple[str, DraftContext, float | None] | None = None
        self.last_folder: Path | None = None
        pane.draft_requested.connect(self.run)
        pane.cancel_requested.connect(self.cancel)
        pane.action_requested.connect(self._action)
        self.view.citation_clicked.connect(self.citation_requested)
        self.view.save_files_requested.connect(lambda: self.save_files())

    # -- run --------------------------------------------------------------------------------
    def run(self, section: str, context: DraftContext, minutes: float | None = 5.0) -> JobHandle:
        self.last_request = (section, context, minutes)
        if self.current is not None:
            self.current.discard()
        busy = self.host.running_handle()
        handle = self.host.submit("draft", partial(draft_jobs.draft, section=section, context=context, time_minutes=minutes))
        self.current = handle
        pane = self.pane
        pane.banner.hide()
        pane.form.banner.hide()
        pane.progress.reset()
        self._paragraphs: list[str] = []  # the section as it streams, paragraph by paragraph
        pane.set_running(True)
        waiting = busy is not None and busy is not handle and busy.kind != "warm"  # the model loading for this very task
        note = f"Waiting for the current task ({busy.kind}) to finish…" if waiting else "Starting…"
        pane.set_queued(note if waiting else "")
        self.view.begin(SECTIONS.get(section, section), note)
        handle.started.connect(lambda: self._started(handle, minutes))
        handle.event.connect(lambda e: self._event(handle, e))
        handle.finished.connect(lambda r: self._finished(handle, r))
        handle.failed.connect(lambda e: self._failed(handle, e))
        handle.cancelled.connect(lambda: self._cancelled(handle))
        return handle

    def cancel(self) -> None:
        if self.current is not None:
            self.current.cancel()

    def retry(self) -> JobHandle | None:
        if self.last_request is None:
            return None
        return self.run(*self.last_request)

    # -- live updates (only from the current run) ------------------------------------------------
    def _started(self, handle: JobHandle, minutes: float | None) -> None:
        if handle is not self.current:
            return
        self.pane.set_queued("")
        self.pane.progress.begin(None if minutes is None else minutes * 60.0)
        self.view.set_status("Working…")

    def _event(self, handle: JobHandle, event) -> None:
        """One typed event of the current draft: the progress column and the streamed section draw it."""
        if handle is not self.current:
            return
        self.pane.progress.on_event(event)
        if isinstance(event, Stage) and event.detail:
            line = event.detail[:1].upper() + event.detail[1:]
            self.view.set_waiting_text(line)
            self.message.emit(line)
        elif isinstance(event, Notice):
            self.message.emit(event.message)
        elif isinstance(event, ClaimWritten) and hasattr(event.claim, "text"):
            # A paragraph of the section, new or grown since the last one shown.
            index = max(0, int(event.index))
            del self._paragraphs[index + 1:]
            self._paragraphs += [""] * (index + 1 - len(self._paragraphs))
            self._paragraphs[index] = event.claim.text
            self.view.show_paragraphs(list(self._paragraphs))
            self.view.set_status("Writing…")

    def _end(self, handle: JobHandle) -> bool:
        if handle is not self.current:
            return False
        self.current = None
        self.pane.set_running(False)
        return True

    def _finished(self, handle: JobHandle, result) -> None:
        if not self._end(handle):
            return
        self.pane.progress.finish("Drafted")
        self.set_result(result)
        n, m = len(result.cited_keys()), len(result.paragraphs)
        self.message.emit(f"{result.title} drafted: {m} paragraph{'s' if m != 1 else ''} citing {n} paper{'s' if n != 1 else ''}")

    @property
    def result(self):
        """The DraftResult on show (the view holds it, so save/copy always act on what is seen)."""
        return self.view.result

    def set_result(self, result) -> None:
        self.view.show_result(result)
        self.result_changed.emit(result)

    def _failed(self, handle: JobHandle, exc: BaseException) -> None:
        if not self._end(handle):
            return
        message = getattr(exc, "message", str(exc))
        self.pane.progress.finish("Stopped")
        self.view.show_stopped("The draft stopped: " + message)
        self.pane.banner.show_error(exc)
        self.message.emit(message)

    def _cancelled(self, handle: JobHandle) -> None:
        if not self._end(handle):
            return
        self.pane.progress.finish("Cancelled")
        self.view.show_stopped("Cancelled — no draft was finished; what the model had written is shown above.")
        self.message.emit("Drafting cancelled")

    # -- files -----------------------------------------------------------------------------------
    def save_files(self, folder: str | Path | None = None) -> JobHandle | None:
        if self.result is None:
            return None
        if folder is None:
            folder = self._ask_folder()
            if not folder:
                return None
        self.last_folder = Path(folder)
        handle = self.files_host.submit("draft-files", partial(draft_jobs.write_files, result=self.result, folder=str(folder)))
        handle.finished.connect(self._files_written)
        handle.failed.connect(self.view.banner.show_error)
        return handle

    def _ask_folder(self) -> str:
        start = self.last_folder or self.default_folder()
        while not start.exists() and start != start.parent:
            start = start.parent
        folder = QFileDialog.getExistingDirectory(self.view, "Save the draft's files into…", str(start))
        if not folder:
            return ""
        # The files are named after the section: a second draft of it would silently replace the first.
        section = self.result.section
        taken = [p.name for p in Path(folder).glob(f"{section}*") if p.name in _file_names(section)]
        if taken:
            answer = QMessageBox.question(
                self.view, "Replace files?",
                f"{', '.join(sorted(taken))} already exist{'s' if len(taken) == 1 else ''} in {folder}. Replace them?",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return ""
        return folder

    def _files_written(self, files: dict[str, Path]) -> None:
        folder = Path(files["markdown"]).parent
        names = ", ".join(Path(p).name for p in files.values())
        self.view.banner.show_message("info", f"Saved the draft to {folder}", names, ["open-folder:Open folder"])
        self.files_written.emit(files)
        self.message.emit(f"Saved {len(files)} files to {folder}")

    # -- banner actions ----------------------------------------------------------------------------
    def _action(self, action: str) -> None:
        if action == "retry":
            self.retry()
        elif action == "open-folder":
            if self.last_folder is not None:
                QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.last_folder)))
        else:
            self.action_requested.emit(action)


def _file_names(section: str) -> set[str]:
    """What write_outputs writes for a section (app/core/drafting/outputs.py)."""
    return {f"{section}.md", f"{section}.tex", f"{section}.bib", f"{section}_ledger.csv", f"{section}_ledger.md"}
