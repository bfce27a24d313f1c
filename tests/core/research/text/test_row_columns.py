"""A table row as the model reads it: the columns the question names first (research/text/row_columns.py)."""

from __future__ import annotations

from app.core.records import Evidence, Sentence
from app.core.research.answer.prompt import format_passage
from app.core.research.text.row_columns import header_words, named_columns_first, named_rows, named_rows_first, names_row

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


def test_the_prompt_shows_a_row_by_the_columns_the_question_names():
    assert named_columns_first(ROW, QUESTION, only=True) == "Table 2 (page 6) · Thoracic surgery · Circulating nurses Median: 0.355"
    e = Evidence(number=2, paper_id="witmer2023", page=6, page_label="6", section="Table 2", text=ROW, score=0.5,
                 char_start=0, char_end=len(ROW), sentences=[Sentence(ROW, 0, len(ROW), 0.5)])
    assert format_passage(e, QUESTION) == "[2] (witmer2023, page 6; Table 2)\nTable 2 (page 6) · Thoracic surgery · Circulating nurses Median: 0.355"
    # A question that names no column reads the whole row.
    assert format_passage(e, "Which service line had the most cases?").endswith(ROW)


def test_only_the_prompt_reads_the_columns_reordered():
    text = ROW
    e = Evidence(number=2, paper_id="witmer2023", page=6, page_label="6", section="Table 2", text=text, score=0.5,
                 char_start=0, char_end=len(text), sentences=[Sentence(text, 0, len(text), 0.5)])
    assert "Thoracic surgery · Circulating nurses Median: 0.355" in format_passage(e, QUESTION)
    assert e.focus_text == ROW  # the evidence, its quotes and the viewer keep the row as printed
    assert format_passage(e) == f"[2] (witmer2023, page 6; Table 2)\n{ROW}"


TABLE = ["Table 7 (page 9) · Table 7: MAX test for the diabetes data · columns: T, (T −µ)/σ",
         "dominant · T: 337 · (T −µ)/σ: 2.3495", "additive · T: 438 · (T −µ)/σ: 3.3433",
         "recessive · T: 101 · (T −µ)/σ: 3.2889"]


def _table_passage() -> Evidence:
    text, sentences, at = "\n".join(TABLE), [], 0
    for line in TABLE:
        sentences.append(Sentence(line, at, at + len(line), 0.5))
        at += len(line) + 1
    return Evidence(number=1, paper_id="maxtest", page=9, page_label="9", section="Table 7", text=text, score=0.5,
                    char_start=0, char_end=len(text), sentences=sentences)


def test_the_row_the_question_names_is_read_right_after_the_caption_line():
    assert named_rows_first(TABLE, "What statistic did the MAX test give for the additive model?") == [0, 2, 1, 3]
    assert named_rows_first(TABLE, "What did the MAX test give?") == [0, 1, 2, 3]  # none named: as printed
    e = _table_passage()
    read = format_passage(e, "What statistic did the MAX test give for the additive model?")
    assert read.index("additive · T: 438") < read.index("dominant · T: 337")
    assert e.focus_text.index("dominant") < e.focus_text.index("additive")  # the evidence as printed


def test_a_row_is_named_by_its_name_as_words_of_the_question():
    assert names_row("What Ki did 33RE have for the YR/FE double mutant?", "YR/FE")
    assert not names_row("What did the HFE gene do?", "HF")  # inside a word


def test_a_row_is_named_in_the_questions_own_words_and_the_fullest_named_wins():
    """A researcher names a row in their own words: "the open-access PubMed Central collection" for
    "PubMed Central (OA)" (its acronym spelled out counts), "the first control group" for "Control 1"."""
    corpora = ["S2ORC (PDF-parse)", "S2ORC (LATEX-parse)", "PubMed Central (OA)"]
    asked = "In the S2ORC paper, how many papers with body text does the open-access PubMed Central collection hold?"
    assert named_rows(asked, corpora) == [2]  # all of its words, against one of three for "S2ORC (PDF-parse)"
    assert named_rows("How many took part in the first control group?", ["Test group A", "Control 1", "Control 2"]) == [1]
    assert named_rows("How large were the corpora?", corpora) == []  # none named: the rows stay as printed
    strains = ["Strain A", "Strain B", "Strain C"]
    assert named_rows("What doubling time did strain B have at 37 °C?", strains) == [1]  # "°C" names no strain
    assert named_rows("How fast did the yeast strains double at 37 °C?", strains) == []  # all alike: none
    # A label the table cut short is said by the words it begins; of two rows named whole, the one
    # named by more words leads (the question contrasts it with "the gold context").
    dpr = ["Gold", "Dist. Sup."]
    contrast = "Trained by distant supervision rather than on the gold context, what top-20 accuracy did DPR reach?"
    assert named_rows(contrast, dpr) == [1, 0]
    assert named_rows_first(["Table 5 (page 12) · Table 5: Retrieval accuracy", "Gold · Top-20: 78.1",
                             "Dist. Sup. · Top-20: 77.1"], contrast) == [0, 2, 1]
    lines = ["Table 1 (page 2) · Table 1: A comparison of corpora", *(f"{n} · Papers: 1" for n in corpora)]
    assert named_rows_first(lines, asked) == [0, 3, 1, 2]


def test_a_row_is_named_without_its_citation_by_its_joined_words_and_a_count_spelled_out():
    """Rows as printed: a method with its citation ("REALMNews (Guu et al., 2020)"), a name joined
    from words the question writes apart ("the REALM model pretrained on CC-News"; "GPT-2" for
    "GPT2"), and a count the question spells out ("up to three links" for the row "3")."""
    models = ["ORQA (Lee et al., 2019)", "REALMWiki (Guu et al., 2020)", "REALMNews (Guu et al., 2020)", "BM25"]
    assert named_rows("What accuracy on WebQuestions is reported for the REALM model pretrained on CC-News?", models) == [2]
    assert named_rows("What accuracy did ORQA reach?", models) == [0]  # its citation no longer halves the share
    corpora = ["ELMO (Peters et al., 2018)", "BERT (Devlin et al., 2019)", "GPT2 (Radford et al., 2019)"]
    assert named_rows("How many tokens was GPT-2 trained on?", corpora) == [2]
    steps = ["1", "2", "3"]
    assert named_rows("What precision does trust reach when it is propagated up to three links away?", steps) == [2]
    assert named_rows("Which one of the trust functions is most precise?", steps) == []  # "one": no count


CAPTION_LINE = ("Table 2 (page 6) · TABLE 2. Summary of teaming scores by service line · "
                "columns: Service, Circulating nurses Median")


def test_a_tables_caption_line_is_neither_a_row_nor_a_key_passage():
    """The caption line names the columns and states no finding. Quoted as a key passage, it put
    a long list of column names above the rows that answer."""
    from app.core.research.answer.key_sentences import quotable

    lines = [CAPTION_LINE, "Cardiac surgery · Circulating nurses Median: 0.714",
             "Thoracic surgery · Circulating nurses Median: 0.355"]
    assert named_rows_first(lines, "the median for thoracic surgery") == [0, 2, 1]  # the caption line stays first
    text, sentences, at = "\n".join(lines), [], 0
    for line in lines:
        sentences.append(Sentence(line, at, at + len(line), 0.5))
        at += len(line) + 1
    e = Evidence(number=1, paper_id="witmer2023", page=6, page_label="6", section="Table 2", text=text, score=0.5,
                 char_start=0, char_end=len(text), sentences=sentences)
    row = "Table 2 (page 6) · Thoracic surgery · Circulating nurses Median: 0.355"  # a row unit
    r = Evidence(number=2, paper_id="witmer2023", page=6, page_label="6", section="Table 2", text=row, score=0.5,
                 char_start=0, char_end=len(row), sentences=[Sentence(row, 0, len(row), 0.5)])
    quoted = [c.text for c in quotable([], [e, r])]
    assert CAPTION_LINE not in quoted and row in quoted


def test_rows_that_open_with_a_shared_setting_are_named_by_their_short_cells():
    """Every row of DPR's Table 4 opens with "Single" or "Multi": the method's cell names the row."""
    from app.core.research.text.row_columns import row_label

    lines = [f"{setting} · Model: {model} · NQ: {nq} · WQ: {wq}" for setting, model, nq, wq in (
        ("Single", "DPR", "41.5", "34.6"), ("Single", "REALMWiki (Guu et al., 2020)", "39.2", "40.2"),
        ("Single", "REALMNews (Guu et al., 2020)", "40.4", "40.7"), ("Multi", "DPR", "41.5", "42.4"))]
    asked = "What accuracy on WebQuestions is reported for the REALM model pretrained on CC-News?"
    assert named_rows(asked, [row_label(line) for line in lines]) == [2]
    assert named_rows_first(lines, asked) == [2, 0, 1, 3]
    assert row_label("Cardiac surgery · Circulating nurses Median: 0.714") == "Cardiac surgery"  # figures name nothing
    # and a column named by a joined word's initials comes before the others
    read = named_columns_first(lines[2], asked)
    assert read.index("WQ: 40.7") < read.index("NQ: 40.4")


def test_the_words_that_name_the_paper_do_not_name_its_rows():
    """"…plain BM25 … in the dense passage retrieval paper": "dense passage retrieval" spells DPR, the
    paper's title, so the row "BM25 + DPR" was named more fully than "BM25". Without its papers'
    title words the question names the row by what it asks; a row named only by a title word is
    still named (a question about DPR's own row in the DPR paper)."""
    from app.core.research.text.row_columns import row_label

    lines = [f"{setting} · Retriever: {model} · Top-20 TriviaQA: {acc}" for setting, model, acc in (
        ("None", "BM25", "66.9"), ("Single", "DPR", "79.4"), ("Single", "BM25 + DPR", "79.8"))]
    labels = [row_label(line) for line in lines]
    title = "Dense Passage Retrieval for Open-Domain Question Answering"
    asked = "What top-20 accuracy does plain BM25 reach on TriviaQA in the dense passage retrieval paper?"
    assert named_rows(asked, labels) == [2]  # without the titles, as before
    assert named_rows(asked, labels, titles=title) == [0]
    assert named_rows("What top-20 accuracy does DPR alone reach on TriviaQA?", labels, titles=title) == [1]


def test_a_table_passage_costs_what_the_prompt_shows_of_it():
    """The first turn is cut by what its passages cost in the prompt; a row the question names
    columns of shows those alone, so it costs that, not its every column."""
    from app.core.research.answer.prompt import prompt_cost

    class Words:  # a tokenizer stand-in: the cost is only compared with itself
        def count_tokens(self, text: str) -> int:
            return len(text.split())

    row = ("Table 2 (page 6) · Cardiac surgery · Scrub Median: 0.179 · Scrub IQR: 0.127-0.238 · "
           "Circulator Median: 0.112 · Circulator IQR: 0.066-0.176 · Experience Median: 0.920")
    e = Evidence(number=1, paper_id="witmer2023", page=6, page_label="6", section="Table 2", text=row, score=0.5,
                 char_start=0, char_end=len(row), sentences=[Sentence(row, 0, len(row), 0.5)])
    asked = "What circulator median did cardiac surgery have?"
    assert prompt_cost(Words(), asked)(e) == Words().count_tokens(format_passage(e, asked)) + 2
    assert prompt_cost(Words(), asked)(e) < prompt_cost(Words())(e)
