"""The project's sentence rule (app/core/text/sentences.py) and the manuscript parsers that use it:
a sentence may open with a lower-case name or symbol, with or without emphasis."""

from __future__ import annotations

import pytest

from app.core.check.docx_draft import parse_docx
from app.core.check.latex import parse_latex
from app.core.check.markdown import parse_markdown
from app.core.text.sentences import is_name_start, sentence_spans, split


@pytest.mark.parametrize("word", ["lacZ mutants", "mRNA levels", "codeML is", "lme4 fits", "p53 binds", "p-values",
                                  "t-test", "n-hexane", "p < 0.05", "β-sitosterol"])
def test_lower_case_names_and_symbols_open_a_sentence(word):
    assert is_name_start(word)
    assert split(f"The first sentence ends here. {word} and so on.") == ["The first sentence ends here.", f"{word} and so on."]


@pytest.mark.parametrize("text", ["Grown in E. coli strains.", "Shown by Smith et al. in two trials.",
                                  "Some, e.g. the larger ones, grew.", "As in Fig. 2 and approx. two more.",
                                  "Found in Vespa sp. nests in spring.", "The mean was 2.5 in all."])
def test_abbreviations_initials_and_ordinary_lower_case_words_do_not_end_a_sentence(text):
    assert split(text) == [text]


def test_a_marked_word_opens_a_sentence_and_an_unmarked_one_does_not():
    text = "It was cloned. gfp fluoresces green."
    assert split(text) == [text]
    assert split(text, marked={text.index("gfp")}) == ["It was cloned.", "gfp fluoresces green."]


def test_attached_marks_stay_with_the_sentence_before_and_paragraphs_always_end_one():
    text = "Shown before.\ue000 Next one here.\n\nlast paragraph"
    spans = sentence_spans(text, attached="\ue000")
    assert [text[a:b].strip() for a, b in spans] == ["Shown before.\ue000", "Next one here.", "last paragraph"]


MARKDOWN = """Genes were knocked out [@a].
*lacZ* mutants grew slowly [@b].
_gfp_ reporters were dim [@c].
**rpoS** was induced [@d]. `numpy` computed the fits [@e].
$p$-values were adjusted [@f]. p-values were small [@g]. mRNA levels rose [@h].
"""


def test_markdown_sentences_opening_with_emphasised_lower_case_names_are_not_merged():
    draft = parse_markdown(MARKDOWN)
    assert [(s.line, [c.key for c in s.cites]) for s in draft.sentences] == [
        (1, ["a"]), (2, ["b"]), (3, ["c"]), (4, ["d"]), (4, ["e"]), (5, ["f"]), (5, ["g"]), (5, ["h"])]
    assert draft.sentences[1].text == "lacZ mutants grew slowly."


LATEX = r"""\begin{document}
Leaves were extracted \cite{a}.
\emph{n}-hexane fractions were toxic \cite{b}.
\textit{lacZ} was silent \cite{c}. {\it gfp} was bright \cite{d}.
$q_{\rm vol}$ stays positive in Lemaître--Tolman models \cite{e}.
\end{document}
"""


def test_latex_sentences_opening_with_emphasis_or_math_are_not_merged():
    draft = parse_latex(LATEX)
    assert [(s.line, [c.key for c in s.cites]) for s in draft.sentences] == [
        (2, ["a"]), (3, ["b"]), (4, ["c"]), (4, ["d"]), (5, ["e"])]
    assert draft.sentences[1].text.startswith("n-hexane fractions")
    assert "Lemaître–Tolman" in draft.sentences[4].text  # TeX's -- is an en dash


def test_docx_italic_run_opens_a_sentence(tmp_path):
    import docx

    document = docx.Document()
    p = document.add_paragraph("Strains were grown [@a]. ")
    p.add_run("lacZ").italic = True
    p.add_run(" mutants grew slowly [@b].")
    path = tmp_path / "draft.docx"
    document.save(str(path))
    draft = parse_docx(path)
    assert [[c.key for c in s.cites] for s in draft.sentences] == [["a"], ["b"]]
