"""The research pane: question, Standard/Deep and time budget, Run/Cancel,
live stage progress (or, for deep research, the live round-by-round view),
and the shortlisted papers and evidence as they arrive."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.records import Evidence, Paper

from ..common import theme
from ..common.banners import Banner
from .deep_rounds import DeepRoundsView
from .question_box import QuestionBox

STAGES = (
    (1, "Scoping: searching summaries"),
    (2, "Evidence: searching the shortlisted papers"),
    (3, "Synthesis: writing the answer"),
    (4, "Checking citations"),
)
STAGE_MARK = {"pending": "\u25cb", "active": "\u25d4", "done": "\u2713", "failed": "\u2717"}
EVIDENCE_ROLE = Qt.ItemDataRole.UserRole + 10
PAPER_ID_ROLE = Qt.ItemDataRole.UserRole + 11
TOOLTIP_ROLE = Qt.ItemDataRole.UserRole + 12  # a shortlisted paper's own tooltip, before the evidence marks it
UNLIMITED = 0  # the time budget spin box's special value


class StageList(QWidget):
    """Four stage lines: ○ pending, ◔ running, ✓ done, ✗ failed; each with the core's message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(2, 0, 2, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(3)
        self.marks: dict[int, QLabel] = {}
        self.labels: dict[int, QLabel] = {}
        self.states: dict[int, str] = {}
        for row, (n, text) in enumerate(STAGES):
            mark = QLabel()
            mark.setFixedWidth(14)
            label = QLabel(text)
            label.setWordWrap(True)
            grid.addWidget(mark, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(label, row, 1)
            self.marks[n], self.labels[n] = mark, label
        grid.setColumnStretch(1, 1)
        self.reset()

    def reset(self) -> None:
        for n, text in STAGES:
            self.labels[n].setText(text)
            self._set(n, "pending")

    def _set(self, n: int, state: str) -> None:
        self.states[n] = state
        name = {"pending": "stagePending", "active": "stageActive", "done": "stageDone", "failed": "stageFailed"}[state]
        for w in (self.marks[n], self.labels[n]):
            w.setObjectName(name)
            w.style().unpolish(w)
            w.style().polish(w)
        self.marks[n].setText(STAGE_MARK[state])

    def stage(self, n: int, message: str) -> None:
        """The core reported stage `n`: earlier stages are done, this one is running."""
        for m, _ in STAGES:
            if m < n and self.states[m] != "done":
                self._set(m, "done")
        self.labels[n].setText(message)
        self._set(n, "active")

    def finish(self) -> None:
        for n, _ in STAGES:
            self._set(n, "done")

    def fail(self, message: str = "") -> None:
        active = [n for n, s in self.states.items() if s == "active"]
        n = active[0] if active else 1
        if message:
            self.labels[n].setText(message)
        self._set(n, "failed")

    def texts(self) -> list[str]:
        return [self.labels[n].text() for n, _ in STAGES]


class ResearchPane(QWidget):
    run_requested = Signal(str, str, object)  # question, "standard" | "deep", minutes (None = unlimited)
    cancel_requested = Signal()
    evidence_activated = Signal(object)  # Evidence
    paper_activated = Signal(str)  # paper id
    action_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pane")
        self.running = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 8)
        layout.setSpacing(8)

        title = QLabel("Ask your library")
        title.setObjectName("paneTitle")
        layout.addWidget(title)
        self.banner = Banner()
        self.banner.action_requested.connect(self.action_requested)
        layout.addWidget(self.banner)

        self.question = QuestionBox()
        self.question.submitted.connect(self._submit)
        layout.addWidget(self.question)

        controls = QHBoxLayout()
        controls.setSpacing(0)
        self.standard_button = QToolButton()
        self.standard_button.setText("Standard")
        self.standard_button.setObjectName("segmentLeft")
        self.standard_button.setToolTip("Standard: search summaries, gather evidence, write a cited answer")
        self.deep_button = QToolButton()
        self.deep_button.setText("Deep")
        self.deep_button.setObjectName("segmentRight")
        self.deep_button.setToolTip("Deep: an agentic loop of searches within the time budget, then a report")
        self.mode_group = QButtonGroup(self)
        for b in (self.standard_button, self.deep_button):
            b.setCheckable(True)
            self.mode_group.addButton(b)
            controls.addWidget(b)
        self.standard_button.setChecked(True)
        self.mode_group.buttonToggled.connect(lambda *_: self._mode_changed())
        controls.addSpacing(10)
        self.budget_label = QLabel("Time budget")
        self.budget_label.setObjectName("muted")
        controls.addWidget(self.budget_label)
        controls.addSpacing(6)
        self.budget = QSpinBox()
        self.budget.setRange(UNLIMITED, 240)
        self.budget.setValue(5)
        self.budget.setSuffix(" min")
        self.budget.setSpecialValueText("Unlimited")
        self.budget.setToolTip("How long deep research may search before it writes the report (0 = unlimited)")
        controls.addWidget(self.budget)
        controls.addStretch(1)
        self.run_button = QPushButton(theme.icon("run", 16), "Run")
        self.run_button.setObjectName("primary")
        self.run_button.setMinimumWidth(96)
        self.run_button.clicked.connect(self._run_clicked)
        controls.addWidget(self.run_button)
        layout.addLayout(controls)

        self.queue_label = QLabel("")
        self.queue_label.setObjectName("muted")
        self.queue_label.hide()
        layout.addWidget(self.queue_label)

        self.stages = StageList()
        layout.addWidget(self.stages)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.papers = QTreeWidget()
        self.papers.setHeaderLabels(["Paper", "Authors", "Year"])
        self.papers.setRootIsDecorated(False)
        self.papers.setAlternatingRowColors(True)
        self.papers.setUniformRowHeights(True)
        self.papers.itemActivated.connect(lambda item, _c: self.paper_activated.emit(item.data(0, PAPER_ID_ROLE)))
        pheader = self.papers.header()
        pheader.setStretchLastSection(False)
        pheader.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        pheader.resizeSection(1, 150)
        pheader.resizeSection(2, 50)
        self.evidence = QTreeWidget()
        self.evidence.setColumnCount(4)
        self.evidence.setHeaderLabels(["#", "Paper", "Page", "Passage"])
        self.evidence.setRootIsDecorated(False)
        self.evidence.setAlternatingRowColors(True)
        self.evidence.setUniformRowHeights(True)
        self.evidence.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.evidence.itemActivated.connect(lambda item, _c: self.evidence_activated.emit(item.data(0, EVIDENCE_ROLE)))
        header = self.evidence.header()
        header.setStretchLastSection(True)
        header.resizeSection(0, 34)
        header.resizeSection(1, 120)
        header.resizeSection(2, 50)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.tabs.addTab(self.papers, "Papers")
        self.tabs.addTab(self.evidence, "Evidence")
        # A deep run's rounds sit above the lists, in a splitter: the reader decides
        # how much room each gets (and can fold the rounds up to their time bar).
        self.rounds = DeepRoundsView()
        self.results_split = QSplitter(Qt.Orientation.Vertical)
        self.results_split.setChildrenCollapsible(False)
        self.results_split.addWidget(self.rounds)
        self.results_split.addWidget(self.tabs)
        self.results_split.setStretchFactor(0, 3)
        self.results_split.setStretchFactor(1, 2)
        layout.addWidget(self.results_split, 1)
        self.set_deep_available(True)
        self._mode_changed()
        self.clear_results()

    # -- mode ---------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return "deep" if self.deep_button.isChecked() else "standard"

    def set_mode(self, mode: str) -> None:
        (self.deep_button if mode == "deep" else self.standard_button).setChecked(True)

    def time_minutes(self) -> float | None:
        return None if self.budget.value() == UNLIMITED else float(self.budget.value())

    def set_deep_available(self, available: bool, reason: str = "") -> None:
        self.deep_button.setEnabled(available)
        if not available:
            self.deep_button.setToolTip(reason or "Deep research is not available in this build")
            self.standard_button.setChecked(True)

    def _mode_changed(self) -> None:
        deep = self.mode == "deep"
        self.budget.setEnabled(deep)
        self.budget_label.setEnabled(deep)

    # -- run / cancel -------------------------------------------------------------------
    def _submit(self, text: str) -> None:
        if self.running:
            return
        self.question.remember(text)
        self.run_requested.emit(text, self.mode, self.time_minutes())

    def _run_clicked(self) -> None:
        if self.running:
            self.run_button.setEnabled(False)
            self.run_button.setText("Cancelling…")
            self.cancel_requested.emit()
        else:
            text = self.question.toPlainText().strip()
            if text:
                self._submit(text)
            else:
                self.question.setFocus()

    def set_running(self, running: bool) -> None:
        self.running = running
        self.run_button.setEnabled(True)
        if running:
            self.run_button.setText("Cancel")
            self.run_button.setIcon(theme.icon("stop", 16))
            self.run_button.setObjectName("")
        else:
            self.run_button.setText("Run")
            self.run_button.setIcon(theme.icon("run", 16))
            self.run_button.setObjectName("primary")
            self.queue_label.hide()
        self.run_button.style().unpolish(self.run_button)
        self.run_button.style().polish(self.run_button)

    def set_queued(self, text: str) -> None:
        self.queue_label.setText(text)
        self.queue_label.setVisible(bool(text))

    # -- live results -------------------------------------------------------------------
    def show_deep_run(self, question: str, minutes: float | None, cap: int = 0, max_attempts: int = 3) -> None:
        """A deep run starts: its rounds view replaces the four stage lines (it shows those phases itself)."""
        self.stages.hide()
        self.rounds.begin(question, minutes, cap, max_attempts)
        # The rounds are what a deep run is about; the lists keep a glimpse (drag for more).
        total = max(200, self.results_split.height())
        self.results_split.setSizes([total * 7 // 10, total * 3 // 10])

    def show_stage_lines(self) -> None:
        """A run that is not a deep search (e.g. Improve): the stage lines, the last rounds folded."""
        self.stages.show()
        if self.rounds.isVisible():
            self.rounds.set_expanded(False)

    def clear_results(self) -> None:
        self.stages.reset()
        self.stages.show()
        self.rounds.clear()
        self.papers.clear()
        self.evidence.clear()
        self.tabs.setTabText(0, "Papers")
        self.tabs.setTabText(1, "Evidence")

    def show_shortlist(self, papers: list[Paper]) -> None:
        from ..library.model import authors_short

        self.papers.clear()
        for p in papers:
            item = QTreeWidgetItem([p.title or p.id, authors_short(p.authors), p.year])
            item.setData(0, PAPER_ID_ROLE, p.id)
            tip = f"{p.title}\n{', '.join(p.authors)}\n{p.id} — double-click for the summary"
            item.setData(0, TOOLTIP_ROLE, tip)
            for col in range(3):
                item.setToolTip(col, tip)
            self.papers.addTopLevelItem(item)
        self.tabs.setTabText(0, f"Papers ({len(papers)})")

    def show_evidence(self, evidence: list[Evidence]) -> None:
        self.evidence.clear()
        for e in evidence:
            label = e.page_label if e.page_label and e.page_label != str(e.page) else ""
            page = f"{e.page}" + (f" ({label})" if label else "")
            snippet = " ".join(e.focus_text.split())  # the sentences sent to the model, once focused
            item = QTreeWidgetItem([str(e.number), e.paper_id, page, snippet])
            item.setData(0, EVIDENCE_ROLE, e)
            section = f"§ {e.section}\n" if e.section else ""
            item.setToolTip(3, f"{section}{snippet[:600]}{'…' if len(snippet) > 600 else ''}\n\nscore {e.score:.2f} — double-click to open at this page")
            item.setTextAlignment(0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.evidence.addTopLevelItem(item)
        self.tabs.setTabText(1, f"Evidence ({len(evidence)})")
        self._mark_papers_with_evidence({e.paper_id for e in evidence})

    def _mark_papers_with_evidence(self, with_evidence: set[str]) -> None:
        """The shortlist is every paper the first stage searched, shown before any passage is read;
        once the evidence is in, the papers it comes from go first and the others are muted, so a
        surgical question's list does not lead with a stereo-matching paper it only searched."""
        items = [self.papers.takeTopLevelItem(0) for _ in range(self.papers.topLevelItemCount())]
        items.sort(key=lambda it: it.data(0, PAPER_ID_ROLE) not in with_evidence)  # stable: rank order kept
        muted = QBrush(QColor(theme.colors()["muted"]))
        for item in items:  # marked afresh each time: a later report (deep rounds) may bring a paper evidence
            searched_only = item.data(0, PAPER_ID_ROLE) not in with_evidence
            tip = item.data(0, TOOLTIP_ROLE) + ("\n\nSearched: none of its passages bore on the question" if searched_only else "")
            for col in range(3):
                item.setData(col, Qt.ItemDataRole.ForegroundRole, muted if searched_only else None)
                item.setToolTip(col, tip)
            self.papers.addTopLevelItem(item)
        if items:
            self.tabs.setTabText(0, f"Papers ({sum(i.data(0, PAPER_ID_ROLE) in with_evidence for i in items)} of {len(items)})")
