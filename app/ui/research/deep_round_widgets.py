"""The deep research view's parts: the time budget as a bar, and one card per round.

Both draw the core's records (app/core/research/deep/progress.py): the bar reads
a `DeepRunLog`'s clock, a card shows one `RoundRecord`. DeepRoundsView
(deep_rounds.py) lays them out.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.core.desk import ENDED_PHASES, DeepRunLog, RoundRecord, plural

from ..common import theme


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
        if r.state == "done" and (r.exhausted or not r.found):
            mark, color = "\u2013", c["warn"]  # done, but it found nothing
        self.mark.setText(f'<span style="color:{color}; font-weight:600">{mark}</span>')
        if r.index == 0:
            self.title.setText("<b>Scoping search</b> on the question")
        else:
            self.title.setText(f"<b>Round {r.index}</b> · gap: {esc(r.topic)}")
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
        elif r.found:
            parts.append(f'<span style="color:{c["ok"]}">+{plural(r.found, "passage")}</span>')
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
        if r.index == 0 or r.query.lower() != r.topic.lower():
            lines.append(f'<span {muted}>Query</span> “{esc(r.query)}”')
        if r.searched:
            if r.found:
                papers = ", ".join(f"{esc(pid)}{f' ×{n}' if n > 1 else ''}" for pid, n in r.paper_counts.most_common())
                lines.append(f'<span style="color:{c["ok"]}">Found {plural(r.found, "new passage")}</span>'
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

