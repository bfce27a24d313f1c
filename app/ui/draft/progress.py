"""Live progress of a draft: what it is doing, the time left, the evidence so far,
and every search the drafter runs (starting queries, then the agent's own).

Fed the drafter's typed events (app/core/events.py) by `on_event`: its `Stage`s
(gather, write, check), one `Round` snapshot per change of a search
(deep_progress.RoundRecord: query, kind, what it found, the agent's judgement
after it, the budget's clock), and `EvidenceFound` (the pool so far).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from app.core.events import EvidenceFound, Round, Stage
from app.core.desk import RoundRecord

from ..common.time_left_bar import TimeLeftBar

SEARCH_ROLE = Qt.ItemDataRole.UserRole + 21

# The drafter's stages (drafting.draft.STAGES) as the time bar names its phases.
PHASES = {"gather": "searching the library", "write": "writing the section", "check": "checking citations"}


class DraftProgress(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(5)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setObjectName("stageActive")
        self.time_bar = TimeLeftBar()
        self.evidence = QLabel("")
        self.evidence.setObjectName("muted")
        self.searches = QTreeWidget()
        self.searches.setHeaderLabels(["#", "Search", "Found", "Time"])
        self.searches.setRootIsDecorated(False)
        self.searches.setUniformRowHeights(True)
        self.searches.setAlternatingRowColors(True)
        # Room for about six searches; the form above keeps the rest of the column.
        self.searches.setMinimumHeight(90)
        self.searches.setMaximumHeight(180)
        header = self.searches.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 30), (2, 52), (3, 48)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(col, width)
        layout.addWidget(self.message)
        layout.addWidget(self.time_bar)
        layout.addWidget(self.evidence)
        layout.addWidget(self.searches, 1)
        self._rows: dict[int, QTreeWidgetItem] = {}  # search number -> its row
        self._judged: set[int] = set()  # searches whose agent judgement is shown
        self.reset()

    def reset(self) -> None:
        self.message.setText("")
        self.message.hide()
        self.evidence.setText("")
        self.evidence.hide()
        self.time_bar.hide()
        self.searches.clear()
        self.searches.hide()
        self._rows = {}
        self._judged = set()

    # -- a run ------------------------------------------------------------------------
    def begin(self, total_s: float | None) -> None:
        """The job started running (not merely queued): the clock starts now."""
        reserve = 0.0 if total_s is None else min(150.0, 0.4 * total_s)  # the drafter's own rule, until it reports
        self.time_bar.start(total_s, reserve)
        self.searches.show()

    def on_event(self, event: Any) -> None:
        """One `events.Event` from the drafter, as the worker forwards it (others are ignored)."""
        if isinstance(event, Stage) and event.name in PHASES:
            self.message.setText(event.detail[:1].upper() + event.detail[1:])
            self.message.setVisible(bool(event.detail))
            self.time_bar.set_phase(PHASES[event.name])
        elif isinstance(event, Round) and isinstance(event.record, RoundRecord):
            self._on_round(event.record)
        elif isinstance(event, EvidenceFound):
            pool = event.evidence
            papers = len({e.paper_id for e in pool})
            self.evidence.setText(f"Evidence so far: {len(pool)} passage{'s' if len(pool) != 1 else ''} from {papers} paper{'s' if papers != 1 else ''}")
            self.evidence.show()

    def _on_round(self, record: RoundRecord) -> None:
        """A search starts (a row that fills in as it ends), ends, or is judged by the agent."""
        if record.clock is not None:
            self.time_bar.sync(asdict(record.clock))
        item = self._rows.get(record.index)
        if item is None:
            item = QTreeWidgetItem([str(record.index), record.topic, "…", ""])
            item.setToolTip(1, record.topic)
            self._rows[record.index] = item
            self.searches.addTopLevelItem(item)
            self.searches.scrollToItem(item)
        if record.state == "searching":
            return
        kind = "Starting query" if record.kind == "default" else f"Agent search for: {record.gap}" if record.gap else "Agent search"
        item.setText(2, str(record.found))
        item.setText(3, f"{record.seconds:.0f} s")
        papers = ", ".join(sorted(set(record.papers))) or "none"
        tip = f"{kind}\n“{record.topic}”\n{record.found} new passage{'s' if record.found != 1 else ''} from: {papers}"
        if record.notes:
            tip += "\n" + "\n".join(record.notes)
        for col in range(4):
            item.setToolTip(col, tip)
        item.setData(0, SEARCH_ROLE, record)
        for col in (0, 2, 3):
            item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if record.decision is not None and record.index not in self._judged:
            self._judged.add(record.index)
            self._add_decision(record.decision)

    def _add_decision(self, decision: dict) -> None:
        """The agent's judgement, as a muted line between the searches."""
        if decision.get("timeout"):
            text = "Agent: the research time ran out"
        elif decision.get("malformed"):
            text = "Agent: its reply was unusable; searching stopped"
        elif decision.get("sufficient"):
            text = "Agent: the evidence is sufficient"
        else:
            missing = "; ".join(str(m) for m in decision.get("missing", []) if str(m).strip())
            text = "Agent: missing " + (missing or "more evidence")
        item = QTreeWidgetItem(["\u21b3 " + text])
        italic = QFont(self.searches.font())
        italic.setItalic(True)
        item.setFont(0, italic)
        item.setForeground(0, self.palette().placeholderText())
        item.setToolTip(0, text)
        self.searches.addTopLevelItem(item)
        item.setFirstColumnSpanned(True)  # across the narrow columns; only possible once in the tree
        self.searches.scrollToItem(item)

    def finish(self, text: str) -> None:
        self.time_bar.finish(text)
        self.message.hide()
        for item in self._rows.values():  # a search cut off by the stop never reported back
            if item.text(2) == "…":
                item.setText(2, "–")

    def search_count(self) -> int:
        return sum(1 for i in range(self.searches.topLevelItemCount()) if self.searches.topLevelItem(i).data(0, SEARCH_ROLE) is not None)
