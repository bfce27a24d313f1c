"""Checking a manuscript: the Check tab's requests → worker jobs, the core's events → the tab.

Follows DraftController: one current run; starting another discards the previous
handle, and every report is checked against the current handle. The check runs on
the Desk's worker; showing the manuscript and writing an export run on the helper
worker (no Desk), so neither waits behind an import.

Where a citation is in the text: the core gives each sentence's line and column; the
citation's key is looked for from there on (`\\cite{key}`, `@key`, or "Surname … Year"
for a .docx's text citations). A key not found marks the sentence's first word instead.
"""

from __future__ import annotations

import html
import logging
import re
from functools import partial
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog

from app.core.desk import VERDICT_LABELS, Desk
from app.core.events import Notice, Progress, SentenceChecked, Stage

from . import jobs as check_jobs
from ..common import theme
from .tab import VERDICT_COLOR, CheckTab
from ..common.worker import JobHandle, WorkerHost

log = logging.getLogger(__name__)

SEARCH_CHARS = 600  # how far past a sentence's start its citations are looked for (at least)


# -- where a citation is in the manuscript's text ----------------------------------------
def sentence_offset(text: str, line: int, column: int) -> int:
    """The character offset of (line, column), both 1-based; clamped to the text."""
    pos = 0
    for _ in range(max(0, line - 1)):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return min(pos + max(0, column - 1), end)


def find_citation(text: str, key: str, start: int, stop: int) -> tuple[int, int] | None:
    """(start, end) of `key` as a citation in text[start:stop], or None."""
    year = re.fullmatch(r"(.+) ((?:19|20)\d\d[a-z]?)", key)
    if year and not re.search(r"[@{]" + re.escape(key), text[start:stop]):
        # A text citation ("Gupta 2021"): the surname, then the year within a few words.
        pattern = re.compile(re.escape(year.group(1)) + r"\b[^()\n]{0,60}?\(?" + re.escape(year.group(2)))
        m = pattern.search(text, start, stop)
        return (m.start(), m.end()) if m else None
    exact = re.escape(key)
    for pattern in (r"(?<=[@{,;])\s*" + exact, r"(?<![\w\-])" + exact):  # a key in a citation first, then anywhere
        m = re.compile(pattern + r"(?![\w\-])").search(text, start, stop)
        if m:
            return m.start() + (len(m.group(0)) - len(key)), m.end()
    return None


def first_word(text: str, start: int) -> tuple[int, int]:
    m = re.compile(r"\S+").search(text, start)
    return (m.start(), min(m.end(), m.start() + 40)) if m else (start, start + 1)


def citation_tip(c) -> str:
    """The hover text of one checked citation: verdict, where, quote, note, better source."""
    label = VERDICT_LABELS.get(c.verdict, c.verdict)
    color = theme.colors()[VERDICT_COLOR.get(c.verdict, "pending")]
    where = f" → {html.escape(c.paper_id)}" if c.paper_id else ""
    if c.page:
        printed = f" (printed {html.escape(c.printed_page)})" if c.printed_page and c.printed_page != str(c.page) else ""
        where += f", page {c.page}{printed}"
    lines = [f"<b style='color:{color}'>{html.escape(label)}</b> — <code>{html.escape(c.key)}</code>{where}"]
    if c.quote:
        lines.append(f"<i>“{html.escape(c.quote)}”</i>")
    if c.note:
        lines.append(html.escape(c.note))
    if c.better_source:
        b = c.better_source
        quote = f": “{html.escape(b.quote)}”" if b.quote else ""
        lines.append(f"<b>Better source:</b> {html.escape(b.paper_id)}, page {b.page}{quote}")
    if c.paper_id or c.better_source:
        lines.append("<span style='color:gray'>Click to open the paper at this page.</span>")
    return "<p style='white-space:pre-wrap'>" + "<br>".join(lines) + "</p>"


class CheckController(QObject):
    citation_requested = Signal(str, int, str)  # paper_id, page, quote: the main window opens the PDF
    report_changed = Signal(object)  # the CheckReport on show (finished, or what a cancel kept)
    message = Signal(str)  # for the status bar
    action_requested = Signal(str)  # banner actions that are the main window's (models, settings)
    exported = Signal(str)  # the path written

    def __init__(self, host: WorkerHost, tab: CheckTab, *, files_host: WorkerHost | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.files_host = files_host or host
        self.tab = tab
        self.view = tab.view
        self.current: JobHandle | None = None
        self.loading: JobHandle | None = None
        self.report = None  # CheckReport
        self.draft = ""
        self.bib = ""
        self.sentences: list = []  # CheckedSentence, as they arrive
        self.total = 0  # citing sentences in the draft (from the check's progress)
        self.citations: list = []  # CheckedCitation by the index the view's links carry
        tab.draft_chosen.connect(self.show_draft)
        tab.check_requested.connect(self.run)
        tab.cancel_requested.connect(self.cancel)
        tab.export_requested.connect(lambda fmt: self.export(fmt))
        self.view.citation_clicked.connect(self.open_citation)
        tab.action_requested.connect(self._action)
        tab.theme_changed.connect(self._recolour)

    def _recolour(self) -> None:
        self.tab.set_counts(self.report.counts if self.report is not None else self._counts())
        if self.view.source:
            self._redraw(self.view.source)

    def _action(self, action: str) -> None:
        if action == "retry" and self.draft:
            self.run(self.draft, self.bib)
        else:
            self.action_requested.emit(action)

    # -- the manuscript's text -------------------------------------------------------------
    def show_draft(self, path: str) -> JobHandle:
        """Show the manuscript (read on the helper worker); a new draft forgets the last report."""
        if path != self.draft and self.current is None:
            self._forget()
        self.draft = path
        self.tab.last_folder = str(Path(path).parent)
        handle = self.files_host.submit("check-read", partial(check_jobs.read_manuscript, path=path))
        self.loading = handle
        handle.finished.connect(lambda text: self._shown(handle, text))
        handle.failed.connect(lambda exc: handle is self.loading and self.view.show_placeholder(
            html.escape(f"{Path(path).name} cannot be shown: {getattr(exc, 'message', exc)}")))
        return handle

    def _shown(self, handle: JobHandle, text: str) -> None:
        if handle is self.loading:
            self._redraw(text)

    def _redraw(self, text: str) -> None:
        """The text again, with every sentence checked so far marked (some came before the text)."""
        self.view.set_source(text)
        self.citations = []
        for sentence in self.sentences:
            self._mark(sentence)

    def _forget(self) -> None:
        self.report = None
        self.sentences = []
        self.total = 0
        self.citations = []
        if self.view.source:
            self.view.set_source(self.view.source)  # no marks from the last run
        self.tab.reset()
        self.tab.set_status("")
        self.tab.banner.hide()

    # -- run -------------------------------------------------------------------------------------
    def run(self, draft: str, bib: str = "") -> JobHandle:
        if self.current is not None:
            self.current.discard()
        self.draft, self.bib = draft, bib
        self._forget()
        busy = self.host.running_handle()
        handle = self.host.submit("check", partial(check_jobs.check, draft=draft, bib=bib or None))
        self.current = handle
        self.show_draft(draft)  # read again: the file may have changed since it was shown
        self.tab.set_running(True)
        waiting = busy is not None and busy is not handle and busy.kind != "warm"  # the model loading for this very task
        self.tab.set_status(f"Waiting for the current task ({busy.kind}) to finish…" if waiting else "Starting…")
        handle.started.connect(lambda: handle is self.current and self.tab.set_status("Reading the manuscript…"))
        handle.event.connect(lambda e: self._event(handle, e))
        handle.finished.connect(lambda r: self._finished(handle, r))
        handle.failed.connect(lambda e: self._failed(handle, e))
        handle.cancelled.connect(lambda: self._cancelled(handle))
        return handle

    def cancel(self) -> None:
        if self.current is not None:
            self.current.cancel()

    def _event(self, handle: JobHandle, event) -> None:
        if handle is not self.current:
            return
        if isinstance(event, SentenceChecked):
            self.sentences.append(event.sentence)
            if self.view.source:
                self._mark(event.sentence)
            self.tab.set_counts(self._counts())
        elif isinstance(event, Progress) and event.unit == "sentences":
            self.total = int(event.total)
            self.tab.set_progress(int(event.done), int(event.total))
        elif isinstance(event, Stage):
            self.tab.set_status(f"{event.name}…" + (f" {event.detail}" if event.detail else ""))
        elif isinstance(event, Notice):
            self.message.emit(event.message)

    def _mark(self, sentence) -> None:
        text = self.view.source
        start = sentence_offset(text, sentence.line, sentence.column)
        stop = min(len(text), start + max(SEARCH_CHARS, 3 * len(sentence.text)))
        for c in sentence.citations:
            span = find_citation(text, c.key, start, stop) or first_word(text, start)
            self.citations.append(c)
            self.view.mark(len(self.citations) - 1, span[0], span[1], c.verdict, citation_tip(c))

    def _counts(self) -> dict[str, int]:
        counts = {v: 0 for v in VERDICT_LABELS}
        for s in self.sentences:
            for c in s.citations:
                counts[c.verdict] = counts.get(c.verdict, 0) + 1
        return counts

    def _end(self, handle: JobHandle) -> bool:
        if handle is not self.current:
            return False
        self.current = None
        self.tab.set_running(False)
        return True

    def _finished(self, handle: JobHandle, report) -> None:
        if not self._end(handle):
            return
        if len(report.sentences) != len(self.sentences):  # an event lost: the report is the truth
            self.sentences = list(report.sentences)
            if self.view.source:
                self._redraw(self.view.source)
        self._set_report(report)
        n, total = len(report.sentences), report.total_sentences
        summary = ", ".join(f"{k} {VERDICT_LABELS[v]}" for v, k in report.counts.items() if k) or "no citations checked"
        if report.partial:
            self.tab.set_status(f"Stopped early: {n} of {total} citing sentences checked ({summary}).")
        else:
            self.tab.set_status(f"{n} citing sentence{'s' if n != 1 else ''} checked: {summary}.")
        self.tab.set_progress(n, total)
        self.message.emit(f"Citation check of {Path(report.draft).name}: {summary}")

    def _set_report(self, report) -> None:
        self.report = report
        self.tab.set_counts(report.counts)
        self.tab.set_problems(list(report.problems))
        self.tab.set_exportable(True)
        self.report_changed.emit(report)

    def _failed(self, handle: JobHandle, exc: BaseException) -> None:
        if not self._end(handle):
            return
        self.tab.set_status("The check stopped.")
        self.tab.banner.show_error(exc)
        self.message.emit(getattr(exc, "message", str(exc)))

    def _cancelled(self, handle: JobHandle) -> None:
        """Cancelled before the check's own loop could keep a report: keep what arrived."""
        if not self._end(handle):
            return
        report = Desk.check_report_from({"draft": self.draft, "bib": self.bib, "partial": True, "total_sentences": self.total,
                                         "sentences": [s.to_dict() for s in self.sentences]})
        self._set_report(report)
        self.tab.set_status(f"Cancelled: {len(self.sentences)} citing sentences were checked.")
        self.message.emit("Citation check cancelled")

    # -- clicking a citation -------------------------------------------------------------------------
    def open_citation(self, index: int) -> None:
        if not 0 <= index < len(self.citations):
            return
        c = self.citations[index]
        if c.paper_id:
            self.citation_requested.emit(c.paper_id, int(c.page or 1), c.quote or "")
        elif c.better_source is not None:
            b = c.better_source
            self.message.emit(f"{c.key} is not in the library; showing the suggested source, {b.paper_id}")
            self.citation_requested.emit(b.paper_id, int(b.page or 1), b.quote or "")
        else:
            self.message.emit(f"{c.key} is not in the library: {c.note or 'add its PDF to check it'}")

    # -- export -------------------------------------------------------------------------------------------
    def export(self, fmt: str, path: str | None = None) -> JobHandle | None:
        """The report as Markdown ("md") or JSON ("json"), written on the helper worker."""
        if self.report is None:
            return None
        if path is None:
            path = self._ask_path(fmt)
            if not path:
                return None
        text = self.report.to_json() if fmt == "json" else self.report.to_markdown()
        handle = self.files_host.submit("check-export", partial(check_jobs.write_text, path=path, text=text))
        handle.finished.connect(self._exported)
        handle.failed.connect(self.tab.banner.show_error)
        return handle

    def _ask_path(self, fmt: str) -> str:
        suffix, name = (".json", "JSON (*.json)") if fmt == "json" else (".md", "Markdown (*.md)")
        draft = Path(self.report.draft)
        start = str(draft.with_name(f"{draft.stem}-check{suffix}"))
        path, _ = QFileDialog.getSaveFileName(self.tab, "Export the check report", start, name)
        if path and not Path(path).suffix:
            path += suffix
        return path

    def _exported(self, path: str) -> None:
        self.tab.banner.show_message("info", f"Exported the report to {path}", "")
        self.exported.emit(path)
        self.message.emit(f"Exported the check report to {path}")


def add_check_tab(window, open_pdf: Callable) -> CheckController:
    """The Check tab in the window's work tabs, wired to its workers, status bar and PDF reader."""
    tab = CheckTab()
    window.work_tabs.addTab(tab, theme.icon("summary", 16), "Check")
    controller = CheckController(window.host, tab, files_host=window.aux, parent=window)
    controller.message.connect(lambda m: window.statusBar().showMessage(m, 6000))
    controller.citation_requested.connect(open_pdf)
    controller.action_requested.connect(window.handle_action)
    return controller
