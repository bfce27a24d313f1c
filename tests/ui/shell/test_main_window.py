"""The real window with real parts: drop PDFs, research, citations → PDF page, follow-ups,
cancel, LM Studio unreachable, and the event-loop stall budget.

Models: the real tiny GGUFs (SmolLM2-135M chat, MiniLM embeddings) unless a
test needs deterministic citations or slow streaming, where a scripted chat
model is put into the worker's Desk.
"""

from __future__ import annotations

import gc
import shutil
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QColor, QDropEvent

from app.core.events import EvidenceFound, Progress, Round, Stage, Token
from app.ui.common import theme
from app.ui.common.answer_render import citation_summary, parse_cite
from app.ui.shell.main_window import MainWindow
from app.ui.research.pane import EVIDENCE_ROLE

from tests.support.ui import make_corpus, ui_chat, use_chat, wait_for_handle

QUESTION = "How fast did alpine glaciers retreat, and how was it measured?"


def _drop(window: MainWindow, paths: list[Path]) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    event = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)


def _run(qtbot, window: MainWindow, question: str = QUESTION, timeout: int = 300_000):
    tokens: list[str] = []
    stages: list[str] = []
    handle = window.research.run(question)
    handle.event.connect(lambda e: tokens.append(e.text) if isinstance(e, Token) else None)
    handle.event.connect(lambda e: stages.append(e.detail) if isinstance(e, Stage) else None)
    kind, payload = wait_for_handle(qtbot, handle, timeout)
    return kind, payload, tokens, stages


# -- library --------------------------------------------------------------------------


def test_dropped_pdfs_appear_indexed_with_progress(make_window, qtbot, tmp_path):
    window = make_window()
    papers = make_corpus(tmp_path / "drop")
    progress: list[str] = []
    _drop(window, [papers])  # a folder: searched recursively
    handle = window.library.current or window.host.pending("import")[0]
    handle.event.connect(lambda e: progress.append(e) if isinstance(e, Progress) else None)
    kind, report = wait_for_handle(qtbot, handle)
    assert kind == "finished", report
    qtbot.waitUntil(lambda: len(window.library_pane.papers()) == 3, timeout=10_000)
    statuses = {p.status for p in window.library_pane.papers()}
    assert statuses == {"indexed"}
    assert window.library_pane.model.rowCount() == 3
    assert "3 papers added" in window.library_pane.banner.message.text()
    assert not window.library_pane.import_panel.isVisible()
    assert any(p.step is not None and p.step.count == 3 for p in progress), progress[:5]
    assert progress[-1].done == progress[-1].total > 0  # the last report covers every page

    # Filter as you type, and sort.
    window.library_pane.filter.setText("honeybee")
    assert window.library_pane.visible_ids() and len(window.library_pane.visible_ids()) == 1
    window.library_pane.filter.clear()
    assert len(window.library_pane.visible_ids()) == 3


def test_failed_import_shows_reason_in_tooltip(make_window, qtbot, tmp_path):
    import pymupdf

    window = make_window()
    scan = tmp_path / "scan.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(50, 50, 300, 300), fill=(0.2, 0.2, 0.2))  # an image-only page: no text layer
    doc.save(scan)
    handle = window.library.add([str(scan)])
    kind, report = wait_for_handle(qtbot, handle)
    assert kind == "finished"
    qtbot.waitUntil(lambda: len(window.library_pane.papers()) == 1, timeout=10_000)
    model = window.library_pane.model
    paper = model.paper(0)
    assert paper.status == "failed"
    tip = model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert "no text" in tip or "OCR" in tip or "text layer" in tip
    assert window.library_pane.banner.kind == "warning"


# -- research ---------------------------------------------------------------------------


@pytest.mark.slow
def test_research_with_real_model_streams_and_renders(make_window, qtbot, seed_library):
    window = make_window(seed=seed_library)
    kind, result, tokens, stages = _run(qtbot, window)
    assert kind == "finished", result
    assert [s.split(":")[0] for s in stages][:3] == ["Stage 1", "Stage 1", "Stage 2"]
    assert any(s.startswith("Stage 3") for s in stages) and any(s.startswith("Stage 4") for s in stages)
    assert tokens, "no tokens streamed"
    assert "".join(tokens).strip()[:40] in window.answer_view.streamed_text()
    assert window.answer_view.render_count >= 1
    assert window.research_pane.papers.topLevelItemCount() >= 1
    assert window.research_pane.evidence.topLevelItemCount() >= 1
    assert all(mark == "\u2713" for mark in (window.research_pane.stages.marks[n].text() for n in (1, 2, 3, 4)))
    cites = [a for a in window.answer_view.anchors() if a.startswith("cite:")]
    assert len(cites) >= len([c for c in result.citations if c.page]) > -1
    assert window.research_pane.run_button.text() == "Run"


@pytest.mark.slow
def test_citation_opens_pdf_at_page_with_highlight(make_window, qtbot, seed_library):
    window = make_window(seed=seed_library)
    use_chat(qtbot, window, ui_chat())
    kind, result, _tokens, _stages = _run(qtbot, window)
    assert kind == "finished", result
    assert result.citations and all(c.status == "verified" for c in result.citations)
    anchors = [a for a in window.answer_view.anchors() if a.startswith("cite:")]
    assert len(anchors) >= len(result.citations)
    html = window.answer_view.browser.toHtml()
    assert "\u2713" in html and "References" in html

    # Click the first citation link the way the browser reports it.
    first = sorted(result.citations, key=lambda c: c.start)[0]
    window.answer_view.browser.anchorClicked.emit(QUrl(anchors[0]))
    viewer = window.pdf_viewer
    assert window.reader.isVisible() and window.reader.currentWidget() is viewer
    assert viewer.current_page == first.page
    assert viewer.page_box.value() == first.page
    qtbot.waitUntil(lambda: viewer.highlight is not None, timeout=15_000)  # found off the UI thread
    assert viewer.highlight.found and viewer.highlight.page == first.page
    qtbot.waitUntil(viewer.rendered, timeout=15_000)
    qtbot.waitUntil(viewer.highlight_visible, timeout=5_000)
    image = viewer.canvas.grab().toImage()
    yellow = 0
    for x in range(0, image.width(), 3):
        for y in range(0, image.height(), 3):
            c = QColor(image.pixel(x, y))
            if c.red() > 200 and c.green() > 170 and c.blue() < 150:  # the marker yellow (255, 230, 110); white has blue 255
                yellow += 1
    assert yellow > 50, "no highlight painted"


@pytest.mark.slow
def test_a_claim_no_passage_supports_leaves_the_answer_and_is_named_in_its_notes(make_window, qtbot, seed_library):
    window = make_window(seed=seed_library)
    use_chat(qtbot, window, ui_chat(verdicts=["supported", "partial", "unsupported"]))
    kind, result, _tokens, _stages = _run(qtbot, window)
    assert kind == "finished", result
    assert result.withdrawn and {c.status for c in result.citations} == {"verified", "partial"}
    text = window.answer_view.browser.toPlainText()
    answer, _, rest = text.partition("References")
    withdrawn = result.withdrawn[0].rstrip(". ")
    assert withdrawn not in answer and f"withdrew the claim “{withdrawn}”" in rest.partition("Notes from this run")[2]
    assert "\u2717" not in text and "1 unsupported claim withdrawn (see notes)" in window.answer_view.status.text()


@pytest.mark.slow
def test_verdicts_are_marked_and_a_citation_opens_its_quote(make_window, qtbot, seed_library):
    """Claims checked as supported / partly supported / unsupported each show their own mark;
    clicking a citation highlights the quote the claim rests on, not the whole passage. (With
    withdrawing off: by default an unsupported claim leaves the answer, test below.)"""
    window = make_window(seed=seed_library, research__withdraw_unsupported=False)
    use_chat(qtbot, window, ui_chat(verdicts=["supported", "partial", "unsupported"]))
    kind, result, _tokens, _stages = _run(qtbot, window)
    assert kind == "finished", result
    assert result.claims and all(c.claim is not None for c in result.citations)
    assert {c.status for c in result.citations} == {"verified", "partial", "unsupported"}, [c.status for c in result.citations]
    view = window.answer_view
    text, html = view.browser.toPlainText(), view.browser.toHtml().lower()
    assert "\u2713" in text and "?" in text and "\u2717" in text
    colors = theme.colors()
    assert all(colors[k].lower() in html for k in ("ok", "warn", "bad"))  # green, amber, red marks
    status = view.status.text()
    assert status.startswith(citation_summary(result)) and all(w in status for w in (" supported", "partly supported", "unsupported"))

    index, cite = next((i, c) for i, c in enumerate(result.citations) if c.status == "partial")
    assert cite.quote
    href = next(a for a in view.anchors() if a.startswith("cite:") and parse_cite(a).citation == index)
    view.browser.anchorClicked.emit(QUrl(href))
    viewer = window.pdf_viewer
    assert window.reader.isVisible() and viewer.current_page == cite.page
    assert viewer._passage is not None and viewer._passage.text == cite.quote
    evidence = next(e for e in result.evidence if e.number == cite.evidence_number)
    assert " ".join(cite.quote.split()) != " ".join(evidence.text.split())  # the sentences, not the passage
    qtbot.waitUntil(lambda: viewer.highlight is not None, timeout=15_000)
    assert viewer.highlight.found and viewer.highlight.page == cite.page
    assert "quote" in viewer.info.text()


@pytest.mark.slow
def test_focused_evidence_shows_before_the_first_claim(make_window, qtbot, seed_library):
    """The focused evidence arrives before any model time: its best sentences fill the answer
    view, linked to their pages, until the claims are written (and stay below them meanwhile)."""
    window = make_window(seed=seed_library)
    use_chat(qtbot, window, ui_chat(delay=0.1))
    view = window.answer_view
    handle = window.research.run(QUESTION)
    qtbot.waitUntil(lambda: "Best evidence so far" in view.browser.toPlainText(), timeout=60_000)
    assert not view.streamed_text()  # no claim yet
    links = [a for a in view.anchors() if a.startswith("cite:") and parse_cite(a).sentence is not None]
    assert 1 <= len(links) <= 5

    # A preview link opens the PDF at its page with that sentence highlighted.
    link = parse_cite(links[0])
    evidence = next(e for e in window.research.live_evidence if e.number == link.evidence_number)
    sentence = evidence.sentences[link.sentence].text
    assert " ".join(sentence.split())[:40] in " ".join(view.browser.toPlainText().split())
    view.browser.anchorClicked.emit(QUrl(links[0]))
    viewer = window.pdf_viewer
    assert window.reader.isVisible() and viewer.current_page == link.page
    assert viewer._passage.text == sentence
    qtbot.waitUntil(lambda: viewer.highlight is not None, timeout=15_000)
    assert viewer.highlight.found

    # The Evidence tab lists the focused text, and opens with it highlighted.
    tree = window.research_pane.evidence
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    focused = [(it, it.data(0, EVIDENCE_ROLE)) for it in items if it.data(0, EVIDENCE_ROLE).sentences]
    assert focused
    item, e = focused[0]
    assert item.text(3) == " ".join(e.focus_text.split())
    window.research_pane.evidence_activated.emit(e)
    assert viewer._passage.text == e.focus_text

    # Claims stream in above the preview; the checked answer replaces both.
    qtbot.waitUntil(lambda: bool(view.streamed_text()) and view.render_count >= 1, timeout=60_000)
    # (A claim streams word by word and copies its passage's words, so what streamed is looked
    # for in the part above the preview: the view renders the stream in batches.)
    qtbot.waitUntil(lambda: "Best evidence" in view.browser.toPlainText() and view.streamed_text()[:20]
                    in view.browser.toPlainText().split("Best evidence")[0], timeout=10_000)
    kind, result = wait_for_handle(qtbot, handle)
    assert kind == "finished", result
    assert "Best evidence" not in view.browser.toPlainText()
    assert all(parse_cite(a).sentence is None for a in view.anchors() if a.startswith("cite:"))


@pytest.mark.slow
def test_improve_save_export_write_files(make_window, qtbot, seed_library, tmp_path):
    window = make_window(seed=seed_library)
    use_chat(qtbot, window, ui_chat())
    kind, result, _t, _s = _run(qtbot, window)
    assert kind == "finished"

    handle = window.research.improve("say more about the measurement method")
    kind, improved = wait_for_handle(qtbot, handle)
    assert kind == "finished", improved
    assert improved.feedback == ["say more about the measurement method"]
    assert window.answer_view.result is improved

    kind, saved = wait_for_handle(qtbot, window.research.save())
    assert kind == "finished" and Path(saved).exists()
    assert Path(saved).parent == Path(window.library.location) / "results"
    assert "query:" in Path(saved).read_text(encoding="utf-8")

    md, bib = tmp_path / "answer.md", tmp_path / "refs.bib"
    kind, _ = wait_for_handle(qtbot, window.research.export("markdown", str(md)))
    assert kind == "finished" and "## References" in md.read_text(encoding="utf-8")
    kind, _ = wait_for_handle(qtbot, window.research.export("bibtex", str(bib)))
    assert kind == "finished" and "@" in bib.read_text(encoding="utf-8")
    assert window.answer_view.banner.isVisible() and "refs.bib" in window.answer_view.banner.message.text()


@pytest.mark.slow
def test_cancel_mid_run_keeps_library_consistent(make_window, qtbot, seed_library):
    window = make_window(seed=seed_library)
    use_chat(qtbot, window, ui_chat(delay=0.15))
    tokens: list[str] = []
    handle = window.research.run(QUESTION)
    handle.event.connect(lambda e: tokens.append(e.text) if isinstance(e, Token) else None)
    qtbot.waitUntil(lambda: len(tokens) >= 2, timeout=120_000)
    assert window.research_pane.run_button.text() == "Cancel"
    window.research_pane.run_button.click()  # the Run button is Cancel while running
    kind, _ = wait_for_handle(qtbot, handle, 30_000)
    assert kind == "cancelled"
    assert window.research_pane.run_button.text() == "Run"
    assert "Cancelled" in window.answer_view.status.text()
    assert window.research_pane.stages.states[3] == "failed"
    # The library is untouched and the worker takes new work.
    kind, papers = wait_for_handle(qtbot, window.library.refresh())
    assert kind == "finished" and {p.status for p in papers} == {"indexed"} and len(papers) == 3


def test_cancel_import_keeps_finished_papers(make_window, qtbot, tmp_path):
    window = make_window()
    papers = make_corpus(tmp_path / "drop")
    handle = window.library.add([str(papers)])
    messages: list[str] = []
    handle.event.connect(lambda e: messages.append(e) if isinstance(e, Progress) else None)
    qtbot.waitUntil(lambda: bool(messages), timeout=120_000)
    window.library_pane.import_panel.cancel_button.click()
    kind, _ = wait_for_handle(qtbot, handle)
    assert kind in ("cancelled", "finished")  # a tiny import may finish first
    kind, listed = wait_for_handle(qtbot, window.library.refresh())
    # A paper read before the cancel is kept: "words" (searchable by its words) or "indexed".
    assert all(p.status in ("indexed", "words", "importing") for p in listed)
    if kind == "cancelled":
        assert "cancelled" in window.library_pane.banner.message.text().lower()


def test_lmstudio_unreachable_shows_banner_with_action(make_window, qtbot, seed_library):
    window = make_window(seed=seed_library, chat__backend="lmstudio", chat__host="127.0.0.1:1")
    kind, exc, _t, _s = _run(qtbot, window, timeout=60_000)
    assert kind == "failed"
    banner = window.research_pane.banner
    assert banner.isVisible() and banner.kind == "error"
    assert "LM Studio" in banner.message.text()
    assert "start-lmstudio" in banner.actions
    assert window.research_pane.run_button.text() == "Run"


@pytest.mark.slow
def test_what_lives_as_long_as_the_window_is_out_of_the_collectors_reach(make_window, qtbot, seed_library):
    """Once a library has loaded, the objects alive then are frozen (app/ui/shell/heap.py): a full
    collection no longer walks them. Closing the window hands them back."""
    window = make_window(seed=seed_library)
    qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=30_000)
    assert gc.get_freeze_count() > 10_000  # modules, widgets, the library: far more than a few
    window.shutdown()
    assert gc.get_freeze_count() == 0


@pytest.mark.slow
def test_event_loop_never_stalls_during_import_and_research(make_window, qtbot, tmp_path, seed_library):
    """A 10 ms timer measures the longest gap in the UI event loop while the worker
    imports PDFs and then runs research with the real models."""
    window = make_window(seed=seed_library)
    # The window's one designed pause comes first: once the library has loaded, it collects and
    # freezes what lives as long as the window (app/ui/shell/heap.py). Measured from the start, that
    # collection walked every object the earlier tests left (209 and 222 ms in full local runs,
    # 102-147 ms alone); the check is on the loop while the worker runs, so it starts after it.
    qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=30_000)
    papers = make_corpus(tmp_path / "more")
    for i, name in enumerate(list(papers.iterdir())):
        shutil.copy(name, papers / f"copy{i}-{name.name}")  # duplicates are detected by hash: quick
    from tests.support.ui import PAPERS
    from tests.support.pdf_factory import make_paper

    for i in range(3):  # new papers so the importer really extracts and embeds
        title, authors, pages = PAPERS["glaciers.pdf"]
        make_paper(papers / f"extra{i}.pdf", f"{title} part {i + 2}", authors, [p.replace("forty", str(40 + i)) for p in pages] * 2)

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now
        if len(gaps) == 50:
            # The collector's full pass comes at a moment set by the allocation history (in CI
            # it landed in this window once and stalled the loop 293 ms): run one for certain.
            gc.collect()

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    try:
        importing = window.library.add([str(papers)])
        researching = window.research.run(QUESTION)  # queued behind the import on the worker
        kind, _ = wait_for_handle(qtbot, importing, 300_000)
        assert kind == "finished"
        kind, result = wait_for_handle(qtbot, researching, 300_000)
        assert kind == "finished", result
    finally:
        timer.stop()
    worst = max(gaps[1:]) * 1000
    at = gaps.index(max(gaps[1:]))  # tick 50 holds the forced collection
    print(f"\nlongest event-loop stall: {worst:.0f} ms at tick {at} over {len(gaps)} ticks "
          f"({sum(gaps):.1f} s; p99 {sorted(gaps)[int(len(gaps) * 0.99)] * 1000:.0f} ms)")
    assert worst < 200, f"the UI thread stalled for {worst:.0f} ms"


@pytest.mark.slow
def test_deep_research_runs_rounds_within_budget(make_window, qtbot, seed_library):
    """Deep mode through the Deep switch and time budget (a scripted model answers the
    loop's JSON; the core's own tests run the loop on the real tiny model)."""
    window = make_window(seed=seed_library)
    use_chat(qtbot, window, ui_chat())
    pane = window.research_pane
    assert pane.deep_button.isEnabled()
    pane.set_mode("deep")
    pane.budget.setValue(2)
    assert pane.budget.isEnabled() and pane.time_minutes() == 2.0
    labels: list[str] = []
    with qtbot.waitSignal(pane.run_requested) as request:
        pane.question.setPlainText(QUESTION)
        pane.run_button.click()
    assert request.args == [QUESTION, "deep", 2.0]
    handle = window.research.current
    handle.event.connect(lambda e: labels.append(e.index) if isinstance(e, Round) else None)
    kind, result = wait_for_handle(qtbot, handle, 300_000)
    assert kind == "finished", result
    assert result.mode == "deep"
    # Round 0 is the scoping search on the question; the agent's rounds follow, in order.
    assert labels[0] == 0 and 1 in labels and labels == sorted(labels), labels
    assert "Methodology" in result.answer
    assert "Methodology" in window.answer_view.browser.toPlainText()
    assert any(a.startswith("cite:") for a in window.answer_view.anchors())


@pytest.mark.slow
def test_cancelled_deep_run_offers_synthesis_from_gathered_evidence(make_window, qtbot, seed_library):
    window = make_window(seed=seed_library)
    use_chat(qtbot, window, ui_chat(delay=0.2))
    gathered: list = []
    handle = window.research.run(QUESTION, "deep", None)  # unlimited: only the cancel stops it
    handle.event.connect(lambda e: gathered.append(e.evidence) if isinstance(e, EvidenceFound) and e.evidence else None)
    qtbot.waitUntil(lambda: bool(gathered), timeout=300_000)
    window.research_pane.run_button.click()
    kind, exc = wait_for_handle(qtbot, handle, 120_000)
    assert kind == "cancelled" and exc.partial.evidence
    banner = window.research_pane.banner
    assert banner.isVisible() and "synthesize-partial" in banner.actions
    with qtbot.waitSignal(window.research.result_changed, timeout=300_000) as done:
        banner.action_requested.emit("synthesize-partial")
    result = done.args[0]
    assert result.answer and "Methodology" in result.answer
    assert "cancelled by the user" in result.answer


@pytest.mark.slow
def test_summary_view_and_notes_autosave_reindex(make_window, qtbot, seed_library):
    window = make_window(seed=seed_library)
    paper = next(p for p in window.library_pane.papers() if "Glacier" in p.title)
    window.library_pane.notes_requested.emit(paper.id)  # context menu "Edit notes"
    panel = window.paper_panel
    assert window.reader.isVisible() and window.reader.currentWidget() is panel
    assert panel.tabs.currentIndex() == 1 and panel.paper.id == paper.id
    assert "Abstract" in panel.summary.toPlainText()  # no LLM summary yet: the abstract
    panel.notes.setPlainText("Compare with the drone survey of the Rhone glacier.")
    notes_file = Path(window.library.location) / "notes" / f"{paper.id}.md"
    qtbot.waitUntil(notes_file.exists, timeout=10_000)
    assert "Rhone" in notes_file.read_text(encoding="utf-8")
    qtbot.waitUntil(lambda: "research now sees" in panel.notes_status.text(), timeout=60_000)

    def notes_chunks(ctx):
        table = ctx.desk.library.chunks_table("summary_chunks")
        rows = table.search().where(f"paper_id = '{paper.id}' AND source_type = 'notes'").limit(10).to_list()
        return [r["text"] for r in rows]

    kind, texts = wait_for_handle(qtbot, window.host.submit("check", notes_chunks))
    assert kind == "finished" and any("Rhone" in t for t in texts)


@pytest.mark.slow
def test_remove_from_context_menu_asks_first(make_window, qtbot, seed_library, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    window = make_window(seed=seed_library)
    pane = window.library_pane
    paper = next(p for p in pane.papers() if "Sourdough" in p.title)
    pane.select(paper.id)
    menu = pane.build_menu([paper.id], paper.id, paper)
    labels = [a.text() for a in menu.actions() if a.text()]
    assert labels == ["Show summary", "Open PDF", "Edit notes", "Ask about this paper", "Tags and collections…",
                      "Summarize", "Re-index", "Remove…"]

    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: (asked.append(a[2]), QMessageBox.StandardButton.Cancel)[1])
    pane._remove_selected()
    assert asked and "Sourdough" in asked[0] and len(pane.papers()) == 3  # cancelled: nothing removed

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(window.library.papers_changed, timeout=60_000):
        pane._remove_selected()
    assert [p.id for p in pane.papers() if p.id == paper.id] == []
    assert not (Path(window.library.location) / "pdfs" / f"{paper.id}.pdf").exists()


@pytest.mark.slow
def test_settings_dialog_saves_and_applies(make_window, qtbot, seed_library):
    from app.core.settings import Settings
    from app.ui.common import theme as ui_theme

    window = make_window(seed=seed_library)
    dialog = window.open_settings("Research")
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Research"
    dialog.k2.setValue(9)
    dialog.cutoff1.setValue(0.3)
    assert dialog.citation_style.currentData() == "numbers"  # the default
    dialog.citation_style.setCurrentIndex(dialog.citation_style.findData("tags"))
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    dialog.chat.backend.setCurrentIndex(dialog.chat.backend.findData("lmstudio"))
    dialog.chat.host.setText("studio.local:1234")
    dialog.accept()
    saved = Settings.load()
    assert saved.research.k_evidence == 9 and saved.research.cutoff_summaries == pytest.approx(0.3)
    assert saved.research.cutoff_evidence is None  # left on "calibrated for the model"
    assert saved.research.citation_style == "tags"
    assert saved.chat.backend == "lmstudio" and saved.chat.host == "studio.local:1234"
    assert saved.theme == "dark" and ui_theme.is_dark()
    # The worker got the new settings: the chat model is now LM Studio's.
    qtbot.waitUntil(lambda: "studio.local" in window.models_label.text(), timeout=30_000)


def test_first_run_without_models_offers_setup_and_window_stays_usable(qtbot, qapp, tmp_path, monkeypatch, seed_library):
    from app.core.settings import Settings

    monkeypatch.setenv("RESEARCH_DESK_MODELS_DIR", str(tmp_path / "no-models"))
    lib = tmp_path / "library"
    shutil.copytree(seed_library, lib)
    window = MainWindow(Settings(library=str(lib)), str(lib))  # no model configured, none provisioned
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: getattr(window, "first_run_dialog", None) is not None, timeout=30_000)
        dialog = window.first_run_dialog
        assert dialog.isVisible() and dialog.install_button.isEnabled()
        dialog.close_button.click()  # "Not now"
        assert not dialog.isVisible()
        banner = window.research_pane.banner
        assert banner.isVisible() and "setup-models" in banner.actions
        qtbot.waitUntil(lambda: len(window.library_pane.papers()) == 3, timeout=30_000)  # browsing works
        window.library_pane.filter.setText("bee")
        assert len(window.library_pane.visible_ids()) == 1
    finally:
        window.shutdown()
