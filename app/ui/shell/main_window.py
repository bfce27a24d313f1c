"""The main window: library | research over answer, or the Draft tab | reader (PDF, summary & notes).

It builds the panes, owns the worker threads and wires pane intents to the
library, research and draft controllers. Window geometry and splitter positions
live in QSettings (a file in the config folder); everything else is the
core's Settings.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QUrl
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QMessageBox, QSplitter, QTabWidget, QToolBar, QWidget

from app.core import paths
from app.core.desk import LibraryLayout, plural
from app.core.settings import Settings

from . import heap
from ..common import theme
from ..library import jobs
from ..common.answer_render import CiteLink
from ..research.answer_view import AnswerView
from ..research.question_box import MAX_HISTORY
from ..check.controller import add_check_tab
from ..draft.controller import DraftController
from ..draft.pane import DraftPane
from .drop_overlay import DropOverlay, local_paths
from ..library.controller import LibraryController
from ..library.pane import LibraryPane
from .menus import WindowMenus
from ..library.paper_panel import PaperPanel
from ..reader.viewer import Passage, PdfViewer
from ..reader.wiring import wire_reader
from ..history.controller import add_history_and_scope
from ..research.controller import ResearchController
from ..research.pane import ResearchPane
from .window_models import ModelSetup
from ..common.worker import WorkerHost


def window_settings() -> QSettings:
    """Window state only (DESIGN.md: QSettings for geometry/state), beside settings.json."""
    return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)


class MainWindow(ModelSetup, QMainWindow):
    def __init__(self, settings: Settings | None = None, library: str | None = None, *, check_models: bool = True) -> None:
        super().__init__()
        self.settings = settings or Settings.load()
        self.library_flag = library
        self.layout_ = LibraryLayout(paths.default_library())
        self._closing = False
        self._first_run_shown, self._calibration_offered = False, set()  # once a session each (window_models.py)
        self.setWindowTitle("Research Desk")
        self.setWindowIcon(theme.app_icon())
        self.setAcceptDrops(True)

        # Two worker threads: the one that owns the Desk (models, LanceDB), and a
        # helper without a Desk for network probes and model setup, so that
        # listing LM Studio's models never waits behind an import.
        self.host = WorkerHost(self.settings, library, self)
        self.aux = WorkerHost(self.settings, library, self, owns_desk=False)

        self.library_pane = LibraryPane()
        self.research_pane = ResearchPane()
        self.answer_view = AnswerView()
        self.pdf_viewer = PdfViewer()
        self.paper_panel = PaperPanel()
        self.reader = QTabWidget()
        self.reader.setDocumentMode(True)
        self.reader.addTab(self.pdf_viewer, theme.icon("pdf", 16), "PDF")
        self.reader.addTab(self.paper_panel, theme.icon("summary", 16), "Summary && notes")

        self.center = QSplitter(Qt.Orientation.Vertical)
        self.center.setObjectName("centerSplitter")
        self.center.addWidget(self.research_pane)
        self.center.addWidget(self.answer_view)
        self.center.setStretchFactor(1, 1)
        self.center.setChildrenCollapsible(False)
        # Research and section drafting share the middle column as two tabs.
        self.draft_pane = DraftPane()
        self.work_tabs = QTabWidget()
        self.work_tabs.setObjectName("workTabs")
        self.work_tabs.setDocumentMode(True)
        self.work_tabs.addTab(self.center, theme.icon("search", 16), "Research")
        self.work_tabs.addTab(self.draft_pane, theme.icon("notes", 16), "Draft")
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.library_pane)
        self.splitter.addWidget(self.work_tabs)
        self.splitter.addWidget(self.reader)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setCollapsible(1, False)
        self.setCentralWidget(self.splitter)
        self.reader.hide()

        self.library = LibraryController(self.host, self.library_pane, self)
        self.research = ResearchController(self.host, self.research_pane, self.answer_view, self)
        self.draft = DraftController(
            self.host, self.draft_pane, files_host=self.aux,
            default_folder=lambda: self.layout_.results_dir / "drafts", parent=self,
        )
        self.checker = add_check_tab(self, lambda pid, page, quote: self.open_pdf(pid, page, Passage(quote, "the check's quote") if quote else None))
        self.text_search = wire_reader(self)  # the library's text search, the viewer's reading positions
        self._build_toolbar()
        self._build_statusbar()
        self.menus = WindowMenus(self, window_settings)  # File … Help, reusing the actions above
        self._connect()
        self.history = add_history_and_scope(self)  # the History tab and the research pane's scope line (issue 53)
        self.drop_overlay = DropOverlay(self)

        self.research_pane.set_deep_available(True)
        self.research_pane.budget.setValue(int(self.settings.deep.time_minutes or 0))
        self._restore_state()
        self.library.load()
        if check_models:
            self.check_models()

    # -- construction ------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        bar = QToolBar("Main")
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.addToolBar(bar)
        self.add_action = QAction(theme.icon("add"), "Add papers…", self)
        self.add_action.setShortcut(QKeySequence.StandardKey.Open)
        self.add_action.triggered.connect(self.library_pane.choose_files)
        self.add_folder_action = QAction(theme.icon("folder"), "Add folder…", self)
        self.add_folder_action.triggered.connect(self.library_pane.choose_folder)
        self.settings_action = QAction(theme.icon("settings"), "Settings", self)
        self.settings_action.setShortcut(QKeySequence.StandardKey.Preferences)
        self.settings_action.triggered.connect(lambda: self.open_settings())
        self.results_action = QAction(theme.icon("history"), "Saved answers", self)
        self.results_action.setToolTip("Open the library's results folder")
        self.results_action.triggered.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.layout_.results_dir))))
        self.ask_action = focus = QAction("Ask", self)
        focus.setShortcut(QKeySequence("Ctrl+L"))
        focus.triggered.connect(lambda: (self.work_tabs.setCurrentIndex(0), self.research_pane.question.setFocus()))
        self.addAction(focus)
        self.addAction(self.add_action)  # Ctrl+O; the button is in the library pane
        bar.addAction(self.add_folder_action)
        bar.addSeparator()
        bar.addAction(self.results_action)
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding, spacer.sizePolicy().verticalPolicy().Preferred)
        bar.addWidget(spacer)
        bar.addAction(self.settings_action)

    def _build_statusbar(self) -> None:
        status = self.statusBar()
        status.setSizeGripEnabled(True)
        self.library_label = QLabel("")
        self.models_label = QLabel("")
        status.addWidget(self.library_label, 1)
        status.addPermanentWidget(self.models_label)

    def _connect(self) -> None:
        lp, rp, av = self.library_pane, self.research_pane, self.answer_view
        lp.open_pdf_requested.connect(lambda pid: self.open_pdf(pid))
        lp.summary_requested.connect(lambda pid: self.show_paper(pid, "summary"))
        lp.notes_requested.connect(lambda pid: self.show_paper(pid, "notes"))
        lp.action_requested.connect(self.handle_action)
        rp.action_requested.connect(self.handle_action)
        av.action_requested.connect(self.handle_action)
        rp.evidence_activated.connect(self.open_evidence)
        rp.paper_activated.connect(lambda pid: self.show_paper(pid, "summary"))
        av.citation_clicked.connect(self.open_citation)
        av.summary_clicked.connect(lambda pid: self.show_paper(pid, "summary"))
        self.pdf_viewer.closed.connect(self.reader.hide)
        self.paper_panel.notes_saved.connect(self._reindex_notes)
        self.paper_panel.details.edited.connect(self._edit_details)
        self.paper_panel.summarize_requested.connect(self.library.summarize)
        self.paper_panel.open_pdf_requested.connect(lambda pid: self.open_pdf(pid))
        self.library.snapshot_loaded.connect(self._snapshot_loaded)
        self.library.papers_changed.connect(self._papers_changed)
        self.library.summarized.connect(lambda _ids: self.paper_panel.refresh_summary())
        self.library.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        self.research.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        self.draft.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        self.draft.citation_requested.connect(self.open_draft_citation)
        self.draft.action_requested.connect(self.handle_action)
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(lambda *_: self.settings.theme == "system" and self.apply_theme())

    # -- state ---------------------------------------------------------------------------
    def _restore_state(self) -> None:
        qs = window_settings()
        geometry = qs.value("geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(1480, 920)
        for splitter, key, default in (
            (self.splitter, "mainSplitter", [500, 980, 0]),
            (self.center, "centerSplitter", [370, 550]),
        ):
            state = qs.value(key)
            if not (isinstance(state, QByteArray) and splitter.restoreState(state)):
                splitter.setSizes(default)
        self._reader_width = int(qs.value("readerWidth", 560))
        history = qs.value("history", [])
        if isinstance(history, str):
            history = [history]
        self.research_pane.question.set_history([str(h) for h in (history or [])])
        self.research_pane.set_mode(str(qs.value("mode", "standard")))
        self.draft_pane.restore_state(qs)
        self.work_tabs.setCurrentIndex(1 if qs.value("workTab") == "draft" else 0)

    def save_state(self) -> None:
        qs = window_settings()
        qs.setValue("geometry", self.saveGeometry())
        qs.setValue("mainSplitter", self.splitter.saveState())
        qs.setValue("centerSplitter", self.center.saveState())
        if self.reader.isVisible():
            qs.setValue("readerWidth", self.splitter.sizes()[2])
        qs.setValue("history", self.research_pane.question.history[-MAX_HISTORY:])
        qs.setValue("mode", self.research_pane.mode)
        qs.setValue("workTab", "draft" if self.work_tabs.currentWidget() is self.draft_pane else "research")
        self.draft_pane.save_state(qs)
        qs.sync()

    # -- library ---------------------------------------------------------------------------
    def _snapshot_loaded(self, snap: jobs.LibrarySnapshot) -> None:
        heap.settle()  # what lives as long as the window leaves the collector's full passes
        self.layout_ = LibraryLayout(snap.location)
        self.paper_panel.set_library(self.layout_)
        self.library_label.setText(f"Library: {snap.location}")
        self.setWindowTitle(f"Research Desk — {Path(snap.location).name}")
        if snap.last_result is not None and self.research.result is None and self.research.current is None:
            self.research.set_result(snap.last_result)
        if snap.papers and not self.host.pending("warm"):
            # The model reads the answer prompt's fixed part while the user types the question.
            self.host.submit("warm", jobs.warm_up, key="warm")

    def _papers_changed(self, papers: list) -> None:
        self.library_label.setText(f"Library: {self.layout_.root} · {plural(len(papers), 'paper')}")

    def _reindex_notes(self, paper_id: str) -> None:
        handle = self.host.submit("notes", partial(jobs.reindex_notes, paper_id=paper_id), key=f"notes:{paper_id}")
        handle.finished.connect(self.paper_panel.notes_indexed)
        handle.failed.connect(lambda exc: self.paper_panel.notes_status.setText(
            f"Saved, but not re-indexed: {getattr(exc, 'message', exc)}"))

    def _edit_details(self, paper_id: str, fields: dict) -> None:
        handle = self.host.submit("edit", partial(jobs.edit_paper, paper_id=paper_id, fields=fields))
        handle.finished.connect(lambda paper: (self.paper_panel.show_paper(paper, "details"), self.library.refresh()))
        handle.failed.connect(lambda exc: self.paper_panel.details.status.setText(f"Not saved: {getattr(exc, 'message', exc)}"))

    # -- reader -------------------------------------------------------------------------------
    def _show_reader(self, tab: QWidget) -> None:
        if not self.reader.isVisible():
            sizes = self.splitter.sizes()
            total = sum(sizes)
            reader = max(440, self._reader_width)
            library = sizes[0]
            # Make room for the reader by narrowing the library before the answer.
            center = total - library - reader
            if center < 540:
                library = max(280, library - (540 - center))
                center = total - library - reader
            self.reader.show()
            self.splitter.setSizes([library, max(420, center), reader])
        self.reader.setCurrentWidget(tab)

    def open_pdf(self, paper_id: str, page: int = 0, passage: Passage | None = None) -> bool:  # page 0: where it was left
        paper = self.library_pane.paper(paper_id)
        path = self.layout_.pdf_path(paper_id)
        if not path.exists():
            self.answer_view.banner.show_message("error", f"The PDF of {paper_id} is not in the library.", str(path),
                                                 ["reindex:Re-index the library"])
            return False
        self._show_reader(self.pdf_viewer)
        return self.pdf_viewer.open_document(path, paper, page, passage)

    def open_citation(self, link: CiteLink) -> bool:
        """A citation's paper at its page, with what the claim rests on highlighted: the
        checked citation's quote, the preview's sentence, or else the evidence passage."""
        evidence = self.research.evidence_for(link)
        citation = self.research.citation_for(link)
        passage = None
        if evidence is not None and evidence.page == link.page:
            where = f"§ {evidence.section}" if evidence.section else ""
            label = " · ".join(x for x in (f"Source {evidence.number}", where) if x)
            sentences = evidence.sentences
            if citation is not None and citation.quote:
                passage = Passage(citation.quote, f"{label} · the claim's quote")
            elif link.sentence is not None and 0 <= link.sentence < len(sentences):
                passage = Passage(sentences[link.sentence].text, label)
            else:
                passage = Passage(evidence.text, label)
        elif citation is not None and citation.quote:
            passage = Passage(citation.quote, "the claim's quote")
        return self.open_pdf(link.paper_id, link.page, passage)

    def open_draft_citation(self, cite) -> bool:
        """A draft's citation: its paper at the evidence page, the ledger's quote highlighted."""
        path = self.layout_.pdf_path(cite.paper_id)
        if not path.exists():
            self.draft_pane.view.banner.show_message("error", f"The PDF of {cite.paper_id} is not in the library.", str(path))
            return False
        label = " · ".join(x for x in (f"@{cite.key}", f"paragraph {cite.paragraph}" if cite.paragraph else "", "quote from the evidence ledger") if x)
        return self.open_pdf(cite.paper_id, cite.page, Passage(cite.quote, label) if cite.quote else None)

    def open_evidence(self, evidence) -> bool:
        """An Evidence-tab passage at its page, its focused sentences (what the model read) highlighted."""
        where = f"§ {evidence.section}" if evidence.section else ""
        passage = Passage(evidence.focus_text, " · ".join(x for x in (f"Source {evidence.number}", where) if x))
        return self.open_pdf(evidence.paper_id, evidence.page, passage)

    def show_paper(self, paper_id: str, tab: str = "summary") -> None:
        paper = self.library_pane.paper(paper_id)
        if paper is None:
            return
        self.library_pane.select(paper_id)
        self._show_reader(self.paper_panel)
        self.paper_panel.show_paper(paper, tab)

    def apply_theme(self) -> None:
        theme.apply_theme(QApplication.instance(), self.settings.theme)
        self.answer_view.apply_theme()
        self.draft_pane.view.apply_theme()
        self.paper_panel.refresh_summary()

    # -- banner actions ------------------------------------------------------------------------
    def handle_action(self, action: str) -> None:
        if action in ("choose-model", "settings"):
            self.open_settings("Models")
        elif action == "setup-models":
            self.show_first_run()
        elif action == "retry":
            self.research.retry()
        elif action == "finish-import":
            ids, self.library.incomplete = self.library.incomplete, []
            if ids:
                self.library.reindex(ids)
        elif action == "synthesize-partial":
            self.research.synthesize_partial()
        elif action == "rebuild":
            self.library.rebuild()
        elif action == "reindex":
            ids = [pid for pid in self.research.shortlist if self.library_pane.paper(pid)]
            if self.library.stale_reason or not ids:
                self.library.rebuild()
            else:
                self.library.reindex(ids)
        elif action == "start-lmstudio":
            self.start_lmstudio()
        elif action == "calibrate-judge":
            self.calibrate_judge()
        elif action == "details":
            QMessageBox.information(self, "Import problems", self.library.failure_details() or "No details.")

    # -- drag and drop --------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
            self.drop_overlay.show_over(self)
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802
        if local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragLeaveEvent(self, event) -> None:  # noqa: N802
        self.drop_overlay.hide()

    def dropEvent(self, event) -> None:  # noqa: N802
        self.drop_overlay.hide()
        found = local_paths(event.mimeData())
        if found:
            event.acceptProposedAction()
            self.library.add(found)

    # -- closing ----------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Save, then stop the worker threads (cancel, close the Desk, join)."""
        if self._closing:
            return
        self._closing = True
        self.paper_panel.save_notes()
        self.save_state()
        self.pdf_viewer.shutdown()
        self.history.shutdown()
        self.aux.shutdown()
        self.host.shutdown()
        getattr(self, "restore_excepthook", lambda: None)()  # error_dialog.install_excepthook's
        heap.release()
