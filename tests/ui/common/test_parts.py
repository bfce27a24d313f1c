"""UI parts without the whole window: rendering, link parsing, highlight finding,
progress parsing, the worker's queue rules, the question box and the library table."""

from __future__ import annotations

import threading
import time

import pymupdf
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent

from app.core.errors import NoRelevantPapers
from app.core.records import Citation, Claim, Evidence, Reference, ResearchResult, Sentence
from app.core.settings import Settings
from app.ui.common.answer_render import (
    CiteLink,
    citation_summary,
    cite_href,
    markdown_to_html,
    parse_cite,
    render_answer,
    render_evidence_preview,
    render_streaming,
)
from app.ui.common.banners import error_action
from app.ui.library.import_panel import ImportPanel
from app.ui.library.model import PaperFilterProxy, PaperTableModel
from app.ui.reader.highlight import locate_passage, passage_words
from app.ui.research.question_box import QuestionBox
from app.ui.common.worker import WorkerHost

from tests.support.papers import paper
from tests.support.ui import wait_for_handle


def _result() -> ResearchResult:
    answer = "Glaciers retreated fast [2301.00001v2, page 3]. Bees use skylight [bees-2020, page 9]."
    c1 = Citation("[2301.00001v2, page 3]", "2301.00001v2", 3, "verified", 0, 0, evidence_number=2, reference_number=1)
    c1.start = answer.index("[2301")
    c1.end = c1.start + len(c1.raw)
    c2 = Citation("[bees-2020, page 9]", "bees-2020", 9, "page-mismatch", 0, 0, reference_number=2, note="evidence is on page 2")
    c2.start = answer.index("[bees")
    c2.end = c2.start + len(c2.raw)
    refs = [
        Reference(1, "2301.00001v2", "Glacier <Retreat>", ["I. Holm"], "2023"),
        Reference(2, "bees-2020", "Bees", [], ""),
    ]
    return ResearchResult(query="q", answer=answer, citations=[c1, c2], references=refs)


def test_answer_html_links_citations_with_status_marks():
    html = render_answer(_result())
    # Each link names its citation (index into result.citations), whose quote the viewer highlights.
    assert 'href="cite:2301.00001v2:3:2:0"' in html
    assert 'href="cite:bees-2020:9:0:1"' in html
    assert "\u2713" in html and "\u26a0" in html
    assert "Glacier &lt;Retreat&gt;" in html  # titles are escaped
    assert html.index("References") > html.index("Bees use skylight")
    assert citation_summary(_result()) == "2 citations · 1 supported · 1 flagged"


def test_a_power_of_ten_is_shown_raised_and_other_carets_and_years_are_not():
    html = markdown_to_html("About 10^6.6 NEOs (3.5 × 10^6), p ≈ 10^−10; in 2010^3 and a^2.")
    assert "10<sup>6.6</sup> NEOs" in html and "10<sup>6</sup>)" in html and "10<sup>−10</sup>" in html
    assert "2010^3" in html and "a^2" in html


def test_cite_links_round_trip_odd_ids():
    for pid in ("hep-th/9901001v1", "smith:2020", "a b"):
        link = parse_cite(cite_href(pid, 12, 4))
        assert (link.paper_id, link.page, link.evidence_number) == (pid, 12, 4)
        assert parse_cite(cite_href(pid, 12, 4, citation=7)) == CiteLink(pid, 12, 4, citation=7)
        assert parse_cite(cite_href(pid, 12, 4, sentence=2)) == CiteLink(pid, 12, 4, sentence=2)
    assert parse_cite("cite:abc:4:0") == CiteLink("abc", 4, 0)  # the 3-part form (streaming, older answers)
    assert parse_cite("cite:abc:4:0:x") is None
    assert parse_cite("summary:x") is None


def _verdict_result() -> ResearchResult:
    """A claim-bound answer whose citations got each verdict, and a claim citing nothing."""
    from app.core.research.answer.synthesis import render

    text = "Glacier tongues retreated by 31 metres per year on average. The median glacier lost 0.9 metres of ice thickness per year."
    e1 = Evidence(1, "glaciers", 1, "1", "Abstract", text, 0.8)
    e2 = Evidence(2, "bees", 2, "ii", "Experiments", "Foragers flew in the tunnel under a rotating polarizer.", 0.6)
    result = ResearchResult(query="How fast did glaciers retreat?", evidence=[e1, e2], claims=[
        Claim("Glacier tongues retreated by 31 metres per year.", [1]),
        Claim("The median glacier lost 0.9 metres of ice, mostly from debris-free tongues.", [1]),
        Claim("Retreat was measured with bees.", [2]),
        Claim("Retreat doubled after 2010.", []),
    ])
    render(result)  # the core's rendering: answer text and citation spans
    verdicts = [
        ("verified", "supported", "", "Glacier tongues retreated by 31 metres per year on average."),
        ("partial", "partial", "the passage does not name debris", "The median glacier lost 0.9 metres of ice thickness per year."),
        ("unsupported", "unsupported", "the model judged the cited text not to state this", "Foragers flew in the tunnel under a rotating polarizer."),
    ]
    for c, (status, support, note, quote) in zip(result.citations, verdicts):
        c.status, c.support, c.note, c.quote = status, support, note, quote
        result.claims[c.claim].support = support
    result.claims[3].support = "unsupported"
    result.references = [Reference(1, "bees", "Bees", [], ""), Reference(2, "glaciers", "Glaciers", [], "")]
    return result


def test_answer_marks_each_verdict_distinctly_and_flags_unbacked_claims():
    result = _verdict_result()
    assert [c.claim for c in result.citations] == [0, 1, 2]
    html = render_answer(result)
    ok, partial, bad = (html.index(f'href="cite:{c.paper_id}:{c.page}:{c.evidence_number}:{i}"') for i, c in enumerate(result.citations))
    # supported ✓ green, partly supported ? amber, unsupported ✗ red: each its own class and mark.
    assert '<a class="cite ok"' in html and '<span class="mark ok"' in html
    assert '<a class="cite partial"' in html and '<span class="mark partial"' in html
    assert '<a class="cite bad"' in html and '<span class="mark bad"' in html
    assert html[ok:partial].count("\u2713") == 1 and "?" in html[partial:bad] and "\u2717" in html[bad:]
    # Tooltips carry the verdict, its note and the quote.
    partial_tip = html[html.rindex("<a ", 0, partial + 1) : html.index("</a>", partial)]
    assert "Partly supported:" in partial_tip and "debris" in partial_tip
    assert "“The median glacier lost 0.9 metres of ice thickness per year.”" in partial_tip
    # The claim resting on an unsupported citation, and the one citing nothing, are flagged.
    assert '<span class="unbacked"' in html
    assert html.count('<span class="unbacked"') == 2
    assert ">Retreat was measured with bees</span>" in html
    assert ">Retreat doubled after 2010</span>" in html and "no\u00a0source" in html
    assert html.index("no\u00a0source") > html.index("Retreat doubled after 2010")
    assert "Glacier tongues retreated by 31 metres per year" in html.split('<span class="unbacked"')[0]  # a supported claim is not flagged
    # The header counts the model's claims by verdict (a claim citing nothing is unsupported).
    assert citation_summary(result) == "4 claims · 1 supported · 1 partly supported · 2 unsupported"


def test_evidence_preview_links_the_best_focused_sentences():
    text = "Alpha one two three. Beta four five six. Gamma seven eight nine."
    e1 = Evidence(3, "paper-a", 5, "12", "Results", text, 0.7, char_start=0, char_end=len(text), sentences=[
        Sentence("Alpha one two three.", 0, 20, 0.2), Sentence("Gamma seven eight nine.", 41, 64, 0.9)])
    e2 = Evidence(4, "paper-b", 2, "", "", "Delta ten eleven twelve.", 0.6, sentences=[Sentence("Delta ten eleven twelve.", 0, 24, 0.5)])
    html = render_evidence_preview([e1, e2], top=2)
    assert "Best evidence so far" in html
    assert html.index("Gamma") < html.index("Delta")  # by sentence score, across passages
    assert "Alpha" not in html  # only the top 2
    assert 'href="cite:paper-a:5:3:s1"' in html and 'href="cite:paper-b:2:4:s0"' in html
    assert parse_cite("cite:paper-a:5:3:s1").sentence == 1
    assert "Best evidence so far" not in render_evidence_preview([e1, e2], writing=True)
    assert render_evidence_preview([Evidence(1, "p", 1, "", "", "whole", 0.5)]) == ""  # not focused: nothing to preview


def test_streaming_html_shows_pending_citations_and_cursor():
    html = render_streaming("Partial **bold** text [abc, page 4] and more")
    assert "<strong>bold</strong>" in html
    assert 'class="cite pending"' in html and "cite:abc:4:0" in html
    assert "\u258d" in html


def test_error_action_looks_through_synthesis_wrapper():
    from app.core.errors import BackendUnavailable, SynthesisFailed

    try:
        try:
            raise BackendUnavailable("LM Studio is not running at 127.0.0.1:1", "start it")
        except BackendUnavailable as exc:
            raise SynthesisFailed("Synthesis failed: could not load the chat model") from exc
    except SynthesisFailed as wrapped:
        assert error_action(wrapped) == "start-lmstudio"
    assert error_action(NoRelevantPapers("none")) == ""


def test_import_panel_renders_typed_progress(qtbot):
    from app.core.events import Progress, Step

    clock = {"now": 100.0}
    panel = ImportPanel()
    qtbot.addWidget(panel)
    panel.eta_meter.clock = lambda: clock["now"]
    panel.start("Importing")
    panel.update_progress(Progress(10, 110, "pages", "page 4/12, 20 chunks", Step(3, 30, "paper.pdf", 4, 12)))
    clock["now"] += 10.0  # 50 more pages in 10 s: 50 pages left take 10 s
    panel.update_progress(Progress(60, 110, "pages", "page 9/12, 41 chunks", Step(3, 30, "paper.pdf", 9, 12)))
    assert panel.title.text() == "Importing — file 3 of 30"
    assert panel.file_label.text() == "paper.pdf · page 9/12, 41 chunks"
    assert (panel.file_bar.maximum(), panel.file_bar.value()) == (12, 9)
    assert panel.overall_bar.value() == int(60 / 110 * 1000)
    assert panel.eta.text() == "about 10s left"


def test_highlight_covers_the_passage_on_its_page(tmp_path):
    from tests.support.pdf_factory import make_paper

    passage = ("Repeat photogrammetry compares aerial images of the same glacier taken decades apart. "
               "Ground control points on stable bedrock align the image pairs to within half a metre.")
    pdf = make_paper(tmp_path / "p.pdf", "T", ["A B"], ["# One\n\nUnrelated first page text here.", "# Methods\n\n" + passage])
    hl = locate_passage(pdf, 2, passage)
    assert hl.found and hl.method == "align"
    assert len(hl.rects) >= 2  # the passage wraps over several lines
    with pymupdf.open(pdf) as doc:
        words = doc[1].get_text("words")
    covered = [w for w in words if any(r[0] - 1 <= w[0] and w[2] <= r[2] + 1 and r[1] - 1 <= w[1] and w[3] <= r[3] + 1 for r in hl.rects)]
    assert len(covered) >= len(passage_words(passage)) - 2
    assert not locate_passage(pdf, 1, passage).found  # not on page 1


def test_highlight_tolerates_markdown_markers(tmp_path):
    from tests.support.pdf_factory import make_paper

    pdf = make_paper(tmp_path / "p.pdf", "T", ["A B"], ["# Results\n\nThe median glacier lost 0.9 metres of ice thickness per year."])
    hl = locate_passage(pdf, 1, "## Results\n\nThe **median glacier** lost 0.9 metres of ice thickness per year.")
    assert hl.found


def test_highlight_waits_while_another_thread_is_in_mupdf(tmp_path):
    """PyMuPDF's one MuPDF context is not thread-safe: the viewer's pool thread must not enter it
    while an import's reader thread is inside (two threads in MuPDF have aborted the process)."""
    import threading
    import time

    from app.core.desk import MUPDF
    from tests.support.pdf_factory import make_paper

    pdf = make_paper(tmp_path / "p.pdf", "T", ["A B"], ["# Results\n\nThe median glacier lost 0.9 metres of ice thickness per year."])
    results = []
    worker = threading.Thread(target=lambda: results.append(locate_passage(pdf, 1, "The median glacier lost 0.9 metres of ice")))
    with MUPDF:  # as the import's reader thread holds it while it reads a page
        worker.start()
        time.sleep(0.3)
        assert worker.is_alive() and not results, "the highlight entered MuPDF while another thread was in it"
    worker.join(timeout=10)
    assert results and results[0].found


def test_import_and_highlights_on_two_threads(tmp_path, make_desk, fact_pdfs):
    """An import (its reader thread in MuPDF page by page) and a stream of viewer highlights on
    another thread both finish, and correctly: the lock hands MuPDF back and forth between pages."""
    import threading

    from tests.support.pdf_factory import make_paper

    for n in range(4):
        make_paper(fact_pdfs / f"extra{n}.pdf", f"Extra paper {n}", ["A B"],
                   [f"# Part {k}\n\n" + "Sediment cores were dated by radiocarbon at several depths. " * 30 for k in range(6)])
    target = make_paper(tmp_path / "shown.pdf", "T", ["A B"], ["# Results\n\nThe median glacier lost 0.9 metres of ice thickness per year."])
    desk = make_desk(tmp_path / "lib")
    stop, found = threading.Event(), []

    def highlight() -> None:
        while not stop.is_set():
            found.append(locate_passage(target, 1, "The median glacier lost 0.9 metres of ice").found)

    viewer = threading.Thread(target=highlight)
    viewer.start()
    try:
        report = desk.add([fact_pdfs])
    finally:
        stop.set()
        viewer.join(timeout=30)
    assert report.count("added") == 6, [o.message for o in report.outcomes]
    assert len(found) >= 2 and all(found)


def test_question_box_enter_runs_and_history_walks(qtbot):
    box = QuestionBox()
    qtbot.addWidget(box)
    box.set_history(["first question", "second question"])
    with qtbot.waitSignal(box.submitted) as sig:
        box.setPlainText("new question")
        qtbot.keyClick(box, Qt.Key.Key_Return)
    assert sig.args == ["new question"]
    box.remember("new question")
    box.clear()
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "new question"
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "second question"
    qtbot.keyClick(box, Qt.Key.Key_Down)
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.toPlainText() == ""
    box.setPlainText("line one")
    box.keyPressEvent(QKeyEvent(QKeyEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier))
    assert "\n" in box.toPlainText()  # Shift+Enter breaks the line


def test_library_table_filters_sorts_and_explains_failures(qtbot):
    model = PaperTableModel()
    proxy = PaperFilterProxy()
    proxy.setSourceModel(model)
    model.set_papers([
        paper("b", "Bees navigate", authors=["Sofia Lindqvist"], page_count=3),
        paper("a", "Alpine glaciers", published="2019", page_count=3),
        paper("c", "Broken scan", status="failed", status_reason="no text layer: needs OCR", page_count=3),
    ])
    proxy.set_filter("lindqvist")
    assert proxy.rowCount() == 1
    proxy.set_filter("")
    proxy.sort(0, Qt.SortOrder.AscendingOrder)
    assert [proxy.index(r, 0).data() for r in range(3)] == ["Alpine glaciers", "Bees navigate", "Broken scan"]
    failed = model.index(2, 4)
    assert "needs OCR" in model.data(failed, Qt.ItemDataRole.ToolTipRole)
    assert model.data(failed, Qt.ItemDataRole.DecorationRole) is not None


# -- worker ----------------------------------------------------------------------------------


@pytest.fixture
def host(qapp):
    h = WorkerHost(Settings(), None)
    yield h
    h.shutdown()
    assert not h._thread.isRunning()


def test_worker_runs_jobs_in_order_off_the_ui_thread(qtbot, host):
    seen: list[tuple[str, bool]] = []
    ui = threading.get_ident()
    h1 = host.submit("a", lambda ctx: seen.append(("a", threading.get_ident() != ui)) or 1)
    h2 = host.submit("b", lambda ctx: seen.append(("b", threading.get_ident() != ui)) or 2)
    assert wait_for_handle(qtbot, h2) == ("finished", 2)
    assert seen == [("a", True), ("b", True)]
    assert h1.done


def test_worker_drops_results_of_discarded_jobs(qtbot, host):
    gate = threading.Event()

    def slow(ctx):
        gate.wait(5)
        ctx.task.progress(1, 2, "pages", "late progress")
        return "late"

    stale = host.submit("slow", slow)
    got: list = []
    stale.finished.connect(got.append)
    stale.event.connect(got.append)
    stale.discard()
    gate.set()
    marker = host.submit("after", lambda ctx: "after")
    assert wait_for_handle(qtbot, marker) == ("finished", "after")
    qtbot.wait(50)
    assert got == []


def test_worker_key_supersedes_queued_jobs_and_cancel_reaches_the_job(qtbot, host):
    gate = threading.Event()
    blocker = host.submit("block", lambda ctx: gate.wait(5))
    ran: list[int] = []
    first = host.submit("notes", lambda ctx: ran.append(1), key="notes:x")
    second = host.submit("notes", lambda ctx: ran.append(2), key="notes:x")

    def loop(ctx):
        while True:
            ctx.check()
            time.sleep(0.01)

    looping = host.submit("loop", loop)
    gate.set()
    assert wait_for_handle(qtbot, first)[0] == "cancelled"
    assert wait_for_handle(qtbot, second)[0] == "finished"
    assert ran == [2]
    qtbot.waitUntil(lambda: looping.running, timeout=5000)
    looping.cancel()
    assert wait_for_handle(qtbot, looping)[0] == "cancelled"
    assert blocker.done


def test_worker_reports_core_errors_and_bugs_as_failures(qtbot, host):
    def boom(ctx):
        raise NoRelevantPapers("nothing matches", "rephrase")

    kind, exc = wait_for_handle(qtbot, host.submit("x", boom))
    assert kind == "failed" and exc.message == "nothing matches"
    kind, exc = wait_for_handle(qtbot, host.submit("y", lambda ctx: 1 / 0))
    assert kind == "failed" and isinstance(exc, ZeroDivisionError)


def test_signal_emit_keeps_python_refcounts(qapp):
    """PySide6 6.12.0 drops a reference to True on every Signal.emit(); on Python 3.11,
    where True is not immortal, a few thousand emits abort the interpreter. The app
    emits that many in one import, so the environment must not have that bug."""
    import sys

    from PySide6.QtCore import QObject, Signal

    class Emitter(QObject):
        sig = Signal(object)

    e = Emitter()
    e.sig.connect(lambda _o: None)
    payload = object()
    before_true, before_obj = sys.getrefcount(True), sys.getrefcount(payload)
    for _ in range(200):
        e.sig.emit(payload)
    assert sys.getrefcount(payload) == before_obj
    assert sys.getrefcount(True) >= before_true - 2, "PySide6 Signal.emit() leaks references (use PySide6 < 6.12 or a fixed release)"


def test_a_quoted_key_sentence_is_set_apart_from_the_models_claims():
    from app.core.research.answer.key_sentences import quoted
    from app.core.research.answer.synthesis import render

    text = "The median departure date was 14 September. Young birds departed 9 days later than adults."
    e = Evidence(1, "kestrels", 3, "3", "Results", text, 0.8)
    result = ResearchResult(query="When do kestrels leave?", evidence=[e], claims=[
        Claim("Kestrels leave around 14 September.", [1]),
        Claim(quoted("Young birds departed 9 days later than adults."), [1], quoted=True),
    ])
    render(result)
    for c in result.citations:
        c.status, c.support = "verified", "supported"
    for claim in result.claims:
        claim.support = "supported"
    html = render_answer(result)
    start = html.index('<span class="quoted"')
    assert html.index("“Young birds departed 9 days later than adults”") > start
    assert html.index("Kestrels leave around") < start  # the model's own claim is not
    assert html.count('<span class="quoted"') == 1
    # The quotes stand under their own heading beneath the answer, and the header counts claims apart from them.
    assert html.index("Kestrels leave around") < html.index("Key passages") < start
    assert citation_summary(result) == "1 claim · 1 supported · 1 key passage"
    result.claims[0].support = "partial"
    assert citation_summary(result) == "1 claim · 1 partly supported · 1 key passage"  # no "0 supported" beside it


def test_the_papers_tab_puts_the_papers_with_evidence_first_and_mutes_the_ones_only_searched(qtbot, qapp):
    """Stage 1's shortlist is shown before any passage is read; once the evidence is in, a paper it
    only searched must not lead the list."""
    from app.ui.common import theme
    from app.ui.research.pane import PAPER_ID_ROLE, ResearchPane

    theme.apply_theme(qapp, "light")
    pane = ResearchPane()
    qtbot.addWidget(pane)
    papers = [paper(pid, title, page_count=3)
              for pid, title in [("stereo", "Real-time Temporal Stereo Matching"),
                                 ("teams", "Operative Team Familiarity"), ("neo", "Near-Earth Objects")]]
    pane.show_shortlist(papers)
    assert pane.tabs.tabText(0) == "Papers (3)"
    evidence = [Evidence(n, "teams", n, str(n), "", "Median SS and SC scores were 0.08 and 0.06.", 0.8) for n in (1, 2)]
    pane.show_evidence(evidence)
    rows = [pane.papers.topLevelItem(i) for i in range(pane.papers.topLevelItemCount())]
    assert [r.data(0, PAPER_ID_ROLE) for r in rows] == ["teams", "stereo", "neo"]  # the searched ones keep their order
    assert pane.tabs.tabText(0) == "Papers (1 of 3)"
    muted = theme.colors()["muted"].lower()
    assert rows[0].foreground(0).color().name() != muted
    assert all(r.foreground(0).color().name() == muted for r in rows[1:])
    assert "none of its passages" in rows[1].toolTip(0)
    pane.show_evidence(evidence)  # a second report (deep rounds) changes nothing
    assert [pane.papers.topLevelItem(i).toolTip(0).count("Searched:") for i in range(3)] == [0, 1, 1]
    # A later round finds evidence in a paper the first only searched: it is no longer muted.
    pane.show_evidence([*evidence, Evidence(3, "neo", 2, "2", "", "Survey completeness is 90 %.", 0.7)])
    rows = [pane.papers.topLevelItem(i) for i in range(pane.papers.topLevelItemCount())]
    assert [r.data(0, PAPER_ID_ROLE) for r in rows] == ["teams", "neo", "stereo"]
    assert [r.foreground(0).color().name() == muted for r in rows] == [False, False, True]
    assert [r.toolTip(1).count("Searched:") for r in rows] == [0, 0, 1]
    assert rows[1].toolTip(0).startswith("Near-Earth Objects\nA. Author")


def test_a_run_stopped_before_writing_brings_back_the_previous_answer_and_says_so(qtbot, qapp):
    from app.ui.research.answer_view import AnswerView

    view = AnswerView()
    qtbot.addWidget(view)
    view.show_result(ResearchResult(query="What is the median?", answer="The median is 4.2 days."))
    view.begin_stream("A second question")
    assert view.question_label.text() == "A second question" and not view.save_button.isEnabled()
    view.show_stopped("The run stopped: No embedding model is configured.")
    # The old answer is back under its own question, labelled as the previous one, and can still be saved.
    assert view.question_label.text() == "What is the median?"
    assert "4.2 days" in view.browser.toPlainText()
    assert view.status.text().endswith("The previous answer is shown.") and view.save_button.isEnabled()

    view.begin_stream("A third question")
    view.append_tokens("The mean is")
    view.show_stopped("Cancelled.")
    # What was written stays, said to be incomplete, and is not offered for saving.
    assert view.question_label.text() == "A third question"
    assert "The mean is" in view.browser.toPlainText() and "The answer above is incomplete." in view.browser.toPlainText()
    assert view.status.text() == "Cancelled. The answer above is incomplete." and not view.save_button.isEnabled()
    view.apply_theme()  # a theme switch redraws the partial text, not the answer before it
    assert "The mean is" in view.browser.toPlainText() and "4.2 days" not in view.browser.toPlainText()
