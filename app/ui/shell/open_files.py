"""PDFs handed to the app ("Open with Research Desk", `research-desk paper.pdf`): import, then show.

Linux and Windows pass the files on the command line; macOS sends them to the running app as
file-open events (`FileOpenEvents`, installed on the application). The files go through the same import job as a drop or "Add papers…" (the window's worker,
its progress panel and report banner). When the import is done, the first paper that is in
the library — just added, or already there — opens in the reader.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, QTimer

from app.core.desk import ImportReport

from ..common.worker import JobHandle

log = logging.getLogger(__name__)


def first_paper(report: ImportReport) -> str:
    """The first opened file's paper id: added now or found already in the library ("" if none)."""
    for outcome in report.outcomes:
        if outcome.status in ("added", "duplicate") and outcome.paper_id:
            return outcome.paper_id
    return ""


def import_and_show(window, paths: list[str]) -> JobHandle | None:
    """Import `paths` into the window's library; show the first paper's PDF when they are in."""
    handle = window.library.add(list(paths))
    if handle is None:
        return None
    log.info("opening %d file(s) handed to the app", len(paths))

    def done(report: ImportReport) -> None:
        paper_id = first_paper(report)
        if not paper_id:
            log.warning("none of the opened files is in the library: %s",
                        "; ".join(o.message or o.status for o in report.outcomes))
            return
        log.info("showing %s, opened from %s", paper_id, paths[0])
        window.library_pane.select(paper_id)
        window.open_pdf(paper_id)
        window.raise_()
        window.activateWindow()

    handle.finished.connect(done)
    return handle


class FileOpenEvents(QObject):
    """The application's file-open events (macOS "Open with", a PDF dropped on the Dock icon),
    gathered for a moment and imported into `window` together."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.pending: list[str] = []
        self._timer = QTimer(self, singleShot=True, interval=200)
        self._timer.timeout.connect(self._flush)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.FileOpen and event.file() and not getattr(self.window, "_closing", False):
            self.pending.append(event.file())
            self._timer.start()
            return True
        return super().eventFilter(watched, event)

    def _flush(self) -> None:
        files, self.pending = self.pending, []
        if files:
            import_and_show(self.window, files)
