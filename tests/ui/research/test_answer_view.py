"""The answer view (app/ui/research/answer_view.py) when a run stops."""

from __future__ import annotations

from app.core.records import ResearchResult


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


def test_a_supported_claim_that_does_not_answer_is_not_shown_with_the_green_mark(qtbot, qapp):
    """Issue 78, item 6: the window marks a supported claim that does not answer what was asked
    (Claim.off_point) with its own muted mark and says why in the tooltip; the status line counts it apart."""
    from app.core.records import Citation, Claim
    from app.ui.common import theme
    from app.ui.research.answer_view import AnswerView

    answer = "PRMT5 dimethylates SmD1 [okafor, page 2]. Gem2 binds the SMN complex [okafor, page 1]."
    first, second = answer.index("[okafor, page 2]"), answer.index("[okafor, page 1]")
    why = "it speaks of gem2; the question asks about smd1"
    result = ResearchResult(
        query="Which enzyme methylates SmD1?", answer=answer,
        claims=[Claim("PRMT5 dimethylates SmD1", [1], "supported"),
                Claim("Gem2 binds the SMN complex", [2], "supported", off_point=why)],
        citations=[Citation("[okafor, page 2]", "okafor", 2, "verified", first, first + 16, 1, support="supported", claim=0),
                   Citation("[okafor, page 1]", "okafor", 1, "verified", second, second + 16, 2, support="supported", claim=1)])
    view = AnswerView()
    qtbot.addWidget(view)
    view.show_result(result)
    html = view.browser.toHtml()
    assert html.count("\u2713") == 2 and "\u2260" in view.browser.toPlainText()  # ✓ for the answer, ✓≠ for the other
    assert view.status.text().startswith("2 claims · 1 supported · 1 supported, not the answer")
    assert "span.aside" in theme.answer_css()
    from app.ui.common.answer_render import render_answer

    rendered = render_answer(result)
    head, tail = rendered.split("Gem2", 1)
    assert 'class="mark ok"' in head and 'class="mark aside"' in tail and 'class="mark ok"' not in tail
    assert why in tail
