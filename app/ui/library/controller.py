"""Library work: load, import, remove, summarize, re-index — pane intents → worker jobs."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.desk import ImportReport
from app.core.events import Notice, Progress, Stage
from app.core.records import Paper

from . import jobs
from .import_panel import LongJob
from .pane import LibraryPane
from ..common.worker import JobContext, JobHandle, WorkerHost

log = logging.getLogger(__name__)

POLL_INTERVAL_MS = 4000  # how often an idle window looks for papers other writers added


def poll_papers(ctx: JobContext, seen: int | None) -> tuple[int, list[Paper] | None]:
    """The papers table's version, and the papers when it is not `seen` (a job: worker thread)."""
    version = ctx.desk.library_version()
    return version, (ctx.desk.papers() if version != seen else None)


def report_summary(report: ImportReport) -> tuple[str, str, str]:
    """(kind, message, details) for an import report."""
    added, dup, failed = report.count("added"), report.count("duplicate"), report.count("failed")
    cancelled = report.count("cancelled")
    parts = [f"{added} paper{'s' if added != 1 else ''} added"]
    if dup:
        parts.append(f"{dup} already in the library")
    if failed:
        parts.append(f"{failed} failed")
    if cancelled:
        parts.append(f"{cancelled} cancelled")
    details = "\n".join(o.message for o in report.outcomes if o.status in ("failed", "cancelled"))
    kind = "warning" if failed else "info"
    seconds = f" ({report.seconds:.0f} s)" if report.seconds >= 1 else ""
    text = ", ".join(parts)
    return kind, text[:1].upper() + text[1:] + seconds + ".", details


class LibraryController(QObject):
    papers_changed = Signal(list)
    summarized = Signal(list)  # paper ids
    snapshot_loaded = Signal(object)  # jobs.LibrarySnapshot
    busy_changed = Signal(bool)
    message = Signal(str)  # for the status bar

    def __init__(self, host: WorkerHost, pane: LibraryPane, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.pane = pane
        self.location = ""
        self.stale_reason = ""
        self.current: JobHandle | None = None  # the running import-like job shown in the panel
        self.last_report: ImportReport | None = None
        self._failure_details = ""
        self.incomplete: list[str] = []
        # Other writers (a CLI import, a script, a colleague's window) add papers too: while the
        # worker is idle, a cheap look at the papers table's version tells when to refresh.
        self._seen_version: int | None = None
        self._poll_timer = QTimer(self)
        self._poll_timer.setInterval(POLL_INTERVAL_MS)
        self._poll_timer.timeout.connect(self.poll)
        pane.add_requested.connect(self.add)
        pane.import_source_requested.connect(self.import_source)
        pane.remove_requested.connect(self.remove)
        pane.summarize_requested.connect(self.summarize)
        pane.reindex_requested.connect(self.reindex)
        pane.import_panel.cancel_requested.connect(self.cancel)

    # -- loading -----------------------------------------------------------------------
    def load(self) -> JobHandle:
        handle = self.host.submit("load", jobs.load_library)
        handle.finished.connect(self._loaded)
        handle.failed.connect(lambda exc: self.pane.banner.show_error(exc, ("settings",)))
        return handle

    def _loaded(self, snap: jobs.LibrarySnapshot) -> None:
        self.location = snap.location
        self.stale_reason = snap.stale_reason
        self._set_papers(snap.papers)
        incomplete = [p.id for p in snap.papers if p.status == "importing"]
        if snap.stale_reason:
            self.pane.banner.show_message(
                "warning", "The index was built with a different embedding model.", snap.stale_reason, ["rebuild"]
            )
        elif incomplete:
            # An import was interrupted (closed window, crash): offer to finish it.
            n = len(incomplete)
            self.pane.banner.show_message(
                "warning", f"{n} paper{'s' if n != 1 else ''} did not finish importing.",
                "They are not searchable yet. Finishing the import redoes them from their stored PDF copies.",
                ["finish-import:Finish importing"],
            )
            self.incomplete = incomplete
        if not snap.stale_reason and any(p.vectors_pending for p in snap.papers):
            self.compute_vectors()  # an import stopped in its vectors phase: they resume now
        self.snapshot_loaded.emit(snap)
        self._seen_version = None  # the next poll refreshes once, then only on change
        self._poll_timer.start()

    def poll(self) -> JobHandle | None:
        """Refresh the list if another writer changed the library (skipped while any job runs)."""
        if self.host.busy:
            return None
        try:
            handle = self.host.submit("poll", partial(poll_papers, seen=self._seen_version))
        except RuntimeError:  # the worker is shut down (the window is closing): polling ends with it
            self._poll_timer.stop()
            return None
        handle.finished.connect(self._polled)
        handle.failed.connect(lambda exc: log.warning("could not check the library for changes: %s", exc))
        return handle

    def _polled(self, result: tuple[int, list[Paper] | None]) -> None:
        version, papers = result
        self._seen_version = version
        if papers is not None:
            self._set_papers(papers)

    def refresh(self) -> JobHandle:
        handle = self.host.submit("list", jobs.list_papers)
        handle.finished.connect(self._set_papers)
        return handle

    def _set_papers(self, papers: list[Paper]) -> None:
        self.pane.set_papers(papers)
        self.papers_changed.emit(papers)

    # -- long jobs shown in the import panel ---------------------------------------------
    def _run_long(self, kind: LongJob, title: str, fn, done) -> JobHandle:
        handle = self.host.submit(kind, fn)
        queued = self.host.running_handle() not in (None, handle)
        if queued:
            self.message.emit(f"{title} waits for the current task to finish…")
        handle.started.connect(lambda: self._long_started(handle, kind, title))
        handle.event.connect(self._long_event(handle))
        handle.finished.connect(done)
        handle.failed.connect(self._long_failed)
        handle.cancelled.connect(lambda: self.pane.banner.show_message(
            "info", f"{title} cancelled.", "Papers already finished are kept; incomplete ones can be re-indexed or added again."))
        handle.ended.connect(lambda: self._long_ended(handle))
        self.busy_changed.emit(True)
        return handle

    def _long_started(self, handle: JobHandle, kind: LongJob, title: str) -> None:
        self.current = handle
        self.pane.import_panel.start(title, kind)

    def _long_event(self, handle: JobHandle):
        def update(event) -> None:
            if isinstance(event, jobs.PapersChanged):
                self._set_papers(event.papers)
            elif self.current is not handle:
                return
            elif isinstance(event, Progress):
                self.pane.import_panel.update_progress(event)
            elif isinstance(event, Stage) and event.detail:
                self.pane.import_panel.show_status(event.detail)
            elif isinstance(event, Notice):
                self.message.emit(event.message)
        return update

    def _long_failed(self, exc: BaseException) -> None:
        action = "rebuild" if getattr(exc, "action", "") == "reindex" and self.stale_reason else ""
        self.pane.banner.show_error(exc, (action,) if action else ())

    def _long_ended(self, handle: JobHandle) -> None:
        if self.current is handle:
            self.current = None
            self.pane.import_panel.finish()
        if not any(h.kind in ("import", "vectors", "reindex", "summarize", "rebuild", "remove") for h in self.host.pending()):
            self.busy_changed.emit(False)

    def cancel(self) -> None:
        if self.current is not None:
            self.current.cancel()

    # -- intents ---------------------------------------------------------------------------
    def add(self, paths: list[str]) -> JobHandle | None:
        paths = [str(p) for p in paths if p]
        if not paths:
            return None
        names = ", ".join(Path(p).name for p in paths[:3]) + ("…" if len(paths) > 3 else "")
        self.message.emit(f"Adding {names}")
        return self._run_long("import", "Importing", partial(jobs.import_paths, paths=paths), self._imported)

    def compute_vectors(self) -> JobHandle:
        return self._run_long("vectors", "Computing vectors", jobs.compute_vectors, lambda report: None)

    def import_source(self, kind: str, path: str) -> JobHandle:
        title = "Importing from Zotero" if kind == "zotero" else f"Importing {Path(path).name}"
        return self._run_long("import", title, partial(jobs.import_source, kind=kind, path=path), self._source_imported)

    def _source_imported(self, report) -> None:
        """A Zotero/BibTeX/RIS import: imported, updated, without a PDF, failed — each entry named in the details."""
        problems = [o for o in report.outcomes if o.status in ("missing", "failed")]
        self._failure_details = "\n".join(f"{o.label}: {o.status}" + (f" — {o.message}" if o.message else "") for o in problems)
        kind = "warning" if report.count("failed") else "info"
        self.pane.banner.show_message(kind, report.summary(), "", ["details"] if problems else [])
        self.message.emit(report.summary())

    def _imported(self, report: ImportReport) -> None:
        self.last_report = report
        kind, message, details = report_summary(report)
        self._failure_details = details
        hint = details.splitlines()[0] if details.count("\n") == 0 and details else ""
        actions = ["details"] if details.count("\n") >= 1 else []
        self.pane.banner.show_message(kind, message, hint, actions)
        self.message.emit(message)

    def failure_details(self) -> str:
        return self._failure_details

    def remove(self, ids: list[str]) -> JobHandle:
        handle = self.host.submit("remove", partial(jobs.remove_papers, ids=ids))
        handle.finished.connect(lambda removed: (self.refresh(), self.message.emit(f"Removed {len(removed)} paper(s)")))
        handle.failed.connect(lambda exc: self.pane.banner.show_error(exc))
        return handle

    def summarize(self, ids: list[str]) -> JobHandle:
        def done(done_ids: list[str]) -> None:
            self.pane.banner.show_message("info", f"Summarized {len(done_ids)} paper{'s' if len(done_ids) != 1 else ''}.")
            self.summarized.emit(done_ids)

        return self._run_long("summarize", "Summarizing", partial(jobs.summarize_papers, ids=ids), done)

    def reindex(self, ids: list[str]) -> JobHandle:
        def done(report: ImportReport) -> None:
            kind, message, details = report_summary(report)
            self.pane.banner.show_message(kind, message.replace("added", "re-indexed"), details)

        return self._run_long("reindex", "Re-indexing", partial(jobs.reindex_papers, ids=ids), done)

    def rebuild(self) -> JobHandle:
        def done(count: int) -> None:
            self.stale_reason = ""
            self.pane.banner.show_message("info", f"Index rebuilt: {count} papers indexed with the current embedding model.")

        return self._run_long("rebuild", "Rebuilding the index", jobs.rebuild_index, done)

