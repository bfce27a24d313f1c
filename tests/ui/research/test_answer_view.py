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
