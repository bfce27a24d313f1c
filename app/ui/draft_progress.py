"""Live progress of a draft: what it is doing, the time left, the evidence so far,
and every search the drafter runs (starting queries, then the agent's own).

Fed by the drafter's events: "round" (a search starts), "search" (its
SearchRecord), "decision" (the agent's judgement), "evidence" (the pool),
"budget" (the clock), and its progress messages.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from .time_left_bar import TimeLeftBar

SEARCH_ROLE = Qt.ItemDataRole.UserRole + 21


def phase_of(message: str) -> str:
    """The drafter's stage line → the time bar's phase ("Stage 2/3: writing…" → "writing")."""
    if message.startswith("Stage 1"):
        return "searching the library"
    if message.startswith("Stage 2"):
        return "writing the section"
    if message.startswith("Stage 3"):
        return "checking citations"
    return ""


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
        self._pending: QTreeWidgetItem | None = None
        self.reset()

    def reset(self) -> None:
        self.message.setText("")
        self.message.hide()
        self.evidence.setText("")
        self.evidence.hide()
        self.time_bar.hide()
        self.searches.clear()
        self.searches.hide()
        self._pending = None

    # -- a run ------------------------------------------------------------------------
    def begin(self, total_s: float | None) -> None:
        """The job started running (not merely queued): the clock starts now."""
        reserve = 0.0 if total_s is None else min(150.0, 0.4 * total_s)  # the drafter's own rule, until it reports
        self.time_bar.start(total_s, reserve)
        self.searches.show()

    def set_message(self, message: str) -> None:
        if message.startswith("Deep: "):
            message = message[6:]
        self.message.setText(message)
        self.message.setVisible(bool(message))
        phase = phase_of(message)
        if phase:
            self.time_bar.set_phase(phase)

    def on_budget(self, reading: dict) -> None:
        self.time_bar.sync(reading)

    def on_round(self, payload: dict) -> None:
        """A search starts: a row that fills in when its record arrives."""
        self._pending = QTreeWidgetItem([str(self.search_count() + 1), str(payload.get("topic", "")), "…", ""])
        self._pending.setToolTip(1, str(payload.get("topic", "")))
        self.searches.addTopLevelItem(self._pending)
        self.searches.scrollToItem(self._pending)

    def on_search(self, record) -> None:
        item = self._pending or QTreeWidgetItem()
        if self._pending is None:
            self.searches.addTopLevelItem(item)
        self._pending = None
        kind = "Starting query" if record.kind == "default" else f"Agent search for: {record.gap}" if record.gap else "Agent search"
        item.setText(0, str(record.number))
        item.setText(1, record.query)
        item.setText(2, str(record.found))
        item.setText(3, f"{record.seconds:.0f} s")
        papers = ", ".join(record.papers) or "none"
        tip = f"{kind}\n“{record.query}”\n{record.found} new passage{'s' if record.found != 1 else ''} from: {papers}"
        if record.note:
            tip += f"\n{record.note}"
        for col in range(4):
            item.setToolTip(col, tip)
        item.setData(0, SEARCH_ROLE, record)
        for col in (0, 2, 3):
            item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def on_decision(self, decision: dict) -> None:
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

    def on_evidence(self, pool: list) -> None:
        papers = len({e.paper_id for e in pool})
        self.evidence.setText(f"Evidence so far: {len(pool)} passage{'s' if len(pool) != 1 else ''} from {papers} paper{'s' if papers != 1 else ''}")
        self.evidence.show()

    def finish(self, text: str) -> None:
        self.time_bar.finish(text)
        self.message.hide()
        if self._pending is not None:  # a search cut off by the stop never reported back
            self._pending.setText(2, "–")
            self._pending = None

    def search_count(self) -> int:
        return sum(1 for i in range(self.searches.topLevelItemCount()) if self.searches.topLevelItem(i).data(0, SEARCH_ROLE) is not None)
