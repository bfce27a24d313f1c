"""The live round-by-round view of deep research (app/ui/research/deep_rounds.py).

Most tests feed a scripted event sequence, shaped like DeepResearch's, into the
view or through the real controller and worker thread (a scripted job stands
in for the core), and check the rows, counts, the time bar, the unlimited and
cancelled states. One test runs a real deep search with the tiny GGUF.
"""

from __future__ import annotations

import threading
import time

import pytest

from dataclasses import replace

from app.core import events
from app.core.records import Evidence, ResearchResult
from app.core.research.deep.progress import ClockReading, RoundRecord
from app.core.settings import Settings
from app.ui.common import theme
from app.ui.research import jobs
from app.ui.common.answer_render import deep_summary_html
from app.ui.research.answer_view import AnswerView
from app.ui.research.deep_rounds import RETRY_EXHAUSTED, DeepRoundsView, clock_text
from app.ui.research.controller import ResearchController
from app.ui.research.pane import ResearchPane
from app.ui.common.worker import WorkerHost

from tests.support.clock import FakeClock
from tests.support.ui import wait_for_handle

QUESTION = "How fast did alpine glaciers retreat, and how was it measured?"
GAP_A = "accuracy of repeat photogrammetry"
GAP_B = "why retreat differs between glaciers"


class Pool:
    """The deep loop's evidence pool: every "evidence" event carries all of it."""

    def __init__(self) -> None:
        self.items: list[Evidence] = []

    def add(self, paper_id: str, n: int, query: str) -> list[Evidence]:
        for i in range(n):
            start = 100 * len(self.items)
            self.items.append(Evidence(len(self.items) + 1, paper_id, 1 + i, "", "", f"passage {start}", 0.7,
                                       stage="deep", query=query, char_start=start, char_end=start + 90))
        return list(self.items)


class Script:
    """Round snapshots shaped as DeepResearch emits them (the core's own rounds are tested in
    tests/core/research/deep/test_runner.py)."""

    def __init__(self, total: float | None = 300.0, reserve: float = 90.0) -> None:
        self.total, self.reserve = total, reserve
        self.rounds: dict[int, RoundRecord] = {}

    def _emit(self, record: RoundRecord, elapsed: float | None) -> events.Round:
        if elapsed is not None:
            record = replace(record, clock=ClockReading(self.total, self.reserve, elapsed))
        self.rounds[record.index] = record
        return events.Round(record.index, record)

    def start(self, index: int, topic: str, elapsed: float | None = None) -> events.Round:
        return self._emit(RoundRecord(index, topic, kind="scope" if index == 0 else "gap", query=topic), elapsed)

    def found(self, index: int, papers: dict[str, int], elapsed: float | None = None) -> events.Round:
        r = self.rounds[index]
        ids = tuple(pid for pid, n in papers.items() for _ in range(n))
        return self._emit(replace(r, searched=True, found=r.found + len(ids), papers=r.papers + ids, state="reviewing"), elapsed)

    def review(self, index: int, summary: str, gaps: list[str], verdict: str = "", elapsed: float | None = None,
               notes: tuple[str, ...] = ()) -> events.Round:
        r = self.rounds[index]
        return self._emit(replace(r, review=summary, gaps_left=tuple(gaps), verdict=verdict, state="done",
                                  notes=r.notes + notes), elapsed)

    def note(self, index: int, note: str) -> events.Round:
        r = self.rounds[index]
        return self._emit(replace(r, notes=r.notes + (note,)), None)


def deep_result(pool: list[Evidence], limits: list[str], stop: str, used: float = 200.0, exhausted=()) -> ResearchResult:
    method = {"mode": "deep", "rounds": 2, "iteration_cap": 7, "queries": [QUESTION, GAP_A],
              "papers_read": sorted({e.paper_id for e in pool}), "evidence_kept": len(pool), "time_budget_s": 300.0,
              "time_used_s": used, "scoring_share": 0.4, "stop_reason": stop, "limits_hit": limits, "exhausted": []}
    answer = "Glaciers retreated 31 m a year.\n\n## Methodology\n\n- Mode: deep; 2 decision rounds (cap 7).\n"
    return ResearchResult(query=QUESTION, answer=answer, evidence=pool, mode="deep", timings={"total_s": used},
                          extra={"methodology": method, "limits_hit": limits, "loop_decisions": [],
                                 "retry_tracking": [{"topic": t, "attempts": 3, "found": 0, "status": RETRY_EXHAUSTED} for t in exhausted]})


@pytest.fixture
def view(qtbot, qapp):
    theme.apply_theme(qapp, "light")
    clock = FakeClock()
    v = DeepRoundsView(clock=clock)
    v.clock = clock
    qtbot.addWidget(v)
    v.resize(640, 520)
    v.show()
    return v


def feed(view: DeepRoundsView, *sequence: events.Event) -> None:
    for event in sequence:
        view.on_event(event)


SYNTHESIS = events.Stage("synthesis", 3, 4, "Stage 3: synthesizing…")
CHECK = events.Stage("check", 4, 4, "Stage 4: checking each claim against its sources…")


# -- the view, event by event -----------------------------------------------------------------
def test_rounds_counts_and_current_round_follow_the_events(view):
    script = Script()
    view.begin(QUESTION, 5.0, cap=7, max_attempts=3)
    assert view.isVisible() and view.log.phase == "scoping"
    assert view.summary.text() == "Scoping the library…"
    feed(view, events.Stage("scope", 1, 4, "Stage 1: searching summaries… found 3 papers"))
    assert view.log.phase == "scoping" and not view.cards

    feed(view, script.start(0, QUESTION, elapsed=10.0))
    assert len(view.cards) == 1 and view.log.current() is view.log.rounds[0]
    assert view.cards[0].property("current") is True
    assert "searching…" in view.cards[0].plain_text()

    feed(view, script.found(0, {"holm-2021": 4, "bernasconi-2019": 2}))
    first = view.log.rounds[0]
    assert (first.found, dict(first.paper_counts)) == (6, {"holm-2021": 4, "bernasconi-2019": 2})
    assert first.state == "reviewing" and "the model is reviewing…" in view.cards[0].plain_text()

    feed(view, script.review(0, "Rates are covered; accuracy is not.", [GAP_A, GAP_B], elapsed=40.0))
    first = view.log.rounds[0]
    assert first.state == "done" and first.gaps_left == (GAP_A, GAP_B)
    assert view.log.current() is None  # between a review and the next search nothing runs
    assert view.log.elapsed() == pytest.approx(40.0)  # the snapshot's clock is the view's reading

    feed(view, script.start(1, GAP_A, elapsed=41.0))
    assert not view.cards[0].body.isHidden()  # while round 1 has found nothing yet, the review that chose it stays open
    feed(view, script.found(1, {"holm-2021": 3}))
    second = view.log.rounds[1]
    assert second.found == 3
    assert view.cards[1].property("current") is True and view.cards[0].property("current") is False

    text = view.cards[0].plain_text()
    assert "Scoping search" in text and "+6 passages" in text
    assert "Found 6 new passages from holm-2021 ×4, bernasconi-2019 ×2" in text
    assert "Review Rates are covered; accuracy is not." in text
    assert f"Gaps left {GAP_A} · {GAP_B}" in text
    assert f"Query “{QUESTION}”" in text
    assert f"Round 1 · gap: {GAP_A}" in view.cards[1].plain_text()
    assert view.summary.text() == "Round 1 · 9 passages from 2 papers"

    # The newest round is unfolded; earlier ones fold to one line and open on a click.
    assert not view.cards[1].body.isHidden() and view.cards[0].body.isHidden()
    view.toggle_card(0)
    assert not view.cards[0].body.isHidden() and view.cards[0].expanded


def test_notes_malformed_decision_and_report_phase(view):
    script = Script()
    view.begin(QUESTION, 5.0, cap=7)
    feed(view, script.start(0, QUESTION, elapsed=5.0), script.found(0, {"holm-2021": 2}),
         script.review(0, "Half of it.", [GAP_A], elapsed=30.0), script.start(1, GAP_A, elapsed=30.5))
    feed(view, events.Notice(f"search for {GAP_A!r} failed: the embedder timed out"))  # notices are the status bar's
    assert view.log.rounds[1].notes == ()
    feed(view, script.note(1, f"Search for {GAP_A!r} failed: the embedder timed out"),
         script.review(1, "", [], elapsed=60.0, notes=("The model's decision was malformed twice; treated as no further gaps.",)))
    failed = view.log.rounds[1]
    assert not failed.searched and failed.found == 0
    assert failed.notes == (f"Search for {GAP_A!r} failed: the embedder timed out",
                            "The model's decision was malformed twice; treated as no further gaps.")
    text = view.cards[1].plain_text()
    assert "nothing new ⚠" in text and "failed: the embedder timed out" in text and "malformed" in text

    feed(view, SYNTHESIS)
    assert view.log.phase == "synthesis" and view.report.isVisible()
    assert "Writing the report…" in view.report.text()
    assert "left to write the report" in view.caption.text()
    feed(view, CHECK)
    assert "Checking the citations…" in view.report.text()

    view.finish(deep_result(Pool().add("holm-2021", 2, QUESTION), ["time"], "limit reached: time", used=212.0))
    assert view.log.phase == "finished" and not view.timer.isActive()
    assert "Report written · search ended: limit reached — time" in view.report.text()
    assert "Limits hit: time limit" in view.report.text()
    assert view.caption.text().endswith("Took 3:32 of 5:00</span>")
    assert view.summary.text() == "Finished · 2 searches · 2 passages from 1 paper"


def test_an_exhausted_gap_is_marked_on_its_round(view):
    script = Script(total=600.0)
    view.begin(QUESTION, 10.0, cap=7)
    feed(view, script.start(0, QUESTION, elapsed=1.0), script.found(0, {"holm-2021": 2}),
         script.review(0, "Still missing.", [GAP_B]), script.start(1, GAP_B), script.found(1, {}),
         script.note(1, f"{RETRY_EXHAUSTED}: nothing new after 3 attempts; this gap is dropped."))
    rounds = view.log.rounds
    assert [r.exhausted for r in rounds] == [False, True]
    assert RETRY_EXHAUSTED in view.cards[1].plain_text() and RETRY_EXHAUSTED not in view.cards[0].plain_text()


# -- the time bar ------------------------------------------------------------------------------
def test_time_bar_separates_search_time_from_the_report_reserve(view):
    view.begin(QUESTION, 5.0)
    f = view.bar.fractions()
    assert f == {"used": 0.0, "search_end": pytest.approx(210 / 300)}
    assert "3:30 left to search" in view.caption.text() and "+ 1:30 kept for the report" in view.caption.text()

    feed(view, Script().start(0, QUESTION, elapsed=60.0))
    view.clock.now += 30  # no new reading: the view counts down from the last one
    view._tick()
    assert view.log.elapsed() == pytest.approx(90.0)
    assert view.bar.fractions()["used"] == pytest.approx(0.3)
    assert "2:00 left to search" in view.caption.text()

    view.clock.now += 150  # past the research deadline, still searching (a last model call)
    view._tick()
    assert view.log.research_left() == 0.0 and view.log.report_left() == pytest.approx(60.0)
    assert "Search time is up" in view.caption.text() and "1:00 left for the report" in view.caption.text()

    feed(view, SYNTHESIS)
    view.clock.now += 20
    view._tick()
    assert "0:40 left to write the report" in view.caption.text()


def test_the_planned_reserve_moves_the_search_deadline(view):
    view.begin(QUESTION, 5.0)
    feed(view, Script(reserve=40.0).start(0, QUESTION, elapsed=10.0))  # the core planned a 40 s answer
    assert view.bar.fractions()["search_end"] == pytest.approx(260 / 300)
    assert "4:10 left to search" in view.caption.text()


def test_countdown_moves_with_the_timer_between_readings(view, qtbot):
    view.begin(QUESTION, 5.0)
    feed(view, Script().start(0, QUESTION, elapsed=0.0))
    assert view.timer.isActive()
    view.clock.now += 30
    qtbot.waitUntil(lambda: "3:00 left to search" in view.caption.text(), timeout=2000)
    painted = view.bar.grab().toImage()
    x_used, x_search = int(painted.width() * 0.05), int(painted.width() * 0.4)
    assert painted.pixelColor(x_used, 5) != painted.pixelColor(x_search, 5)  # spent vs still to search


def test_budget_waits_while_the_run_is_queued(view):
    view.begin(QUESTION, 5.0)
    view.clock.now += 40  # waiting behind an import: the core's clock has not started
    view._tick()
    assert view.log.elapsed() == 0.0 and "3:30 left to search" in view.caption.text()
    view.start_clock()
    view.clock.now += 10
    view._tick()
    assert view.log.elapsed() == pytest.approx(10.0) and "3:20 left to search" in view.caption.text()


def test_unlimited_budget_has_no_bar_and_counts_up(view):
    view.begin(QUESTION, None, cap=7)
    assert view.log.unlimited and view.bar.isHidden()
    assert "No time limit" in view.caption.text() and "after 7 rounds" in view.caption.text()
    feed(view, Script(total=None).start(0, QUESTION, elapsed=12.0))
    view.clock.now += 50
    view._tick()
    assert "1:02 elapsed" in view.caption.text()
    assert view.log.research_left() == float("inf")
    feed(view, SYNTHESIS)
    assert "Writing the report" in view.caption.text() and "no time limit" in view.caption.text()


def test_view_folds_to_its_header_and_bar(view):
    view.begin(QUESTION, 5.0)
    tall = view.height()
    view.set_expanded(False)
    assert not view.scroll.isVisible() and view.bar.isVisible()
    assert view.maximumHeight() < tall
    view.toggle.click()
    assert view.expanded and view.scroll.isVisible()


def test_theme_switch_recolours_the_cards(view, qapp):
    view.begin(QUESTION, 5.0)
    feed(view, Script().start(0, QUESTION))
    assert theme.LIGHT["accent"] in view.cards[0].status.text()
    theme.apply_theme(qapp, "dark")
    try:
        qapp.processEvents()
        assert theme.DARK["accent"] in view.cards[0].status.text()
        assert theme.DARK["accent"] in view.styleSheet()
    finally:
        theme.apply_theme(qapp, "light")


def test_a_failed_run_keeps_its_rounds_and_says_why(view):
    view.begin(QUESTION, 5.0)
    feed(view, Script().start(0, QUESTION))
    view.fail("The chat model could not be loaded.")
    assert view.log.phase == "failed" and view.log.rounds[0].state == "failed"
    assert view.summary.text().startswith("Stopped · 1 search")
    assert "The run stopped: The chat model could not be loaded." in view.report.text()
    assert "Stopped after 0:00 of 5:00" in view.caption.text() and not view.timer.isActive()


def test_clock_text():
    assert [clock_text(s) for s in (0, 59.6, 90, 3725, -5)] == ["0:00", "1:00", "1:30", "1:02:05", "0:00"]


# -- the answer's methodology line --------------------------------------------------------------
def test_answer_line_shows_limits_and_methodology_renders(qtbot, qapp):
    pool = Pool().add("holm-2021", 3, QUESTION)
    result = deep_result(pool, ["time", "iteration cap"], "limit reached: time")
    line = deep_summary_html(result)
    assert "2 searches" in line and "3 passages from 1 paper" in line
    assert '<span class="warn"><b>Stopped: time limit, round cap</b></span>' in line
    assert deep_summary_html(deep_result(pool, [], "no gaps left")).count("Stopped") == 0
    assert deep_summary_html(ResearchResult(query="q", answer="a")) == ""
    answer = AnswerView()
    qtbot.addWidget(answer)
    answer.show_result(result)
    text = answer.browser.toPlainText()
    assert "Stopped: time limit, round cap" in text and "Methodology" in text


# -- through the controller and the worker thread -------------------------------------------
@pytest.fixture
def desk_less(qtbot, qapp):
    """The research pane and answer view with the real controller and worker thread."""
    theme.apply_theme(qapp, "light")
    host = WorkerHost(Settings(), owns_desk=False)
    pane, answer = ResearchPane(), AnswerView()
    for w in (pane, answer):
        qtbot.addWidget(w)
        w.resize(700, 600)
        w.show()
    controller = ResearchController(host, pane, answer)
    yield controller
    assert host.shutdown()


def scripted_deep(gate: threading.Event | None = None):
    """A job that reports like DeepResearch, through the job's task; with a gate, it waits there for a cancel."""
    from app.core.errors import Cancelled
    from app.core.research.deep.runner import DeepCancelled

    def job(ctx, question, mode="standard", time_minutes=None, scope=None):
        pool = Pool()
        script = Script(None if time_minutes is None else time_minutes * 60)
        emit = ctx.task.emit
        emit(events.Stage("scope", 1, 4, "Stage 1: searching summaries…"))
        emit(script.start(0, question, elapsed=1.0))
        emit(events.EvidenceFound(pool.add("holm-2021", 3, question)))
        emit(script.found(0, {"holm-2021": 3}))
        emit(script.review(0, "Rates covered.", [GAP_A], elapsed=20.0))
        emit(script.start(1, GAP_A, elapsed=20.5))
        if gate is not None:
            gate.set()
            while not ctx.task.cancelled:
                time.sleep(0.05)
            raise DeepCancelled(ResearchResult(query=question, evidence=pool.items, mode="deep")) from Cancelled()
        emit(events.EvidenceFound(pool.add("lindqvist-2020", 2, GAP_A)))
        emit(script.found(1, {"lindqvist-2020": 2}))
        emit(script.review(1, "Enough for an answer.", [GAP_B], elapsed=40.0,
                           verdict="The model judged the evidence sufficient: the search ends here."))
        emit(SYNTHESIS)
        emit(events.Token("Glaciers retreated 31 m a year."))
        return deep_result(pool.items, ["time"], "no gaps left")

    return job


def test_controller_shows_a_deep_run_live_then_its_methodology(desk_less, qtbot, monkeypatch):
    controller = desk_less
    pane, rounds = controller.pane, controller.pane.rounds
    monkeypatch.setattr(jobs, "research", scripted_deep())
    handle = controller.run(QUESTION, "deep", 2.0)
    assert rounds.isVisible() and not pane.stages.isVisible()
    assert rounds.log.cap == 7 and rounds.log.reading.total_s == 120.0
    kind, result = wait_for_handle(qtbot, handle, 20_000)
    assert kind == "finished", result
    assert [r.index for r in rounds.log.rounds] == [0, 1]
    assert [r.found for r in rounds.log.rounds] == [3, 2]
    assert rounds.log.rounds[1].verdict.startswith("The model judged the evidence sufficient")
    assert rounds.log.phase == "finished" and "Report written" in rounds.report.text()
    assert rounds.isVisible()  # kept after the run, to read back
    text = controller.answer.browser.toPlainText()
    assert "Stopped: time limit" in text and "Methodology" in text

    # A standard run puts the stage lines back.
    monkeypatch.setattr(jobs, "research", lambda ctx, **kw: ResearchResult(query=QUESTION, answer="Plain."))
    wait_for_handle(qtbot, controller.run(QUESTION, "standard", None), 20_000)
    assert not rounds.isVisible() and pane.stages.isVisible()


def test_cancelled_deep_run_marks_the_round_and_offers_the_report(desk_less, qtbot, monkeypatch):
    controller = desk_less
    rounds, banner = controller.pane.rounds, controller.pane.banner
    gate = threading.Event()
    monkeypatch.setattr(jobs, "research", scripted_deep(gate))
    handle = controller.run(QUESTION, "deep", None)
    qtbot.waitUntil(lambda: gate.is_set() and len(rounds.cards) == 2, timeout=20_000)
    assert rounds.log.unlimited and rounds.log.current() is rounds.log.rounds[1]
    controller.cancel()
    assert rounds.summary.text().startswith("Cancelling…")
    kind, _ = wait_for_handle(qtbot, handle, 20_000)
    assert kind == "cancelled"
    assert rounds.log.phase == "cancelled" and rounds.log.rounds[1].state == "cancelled"
    assert rounds.log.current() is None and not rounds.timer.isActive()
    assert rounds.summary.text() == "Cancelled · 2 searches · 3 passages from 1 paper"
    assert "Cancelled with 3 passages gathered" in rounds.report.text()
    assert "cancelled" in rounds.cards[1].plain_text()
    assert banner.isVisible() and "synthesize-partial" in banner.actions

    def write_report(ctx, cancelled_exc):
        ctx.task.emit(SYNTHESIS)
        return deep_result(cancelled_exc.partial.evidence, ["cancelled by the user"], "")

    monkeypatch.setattr(jobs, "synthesize_partial", write_report)
    report = controller.synthesize_partial()
    assert rounds.log.phase == "synthesis" and "from the passages gathered" in rounds.report.text()
    assert len(rounds.cards) == 2  # the rounds that gathered the evidence stay
    kind, _ = wait_for_handle(qtbot, report, 20_000)
    assert kind == "finished" and rounds.log.phase == "finished"
    assert "Limits hit: cancelled by the user" in rounds.report.text()
    assert "(cancelled) · report written in" in rounds.caption.text()


# -- one real deep run through the window -------------------------------------------------------
@pytest.mark.slow
def test_real_model_deep_run_fills_the_rounds_view(qtbot, make_window, seed_library):
    """The tiny real GGUF, one minute: rounds appear live and the answer has its Methodology."""
    window = make_window(seed=seed_library)
    seen: list[int] = []
    handle = window.research.run(QUESTION, "deep", 1.0)
    handle.event.connect(lambda e: seen.append(len(window.research_pane.rounds.cards)) if isinstance(e, events.EvidenceFound) else None)
    kind, result = wait_for_handle(qtbot, handle, 300_000)
    assert kind == "finished", result
    rounds = window.research_pane.rounds
    assert seen and seen[0] >= 1  # a card was there while the run was still going
    assert rounds.isVisible() and rounds.log.rounds and rounds.log.rounds[0].index == 0
    assert rounds.log.phase == "finished" and rounds.log.reading.total_s == 60.0
    assert "Methodology" in result.answer
    assert "Methodology" in window.answer_view.browser.toPlainText()

