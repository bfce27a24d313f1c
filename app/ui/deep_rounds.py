"""The live view of a deep research run: time left as a bar, then one card per round.

The core's deep loop (app/core/research/deep.py) reports through the funnel's
events: "budget" (the clock, just before each "round" and "decision"),
"round" (a search starts), "evidence" (the whole pool so far), "decision"
(the model's review: summary, gaps, …), "stage" (scoping, then the report),
and "Deep: …" progress notes. `DeepRunLog` turns that stream into rounds
(plain Python, so the bookkeeping is tested without widgets); `DeepRoundsView`
draws it and counts the clock down between readings with a QTimer, so the bar
moves smoothly although the core reports the time only once a round.

How a round reads: round N searched a gap, found some new passages, and then
the model reviewed the evidence (the decision of iteration N+1, which picks
the next gap). So each decision is shown under the round it reviews.
"""

from __future__ import annotations

import html
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.wording import plural

from . import theme
from .answer_render import limit_words

RETRY_EXHAUSTED = "RETRY_EXHAUSTED"  # the core's mark for a gap given up after its attempts
DEFAULT_RESERVE_S = 90.0  # the core's synthesis reserve with no budget; replaced by its first reading
TICK_MS = 200  # bar repaint while a run is live: a 5-minute budget moves ~1 px per tick on a wide pane

# Phases of a run, in order. "idle": nothing shown yet.
LIVE_PHASES = ("scoping", "research", "synthesis")
ENDED_PHASES = ("finished", "cancelled", "failed")


def clock_text(seconds: float) -> str:
    """m:ss (h:mm:ss past an hour), never negative."""
    s = max(0, int(round(seconds)))
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"




# -- the run, as data -------------------------------------------------------------------
@dataclass
class RoundRecord:
    """One search of the loop and the model's review after it."""

    iteration: int  # 0: the scoping search on the question itself
    topic: str  # the gap searched (round 0: the question)
    query: str = ""  # what was searched, as the evidence reports it
    new_passages: int = 0
    papers: Counter = field(default_factory=Counter)  # paper id -> new passages from it
    searched: bool = False  # its evidence has arrived
    review: str = ""  # the model's summary after this round
    gaps_left: list[str] | None = None  # None: not reviewed (yet)
    verdict: str = ""  # why the search ends after this round, when it does
    notes: list[str] = field(default_factory=list)  # failed search, malformed decision, RETRY_EXHAUSTED
    state: str = "searching"  # searching | reviewing | done | cancelled | failed
    closed: bool = False  # its outcome (exhausted or not) has been judged

    @property
    def exhausted(self) -> bool:
        return any(n.startswith(RETRY_EXHAUSTED) for n in self.notes)


@dataclass
class ClockReading:
    """The core's budget at one moment, and when (UI clock) it arrived."""

    total_s: float | None  # None: unlimited
    reserve_s: float
    elapsed_s: float
    received_at: float


class DeepRunLog:
    """The state of the deep run shown: phase, clock, rounds. Qt-free."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        self.phase = "idle"
        self.question = ""
        self.cap = 0
        self.max_attempts = 3
        self.rounds: list[RoundRecord] = []
        self.reading: ClockReading | None = None
        self.frozen_elapsed: float | None = None  # set when the run ends: the bar stops there
        self.waiting = False  # queued behind another task: the budget has not started
        self.report_line = ""  # the synthesis phase line
        self.ended_text = ""  # finished / cancelled / failed, in words
        self.stop_reason = ""
        self.limits_hit: list[str] = []
        self.partial_report = False  # writing the report from a cancelled run's evidence
        self.cancelling = False
        self.gathered: int | None = None
        self.searched_for: float | None = None  # a cancelled run's search time, kept for its report
        self._seen: set[tuple] = set()
        self._attempts: Counter = Counter()

    # -- starting -------------------------------------------------------------------------
    def begin(self, question: str, minutes: float | None, cap: int = 0, max_attempts: int = 3) -> None:
        """A deep run was asked for: start the clock at once, before the core's first reading."""
        self.reset()
        self.phase = "scoping"
        self.question = question
        self.cap, self.max_attempts = cap, max_attempts
        total = None if minutes is None else float(minutes) * 60.0
        self.reading = ClockReading(total, _core_reserve(total), 0.0, self.clock())
        self.waiting = True

    def start_clock(self) -> None:
        """The job has started: the budget runs from now (until the core's first reading)."""
        if self.waiting and self.reading is not None:
            self.reading.received_at = self.clock()
        self.waiting = False

    def begin_report(self) -> None:
        """After a cancel: the report is written from what was gathered, with no time limit."""
        self.phase = "synthesis"
        self.partial_report = True
        self.cancelling = False
        self.ended_text = ""
        self.frozen_elapsed = None
        self.reading = ClockReading(None, 0.0, 0.0, self.clock())
        self.report_line = "Writing the report from the passages gathered…"

    # -- the core's events ----------------------------------------------------------------------
    def on_event(self, kind: str, payload: Any) -> bool:
        """Take one event; True when something shown changed."""
        if self.phase not in LIVE_PHASES:
            return False
        if kind == "budget" and isinstance(payload, dict):
            self._on_budget(payload)
        elif kind == "round" and isinstance(payload, dict):
            self._on_round(payload)
        elif kind == "evidence" and isinstance(payload, (list, tuple)):
            self._on_evidence(payload)
        elif kind == "decision":
            self._on_decision(payload)
        elif kind == "stage" and isinstance(payload, (list, tuple)) and len(payload) == 2:
            self._on_stage(int(payload[0]), str(payload[1]))
        else:
            return False
        return True

    def on_progress(self, message: str) -> bool:
        """"Deep: …" notes (a failed search) go under the round they happened in."""
        if self.phase not in LIVE_PHASES or not message.startswith("Deep: ") or not self.rounds:
            return False
        note = message[len("Deep: "):].strip()
        if "malformed" in note:
            return False  # the decision itself says so (malformed: true), shown with it
        note = note[:1].upper() + note[1:]
        if note not in self.rounds[-1].notes:
            self.rounds[-1].notes.append(note)
        return True

    def _on_budget(self, p: dict) -> None:
        try:
            total = None if p.get("total_s") is None else float(p["total_s"])
            reserve = float(p.get("reserve_s", _core_reserve(total)))
            elapsed = float(p.get("elapsed_s", 0.0))
        except (TypeError, ValueError):
            return
        self.reading = ClockReading(total, reserve, elapsed, self.clock())
        self.waiting = False

    def _on_round(self, p: dict) -> None:
        self._close_round()
        self.phase = "research"
        iteration = int(p.get("iteration", len(self.rounds)))
        topic = " ".join(str(p.get("topic", "")).split())
        if iteration > 0:
            self._attempts[topic.lower()] += 1
        self.rounds.append(RoundRecord(iteration, topic, query=topic))

    def _on_evidence(self, pool: list | tuple) -> None:
        fresh = []
        for e in pool:
            # The core's own identity of a passage: found once, never again by a later search.
            key = (getattr(e, "paper_id", ""), getattr(e, "page", 0), getattr(e, "char_start", 0))
            if key not in self._seen:
                self._seen.add(key)
                fresh.append(e)
        current = self.rounds[-1] if self.rounds and self.phase == "research" else None
        if current is None or current.closed:
            return  # evidence outside a round (a pool re-sent later): counted in the totals only
        current.searched = True
        current.state = "reviewing"
        current.new_passages += len(fresh)
        current.papers.update(getattr(e, "paper_id", "?") for e in fresh)
        queries = [q for q in (getattr(e, "query", "") for e in fresh) if q]
        if queries:
            current.query = queries[0]

    def _on_decision(self, d: Any) -> None:
        if not self.rounds:
            return
        current = self.rounds[-1]
        self._close_round()
        if not isinstance(d, dict):
            current.notes.append("The model's decision could not be read; the search ends here.")
            current.gaps_left = []
            return
        summary = d.get("summary")
        current.review = " ".join(summary.split()) if isinstance(summary, str) else ""
        gaps = d.get("gaps") if isinstance(d.get("gaps"), list) else []
        current.gaps_left = [" ".join(g.split()) for g in gaps if isinstance(g, str) and g.strip()]
        if d.get("malformed"):
            current.notes.append("The model's decision was malformed twice; treated as no further gaps.")
        elif not current.gaps_left:
            current.verdict = "No gaps left: the search ends here."
        elif d.get("shouldContinue") is False:
            current.verdict = "The model judged the evidence sufficient: the search ends here."

    def _on_stage(self, number: int, message: str) -> None:
        if number <= 2:
            return  # scoping: the header says so until round 0 starts
        self._close_round()
        self.phase = "synthesis"
        what = "Checking the citations…" if number >= 4 else "Writing the report…"
        if self.partial_report and number < 4:
            what = "Writing the report from the passages gathered…"
        self.report_line = what

    def _close_round(self) -> None:
        """The current round is over: judge it (the core's retry rule) and mark it done."""
        if not self.rounds or self.rounds[-1].closed:
            return
        r = self.rounds[-1]
        r.closed = True
        if r.state in ("searching", "reviewing"):
            r.state = "done"
        # The core gives a gap up after `max_attempts` searches found nothing new.
        if r.iteration > 0 and r.new_passages == 0 and self._attempts[r.topic.lower()] >= self.max_attempts and not r.exhausted:
            r.notes.append(f"{RETRY_EXHAUSTED}: nothing new after {plural(self.max_attempts, 'attempt')}; this gap is dropped.")

    # -- the end ---------------------------------------------------------------------------------
    def finish(self, result: Any) -> None:
        self._close_round()
        extra = getattr(result, "extra", {}) or {}
        method = extra.get("methodology") or {}
        self.stop_reason = str(method.get("stop_reason") or "")
        self.limits_hit = [str(x) for x in (extra.get("limits_hit") or method.get("limits_hit") or [])]
        self._reconcile_exhausted(extra.get("retry_tracking") or [])
        used = method.get("time_used_s") or (getattr(result, "timings", {}) or {}).get("total_s")
        self.frozen_elapsed = float(used) if used is not None and not self.partial_report else self.elapsed()
        self.phase = "finished"
        self.cancelling = False
        self.report_line = "Report written" + (f" · search ended: {_reason_text(self.stop_reason)}" if self.stop_reason else "")
        self.ended_text = "Finished"

    def cancel(self, gathered: int | None = None) -> None:
        writing = bool(self.report_line)
        self._end("cancelled")
        self.searched_for = self.frozen_elapsed
        self.ended_text = "Cancelled"
        self.gathered = gathered  # the core's count of what the report can be written from
        if writing:
            self.report_line = "Cancelled while writing the report."
        elif gathered:
            self.report_line = f"Cancelled with {plural(gathered, 'passage')} gathered: “Synthesize from it” writes the report from them."
        else:
            self.report_line = "Cancelled before any passage was gathered."

    def fail(self, message: str) -> None:
        writing = bool(self.report_line)
        self._end("failed")
        self.ended_text = "Stopped"
        # The banner above says what to do; this line keeps the reason with the rounds.
        what = "The report could not be written" if writing else "The run stopped"
        self.report_line = f"{what}: {message}" if message else f"{what}."

    def _end(self, phase: str) -> None:
        if self.rounds and not self.rounds[-1].closed and self.phase == "research":
            self.rounds[-1].state = phase  # the round that was running when it stopped
            self.rounds[-1].closed = True
        self.frozen_elapsed = self.elapsed()
        self.phase = phase
        self.cancelling = False

    def _reconcile_exhausted(self, tracking: list) -> None:
        """The core's own retry record wins over the live guess."""
        for sub in tracking:
            if not isinstance(sub, dict) or sub.get("status") != RETRY_EXHAUSTED:
                continue
            topic = str(sub.get("topic", "")).lower()
            mine = [r for r in self.rounds if r.iteration > 0 and r.topic.lower() == topic]
            if mine and not any(r.exhausted for r in mine):
                mine[-1].notes.append(f"{RETRY_EXHAUSTED}: nothing new after {plural(int(sub.get('attempts', 0)), 'attempt')}; this gap is dropped.")

    # -- reading the clock ----------------------------------------------------------------------
    @property
    def unlimited(self) -> bool:
        return self.reading is None or self.reading.total_s is None

    def elapsed(self) -> float:
        if self.frozen_elapsed is not None:
            return self.frozen_elapsed
        if self.reading is None or self.waiting:
            return 0.0
        return self.reading.elapsed_s + max(0.0, self.clock() - self.reading.received_at)

    def research_left(self) -> float:
        """Seconds the loop may still search (0 once the report is being written)."""
        if self.unlimited:
            return float("inf")
        if self.phase not in ("scoping", "research"):
            return 0.0
        r = self.reading
        return max(0.0, r.total_s - r.reserve_s - self.elapsed())

    def report_left(self) -> float:
        """Seconds left for the report: its reserve while searching, all that is left after."""
        if self.unlimited:
            return float("inf")
        r = self.reading
        left = max(0.0, r.total_s - self.elapsed())
        return left if self.phase == "synthesis" else min(r.reserve_s, left)

    # -- totals -----------------------------------------------------------------------------------
    def passages(self) -> int:
        return sum(r.new_passages for r in self.rounds)

    def papers(self) -> set[str]:
        return {pid for r in self.rounds for pid in r.papers}

    def current(self) -> RoundRecord | None:
        """The round running now (marked in the view), if any."""
        if self.phase == "research" and self.rounds and not self.rounds[-1].closed:
            return self.rounds[-1]
        return None


def _core_reserve(total_s: float | None) -> float:
    """The synthesis reserve the core will use (until its first reading says so itself)."""
    try:
        from app.core.research.deep import Budget

        return Budget(total_s).reserve_s
    except ImportError:  # a build without deep research never shows this view
        return DEFAULT_RESERVE_S


def _reason_text(reason: str) -> str:
    return reason.replace("limit reached: ", "limit reached — ")


# -- widgets ----------------------------------------------------------------------------------------
def bar_colors() -> dict[str, QColor]:
    """The bar's colours, shared with the caption's legend so the two always match.

    search: time the loop may still search; reserve: time kept for the report
    (paler while it is only kept, full once the report is being written);
    used: time already spent; left: time an ended run did not need (empty track).
    """
    c = theme.colors()

    def blend(top: str, under: str, share: float) -> QColor:
        a, b = QColor(top), QColor(under)
        return QColor(*(round(share * x + (1 - share) * y) for x, y in zip(a.getRgb()[:3], b.getRgb()[:3])))

    return {
        "search": QColor(c["accent"]),
        "reserve": blend(c["warn"], c["base"], 0.45),
        "writing": QColor(c["warn"]),
        "used": blend(c["pending"], c["base"], 0.5),
        "left": QColor(c["base"]),
    }


class BudgetBar(QWidget):
    """The time budget as one bar: search time (accent), then the report's reserve (amber).

    The used part, from the left, is drawn as empty track; the divider marks where
    the search must stop so that the report keeps its reserve.
    """

    def __init__(self, log: DeepRunLog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.log = log
        self.setFixedHeight(10)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def fractions(self) -> dict[str, float]:
        """Where the bar's edges fall, as fractions of its width (tests read this too)."""
        log = self.log
        if log.unlimited:
            return {"used": 0.0, "search_end": 0.0}
        r = log.reading
        total = max(1e-6, r.total_s)
        return {"used": min(1.0, log.elapsed() / total), "search_end": max(0.0, (r.total_s - r.reserve_s) / total)}

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        c, colors = theme.colors(), bar_colors()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        track = QPainterPath()
        track.addRoundedRect(rect, 4, 4)
        p.setClipPath(track)
        f = self.fractions()
        used = rect.left() + rect.width() * f["used"]
        end = rect.left() + rect.width() * f["search_end"]

        def span(x0: float, x1: float, color: QColor) -> None:
            if x1 > x0:
                p.fillRect(QRectF(x0, rect.top(), x1 - x0, rect.height()), color)

        span(rect.left(), used, colors["used"])
        phase = self.log.phase
        if phase in ENDED_PHASES:
            span(used, rect.right(), colors["left"])
        elif phase == "synthesis":
            span(used, rect.right(), colors["writing"])  # all that is left now goes to the report
        elif phase in ("scoping", "research"):
            span(used, end, colors["search"])
            span(max(used, end), rect.right(), colors["reserve"])
            p.fillRect(QRectF(end - 1, rect.top(), 2, rect.height()), QColor(c["base"]))  # where searching must stop
        p.setClipping(False)
        p.setPen(QColor(c["border"]))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(track)
        p.end()


class RoundCard(QFrame):
    """One round: what it searched, what it found, what the model made of it.

    Folded, a card is its title and outcome on one line; the round running now
    (and the last one) is unfolded. A click on a card folds or unfolds it.
    """

    clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.expanded = True
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 5, 10, 6)
        layout.setSpacing(2)
        head = QHBoxLayout()
        head.setSpacing(6)
        self.mark = QLabel()
        self.mark.setFixedWidth(14)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.RichText)
        head.addWidget(self.mark, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.title, 1)
        head.addWidget(self.status, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(head)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setWordWrap(True)
        self.body.setContentsMargins(20, 0, 0, 0)
        layout.addWidget(self.body)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mousePressEvent(event)

    def show_round(self, r: RoundRecord, current: bool, expanded: bool) -> None:
        c = theme.colors()
        esc = html.escape
        self.expanded = expanded
        if self.property("current") != current:
            self.setProperty("current", current)
            self.style().unpolish(self)
            self.style().polish(self)
        mark, color = {
            "searching": ("\u25d4", c["accent"]),
            "reviewing": ("\u25d4", c["accent"]),
            "done": ("\u2713", c["ok"]),
            "cancelled": ("\u2717", c["bad"]),
            "failed": ("\u2717", c["bad"]),
        }[r.state]
        if r.state == "done" and (r.exhausted or not r.new_passages):
            mark, color = "\u2013", c["warn"]  # done, but it found nothing
        self.mark.setText(f'<span style="color:{color}; font-weight:600">{mark}</span>')
        if r.iteration == 0:
            self.title.setText("<b>Scoping search</b> on the question")
        else:
            self.title.setText(f"<b>Round {r.iteration}</b> · gap: {esc(r.topic)}")
        self.status.setText(self._status_html(r, current, c))
        self.body.setText("<br/>".join(self._detail_lines(r, c)))
        self.body.setVisible(expanded and bool(self.body.text()))
        self.setToolTip("Click to hide the details" if expanded else "Click to show the details")

    @staticmethod
    def _status_html(r: RoundRecord, current: bool, c: dict[str, str]) -> str:
        if current:
            what = "searching…" if r.state == "searching" else "the model is reviewing…"
            return f'<span style="color:{c["accent"]}">{what}</span>'
        parts = []
        if r.state in ("cancelled", "failed"):
            parts.append(f'<span style="color:{c["bad"]}">{"cancelled" if r.state == "cancelled" else "stopped"}</span>')
        elif r.new_passages:
            parts.append(f'<span style="color:{c["ok"]}">+{plural(r.new_passages, "passage")}</span>')
        else:
            parts.append(f'<span style="color:{c["warn"]}">nothing new</span>')
        if r.notes:
            parts.append(f'<span style="color:{c["warn"]}">\u26a0</span>')
        return " ".join(parts)

    @staticmethod
    def _detail_lines(r: RoundRecord, c: dict[str, str]) -> list[str]:
        esc = html.escape
        muted = f'style="color:{c["muted"]}"'
        lines = []
        # The core searches the gap's own words; a query is shown when it says more than the title.
        if r.iteration == 0 or r.query.lower() != r.topic.lower():
            lines.append(f'<span {muted}>Query</span> “{esc(r.query)}”')
        if r.searched:
            if r.new_passages:
                papers = ", ".join(f"{esc(pid)}{f' ×{n}' if n > 1 else ''}" for pid, n in r.papers.most_common())
                lines.append(f'<span style="color:{c["ok"]}">Found {plural(r.new_passages, "new passage")}</span>'
                             f' <span {muted}>from</span> {papers}')
            else:
                lines.append(f'<span style="color:{c["warn"]}">No new passages</span>')
        if r.review:
            lines.append(f'<span {muted}>Review</span> {esc(r.review)}')
        if r.gaps_left:
            lines.append(f'<span {muted}>Gaps left</span> ' + " · ".join(esc(g) for g in r.gaps_left))
        if r.verdict:
            lines.append(f'<span {muted}><i>{esc(r.verdict)}</i></span>')
        lines += [f'<span style="color:{c["warn"]}">\u26a0 {esc(note)}</span>' for note in r.notes]
        return lines

    def plain_text(self) -> str:
        """Title, outcome and details as plain text, folded or not (tests, accessibility)."""
        from PySide6.QtGui import QTextDocument

        doc = QTextDocument()
        doc.setHtml(f"{self.title.text()} — {self.status.text()}<br/>{self.body.text()}")
        return doc.toPlainText().strip()


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
        self.log.begin(question, minutes, cap, max_attempts)
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

    def on_event(self, kind: str, payload: Any) -> None:
        if self.log.on_event(kind, payload) and kind != "budget":
            self.refresh()
        elif kind == "budget":
            self._tick()

    def on_progress(self, message: str) -> None:
        if self.log.on_progress(message):
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
            where = "scoping search" if now is None or now.iteration == 0 else f"round {now.iteration}"
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
