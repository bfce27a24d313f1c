"""The live view of a deep research run: time left as a bar, then one card per round.

The core reports the run as typed events (app/core/events.py): `Round` snapshots
of each search (deep_progress.RoundRecord, with the budget's clock), the
funnel's `Stage`s (the report is written and checked). `DeepRunLog`
(app/core/research/deep/progress.py) folds them into phase, clock and rounds;
this view draws that and counts the clock down between readings with a QTimer,
so the bar moves smoothly although the core reports the time only per round.

How a round reads: round N searched a gap, found some new passages, and then
the model reviewed the evidence (that review picks the next gap). So each
review is shown under the round it reviews.
"""

from __future__ import annotations

import html
import time
from typing import Any, Callable

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.core.desk import ENDED_PHASES, LIVE_PHASES, RETRY_EXHAUSTED, DeepRunLog, plural  # noqa: F401

from ..common import theme
from ..common.answer_render import limit_words
from .deep_round_widgets import BudgetBar, RoundCard, bar_colors

TICK_MS = 200  # bar repaint while a run is live: a 5-minute budget moves ~1 px per tick on a wide pane


def clock_text(seconds: float) -> str:
    """m:ss (h:mm:ss past an hour), never negative."""
    s = max(0, int(round(seconds)))
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"



class DeepRoundsView(QFrame):
    """Header (collapsible) · time bar and caption · round cards · the report line."""

    def __init__(self, parent: QWidget | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self.setObjectName("deepRounds")
        self.log = DeepRunLog(clock)
        self.cards: list[RoundCard] = []
        self.unfolded: dict[int, bool] = {}  # card index -> the reader's own choice
        self._following = True  # keep the newest round in sight until the reader scrolls up
        self._theme_key = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(5)

        head = QHBoxLayout()
        head.setSpacing(6)
        self.toggle = QToolButton()
        self.toggle.setObjectName("flat")
        self.toggle.setText("Deep research")
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow)
        self.toggle.setCheckable(True)
        self.toggle.setChecked(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolTip("Show or hide the rounds")
        self.toggle.toggled.connect(self.set_expanded)
        self.summary = QLabel()
        self.summary.setObjectName("muted")
        # One-line labels must not widen the pane when their text is long: they clip instead.
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        head.addWidget(self.toggle)
        head.addWidget(self.summary, 1)
        layout.addLayout(head)

        self.bar = BudgetBar(self.log)
        layout.addWidget(self.bar)
        self.caption = QLabel()
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout.addWidget(self.caption)

        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.viewport().setAutoFillBackground(False)  # the pane's own background shows through
        inner = QWidget()
        inner.setObjectName("deepRoundsList")
        self.list_layout = QVBoxLayout(inner)
        self.list_layout.setContentsMargins(0, 0, 4, 0)
        self.list_layout.setSpacing(5)
        self.report = QLabel()
        self.report.setObjectName("deepReport")
        self.report.setTextFormat(Qt.TextFormat.RichText)
        self.report.setWordWrap(True)
        self.report.hide()
        self.list_layout.addWidget(self.report)
        self.list_layout.addStretch(1)
        self.scroll.setWidget(inner)
        layout.addWidget(self.scroll, 1)
        bar = self.scroll.verticalScrollBar()
        bar.valueChanged.connect(lambda v: setattr(self, "_following", v >= bar.maximum() - 8))
        bar.rangeChanged.connect(lambda _lo, hi: bar.setValue(hi) if self._following else None)

        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self._restyle()
        self.hide()

    # -- driven by the research controller ------------------------------------------------------
    def begin(self, question: str, minutes: float | None, cap: int = 0, max_attempts: int = 3) -> None:
        """`max_attempts` is accepted for the callers' sake: the core marks exhausted gaps itself."""
        self.log.begin(question, minutes, cap)
        self.unfolded.clear()
        self._following = True
        self.set_expanded(True)
        self.show()
        self.timer.start()
        self.refresh()

    def start_clock(self) -> None:
        if self.active:
            self.log.start_clock()
            self._tick()

    def begin_report(self) -> None:
        self.log.begin_report()
        self.show()
        self.timer.start()
        self.refresh()

    def clear(self) -> None:
        self.timer.stop()
        self.log.reset()
        self.refresh()
        self.hide()

    @property
    def active(self) -> bool:
        return self.log.phase in LIVE_PHASES

    def on_event(self, event: Any) -> None:
        """One `events.Event` from the core, as the worker forwards it (others are ignored)."""
        if self.log.on_event(event):
            self.refresh()

    def cancelling(self) -> None:
        if self.active:
            self.log.cancelling = True
            self._tick()

    def finish(self, result: Any) -> None:
        if not self.active:  # only the live run (an Improve after it must not rewrite its log)
            return
        self.log.finish(result)
        self._ended()

    def cancel(self, gathered: int | None = None) -> None:
        if not self.active:  # only the live run (an Improve after it must not rewrite its log)
            return
        self.log.cancel(gathered)
        self._ended()

    def fail(self, message: str) -> None:
        if not self.active:  # only the live run (an Improve after it must not rewrite its log)
            return
        self.log.fail(message)
        self._ended()

    def _ended(self) -> None:
        self.timer.stop()
        self.refresh()

    # -- collapsing ---------------------------------------------------------------------------------
    def set_expanded(self, expanded: bool) -> None:
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)  # comes back here through `toggled`
            return
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.scroll.setVisible(expanded)
        # Collapsed, the view is only its header and bar: a splitter must not keep it tall.
        self.setMaximumHeight(16777215 if expanded else self.sizeHint().height())

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    # -- drawing ------------------------------------------------------------------------------------
    def refresh(self) -> None:
        log = self.log
        self._restyle()
        while len(self.cards) < len(log.rounds):
            card = RoundCard()
            card.clicked.connect(lambda i=len(self.cards): self.toggle_card(i))
            self.list_layout.insertWidget(self.list_layout.indexOf(self.report), card)
            self.cards.append(card)
        while len(self.cards) > len(log.rounds):
            self.cards.pop().deleteLater()
        current = log.current()
        last = len(log.rounds) - 1
        # Earlier rounds fold to one line so the latest has the room; while the latest
        # has found nothing yet, the review before it (why this gap) stays open too.
        keep_open = {last, last - 1} if current is not None and not current.searched else {last}
        for i, (card, r) in enumerate(zip(self.cards, log.rounds)):
            card.show_round(r, r is current, self.unfolded.get(i, i in keep_open))
        self._show_report_line()
        self._tick()

    def toggle_card(self, index: int) -> None:
        if 0 <= index < len(self.cards):
            self.unfolded[index] = not self.cards[index].expanded
            if index < len(self.cards) - 1:
                self._following = False  # reading an earlier round: do not jump away from it
            self.refresh()

    def _show_report_line(self) -> None:
        log, c = self.log, theme.colors()
        if not log.report_line:
            self.report.hide()
            return
        if log.phase == "synthesis":
            mark, color = "\u270e", c["accent"]
        elif log.phase == "finished":
            mark, color = "\u2713", c["ok"]
        else:
            mark, color = "\u2717", c["bad"]
        weight = "600" if log.phase == "synthesis" else "normal"
        limits = ""
        if log.phase == "finished" and log.limits_hit:
            limits = f'<br/><span style="color:{c["warn"]}">Limits hit: {html.escape(", ".join(limit_words(x) for x in log.limits_hit))}</span>'
        self.report.setText(f'<span style="color:{color}; font-weight:{weight}">{mark}&nbsp; {html.escape(log.report_line)}</span>{limits}')
        self.report.show()

    def _tick(self) -> None:
        self.summary.setText(self.summary_text())
        self.caption.setText(self.caption_html())
        self.bar.setVisible(not self.log.unlimited)
        self.bar.update()

    def summary_text(self) -> str:
        log = self.log
        searches = plural(len(log.rounds), "search") if log.rounds else "no search"
        found = f"{plural(log.passages(), 'passage')} from {plural(len(log.papers()), 'paper')}"
        if log.phase == "scoping":
            return "Scoping the library…"
        if log.phase == "research":
            now = log.rounds[-1] if log.rounds else None
            where = "scoping search" if now is None or now.index == 0 else f"round {now.index}"
            lead = "Cancelling…" if log.cancelling else where[:1].upper() + where[1:]
            return f"{lead} · {found}"
        if log.phase == "synthesis":
            return ("Cancelling… · " if log.cancelling else "") + f"{searches} · {found}"
        if log.phase in ENDED_PHASES:
            return f"{log.ended_text} · {searches} · {found}"
        return ""

    def caption_html(self) -> str:
        log, c, colors = self.log, theme.colors(), bar_colors()
        accent = f'<span style="color:{colors["search"].name()}">\u25a0</span>'
        amber = f'<span style="color:{colors["reserve" if log.phase != "synthesis" else "writing"].name()}">\u25a0</span>'
        muted = f'style="color:{c["muted"]}"'
        elapsed = clock_text(log.elapsed())
        if log.phase == "finished" and log.partial_report and log.searched_for is not None:
            return f"<span {muted}>Searched {clock_text(log.searched_for)} (cancelled) · report written in {elapsed}</span>"
        if log.phase in ENDED_PHASES:
            budget = "" if log.unlimited else f" of {clock_text(log.reading.total_s)}"
            verb = {"finished": "Took", "cancelled": "Cancelled after", "failed": "Stopped after"}[log.phase]
            return f"<span {muted}>{verb} {elapsed}{budget}</span>"
        if log.unlimited:
            if log.phase == "synthesis":
                return f"{amber} Writing the report <span {muted}>· {elapsed} elapsed · no time limit</span>"
            cap = f" or after {plural(log.cap, 'round')}" if log.cap else ""
            return f"<span {muted}>No time limit · {elapsed} elapsed · searching stops when no gaps are left{cap}</span>"
        if log.phase == "synthesis":
            return f"{amber} {clock_text(log.report_left())} left to write the report"
        search_left = log.research_left()
        if search_left <= 0:
            return f"{accent} <span {muted}>Search time is up</span> &nbsp; {amber} {clock_text(log.report_left())} left for the report"
        return (f"{accent} {clock_text(search_left)} left to search &nbsp; "
                f"{amber} <span {muted}>+ {clock_text(log.reading.reserve_s)} kept for the report</span>")

    def card_texts(self) -> list[str]:
        return [card.plain_text() for card in self.cards]

    # -- theme ------------------------------------------------------------------------------------
    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._theme_key != theme.colors()["base"]:
            self.refresh()  # the cards' rich text carries the theme's colours

    def _restyle(self) -> None:
        c = theme.colors()
        if self._theme_key == c["base"]:
            return
        self._theme_key = c["base"]
        # The app stylesheet styles QFrame#card; the round running now gets the accent edge.
        self.setStyleSheet(
            f"""
            QFrame#card[current="true"] {{ border: 1px solid {c['accent']}; border-left: 3px solid {c['accent']};
                                          background: {c['highlight'] if not theme.is_dark() else c['alt']}; }}
            QScrollArea, QWidget#deepRoundsList {{ background: transparent; }}
            QLabel#deepReport {{ padding: 4px 10px; }}
            """
        )
