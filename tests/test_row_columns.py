"""A table row as the model reads it: the columns the question names first (research/text/row_columns.py)."""

from __future__ import annotations

from app.core.records import Evidence, Sentence
from app.core.research.answer.answer_prompt import format_passage
from app.core.research.text.row_columns import header_words, named_columns_first

ROW = ("Table 2 (page 6) · Thoracic surgery · Scrub nurses Median: 0.404 · Scrub nurses IQR: 0.291-0.453 · "
       "Circulating nurses Median: 0.355 · Circulating nurses IQR: 0.058-0.476")
QUESTION = "What was the circulating nurses' median score for thoracic surgery?"


def test_the_column_the_question_names_comes_right_after_the_rows_name():
    assert named_columns_first(ROW, QUESTION) == (
        "Table 2 (page 6) · Thoracic surgery · Circulating nurses Median: 0.355 · Scrub nurses Median: 0.404 · "
        "Scrub nurses IQR: 0.291-0.453 · Circulating nurses IQR: 0.058-0.476")


def test_rows_named_by_no_column_and_lines_that_are_not_rows_stay_as_printed():
    assert named_columns_first(ROW, "Which service line had the most cases?") == ROW
    caption = "Table 2 (page 6) · Table 2: Teaming scores by service line · columns: Service, Median, IQR"
    assert named_columns_first(caption, QUESTION) == caption
    assert named_columns_first("Pipecolate · CMS: 0.79", "pipecolate CMS") == "Pipecolate · CMS: 0.79"  # two fields


def test_short_headers_and_hyphenated_ones_are_matched_by_their_words():
    assert {"cms", "ki"} <= header_words("How did CMS change, and what Ki?")
    assert {"circulator-service", "circulator", "service"} <= header_words("Circulator-service Median")


def test_only_the_prompt_reads_the_columns_reordered():
    text = ROW
    e = Evidence(number=2, paper_id="witmer2023", page=6, page_label="6", section="Table 2", text=text, score=0.5,
                 char_start=0, char_end=len(text), sentences=[Sentence(text, 0, len(text), 0.5)])
    assert "Thoracic surgery · Circulating nurses Median: 0.355" in format_passage(e, QUESTION)
    assert e.focus_text == ROW  # the evidence, its quotes and the viewer keep the row as printed
    assert format_passage(e) == f"[2] (witmer2023, page 6; Table 2)\n{ROW}"
