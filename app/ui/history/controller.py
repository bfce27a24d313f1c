"""The History tab's work: list and search the answers, reopen one in the Research tab as it was,
export and delete (issue 53).

The history is read on a worker of its own, with its own Desk on the same library (it never loads
a model): browsing answers must not wait behind a question the model is answering for minutes.
Its Desk follows the window's library (snapshot_loaded). Every answer is written by the core as
it is made, so the list refreshes when a result arrives or the papers change.
"""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.core.desk import Desk

from ..common import theme
from ..common.export_menu import ask_export_path, desk_format
from .pane import HistoryPane, local_time
from ..research.scope_bar import add_scope_bar
from ..common.worker import JobContext, JobHandle, WorkerHost


# -- jobs (run on the history worker) ----------------------------------------------------
def list_history(ctx: JobContext, search: str, location: str) -> tuple[list, int]:
    _follow(ctx, location)
    return ctx.desk.history(search), ctx.desk.history_count()


def open_record(ctx: JobContext, number: int):
    return ctx.desk.history_record(number)


def delete_record(ctx: JobContext, number: int) -> int:
    ctx.desk.delete_history(number)
    return number


def export_record(ctx: JobContext, number: int, fmt: str, path: str) -> Path:
    """`fmt`: the Desk's export format (md, bibtex, html, bundle, annotated-pdf)."""
    return ctx.desk.export_history(number, fmt, path, ctx.task)


def _follow(ctx: JobContext, location: str) -> None:
    """Open the window's library, if this worker's Desk is on another one."""
    if location and str(ctx.desk.location) != location:
        ctx._worker.replace_settings(copy.deepcopy(ctx.settings), location)  # noqa: SLF001 - the worker's own hook


class HistoryController(QObject):
    reopened = Signal(object)  # HistoryRecord
    message = Signal(str)

    def __init__(self, host: WorkerHost, pane: HistoryPane, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.pane = pane
        self.location = ""
        self.listing: JobHandle | None = None
        pane.search_changed.connect(self._searched)
        pane.reopen_requested.connect(self.reopen)
        pane.delete_requested.connect(self.delete)
        pane.export_requested.connect(self.export)

    def _searched(self, _text: str) -> None:
        # The search waits a moment after the last key (pane.SEARCH_DELAY_MS): it can fire after
        # the window has shut its worker down, with nothing left to list into.
        if not self.host.closed:
            self.refresh()

    def follow(self, location: str) -> JobHandle:
        self.location = location
        return self.refresh()

    def refresh(self) -> JobHandle:
        handle = self.host.submit("history", partial(list_history, search=self.pane.search.text(), location=self.location),
                                  key="history-list")  # a newer listing supersedes a queued one
        self.listing = handle
        handle.finished.connect(lambda found, h=handle: h is self.listing and self.pane.set_entries(*found))
        handle.failed.connect(lambda exc: self.message.emit(f"History: {getattr(exc, 'message', exc)}"))
        return handle

    def reopen(self, number: int) -> JobHandle:
        handle = self.host.submit("history-open", partial(open_record, number=number))
        handle.finished.connect(self.reopened)
        handle.failed.connect(lambda exc: self.message.emit(getattr(exc, "message", str(exc))))
        return handle

    def delete(self, number: int) -> JobHandle:
        handle = self.host.submit("history-delete", partial(delete_record, number=number))
        handle.finished.connect(lambda n: (self.message.emit(f"Deleted answer {n} from the history"), self.refresh()))
        handle.failed.connect(lambda exc: self.message.emit(getattr(exc, "message", str(exc))))
        return handle

    def export(self, number: int, fmt: str, path: str | None = None) -> JobHandle | None:
        """`fmt`: a format of the export menu (common/export_menu.py); `path` None: ask where."""
        if path is None:
            entry = next((e for e in self.pane.model.entries if e.number == number), None)
            start = str(Path.home() / Desk.export_file_name(_Named(entry.query if entry else "answer"), desk_format(fmt)))
            path = ask_export_path(self.pane, fmt, start)
            if not path:
                return None
        handle = self.host.submit("history-export", partial(export_record, number=number, fmt=desk_format(fmt), path=path))
        handle.finished.connect(self._exported)
        handle.failed.connect(self._export_failed)
        return handle

    def _exported(self, path: Path) -> None:
        self.pane.banner.show_message("info", f"Exported {Path(path).name}", str(path))
        self.message.emit(f"Exported {path}")

    def _export_failed(self, exc: BaseException) -> None:
        self.pane.banner.show_error(exc)
        self.message.emit(f"Export failed: {getattr(exc, 'message', exc)}")

    def shutdown(self) -> None:
        self.host.shutdown()


class _Named:
    """What Desk.export_file_name reads of a result: its question."""

    def __init__(self, query: str) -> None:
        self.query = query


def add_history_and_scope(window) -> HistoryController:
    """The History tab beside Research, Draft and Check, wired to the research view and the reader,
    and the research pane's scope line (scope_bar.py)."""
    window.scope_bar = add_scope_bar(window)
    pane = HistoryPane()
    window.history_pane = pane
    window.work_tabs.addTab(pane, theme.icon("history", 16), "History")
    controller = HistoryController(WorkerHost(window.settings, window.library_flag, window), pane, window)
    research = window.research

    def reopened(record) -> None:
        window.work_tabs.setCurrentIndex(window.work_tabs.indexOf(window.center))
        pane = window.research_pane  # the lists show this answer's papers and evidence, not the last run's
        pane.clear_results()
        pane.stages.finish()
        research.shortlist = list(record.result.papers)
        pane.show_shortlist([p for p in map(window.library_pane.paper, record.result.papers) if p is not None])
        research.set_result(record.result)  # Improve continues it (its scope comes with it)
        removed = record.entry.removed
        if removed:
            window.answer_view.banner.show_message(
                "warning", f"{len(removed)} cited paper{'s were' if len(removed) != 1 else ' was'} removed from the library since",
                "Their references are kept, marked “paper removed”; their citations no longer open a page.")
        window.statusBar().showMessage(f"Reopened answer {record.entry.number}, asked {local_time(record.entry.asked_at)}", 6000)

    controller.reopened.connect(reopened)
    controller.message.connect(lambda m: window.statusBar().showMessage(m, 6000))
    window.library.snapshot_loaded.connect(lambda snap: controller.follow(snap.location))
    window.library.papers_changed.connect(lambda _papers: controller.refresh())
    research.result_changed.connect(lambda result: _after_result(controller, result))
    # A removed paper's citation says so, rather than offering to re-index a PDF that is gone.
    window.answer_view.citation_clicked.disconnect(window.open_citation)
    window.answer_view.citation_clicked.connect(lambda link: _open_citation(window, link))
    window.results_action.setText("History")
    window.results_action.setToolTip("The answers asked of this library (the History tab)")
    window.results_action.triggered.disconnect()
    window.results_action.triggered.connect(lambda: window.work_tabs.setCurrentWidget(pane))
    return controller


def _open_citation(window, link) -> bool:
    result = window.research.result
    if result is not None and window.research.current is None and link.paper_id in result.extra.get("removed_papers", ()):
        window.answer_view.banner.show_message("warning", f"{link.paper_id} was removed from the library",
                                               "The answer keeps its reference; add the PDF again to open its pages.")
        return False
    return window.open_citation(link)


def _after_result(controller: HistoryController, result) -> None:
    number = result.extra.get("history")
    handle = controller.refresh()
    if number is not None:
        handle.finished.connect(lambda _found: controller.pane.select_number(number))
