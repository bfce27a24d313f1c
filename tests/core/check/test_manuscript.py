"""Checking a manuscript's citations: parsing, key resolution, verdicts, bad input."""

from __future__ import annotations

import json

import pytest

from app.core.models.base import ChatModel
from app.core.models.catalog import JudgeCutoffs

from app.core import events
from app.core.check import CheckReport, check_manuscript
from app.core.check.docx_draft import parse_docx
from app.core.check.latex import parse_latex
from app.core.check.markdown import parse_markdown
from app.core.check.parse import parse_draft
from app.core.check.resolve import Resolver, read_bib
from tests.support.library import import_words_only
from tests.support.papers import paper

LATEX = r"""\documentclass{article}
\begin{document}
\section{Introduction}
% a comment that cites \cite{ghost}
Sandwich estimators are robust to heteroskedasticity \citep[p.~4]{zeileis2004, white1980}. They are popular.
As \citet{bates2015} show, mixed models with $n = 120$ groups fit fast, e.g. in lme4.
\begin{equation} y = \cite{inmath} \end{equation}
Trees split on covariates \parencite{hothorn2006}\autocite[see][12]{zeileis2008}.
\begin{thebibliography}{9}
\bibitem[Zeileis(2004)]{zeileis2004} A. Zeileis. Econometric Computing with HC and HAC Covariance Matrix Estimators. 2004.
\end{thebibliography}
\end{document}
"""

MARKDOWN = """---
title: Draft
bibliography: refs.bib
---
# Methods

Kestrels leave the valleys in autumn [@lindqvist2019; see @berg2020, p. 4].
@gupta2021 shows that glaciers retreat, as others agree [-@smith2020]. Write to a@b.org.
"""


def test_latex_citations_keys_and_locations():
    draft = parse_latex(LATEX, "paper.tex")
    by_key = {c.key: (s, c) for s in draft.sentences for c in s.cites}
    assert set(by_key) == {"zeileis2004", "white1980", "bates2015", "hothorn2006", "zeileis2008"}  # not the comment's, not the math's
    s, c = by_key["zeileis2004"]
    assert (s.line, s.column) == (5, 1)
    assert s.text == "Sandwich estimators are robust to heteroskedasticity."
    assert c.locator == "p. 4"
    s, _ = by_key["bates2015"]
    assert s.line == 6 and "n = 120" in s.text and "\\citet" not in s.text
    assert by_key["zeileis2008"][1].locator == "12"
    assert by_key["hothorn2006"][0] is by_key["zeileis2008"][0]  # one sentence, two papers
    assert "Econometric Computing" in draft.bibitems["zeileis2004"]


def test_markdown_pandoc_citations_and_locations():
    draft = parse_markdown(MARKDOWN, "draft.md")
    assert draft.bib_hint == "refs.bib"
    first, second = draft.sentences
    assert [c.key for c in first.cites] == ["lindqvist2019", "berg2020"]
    assert first.cites[1].locator == "p. 4"
    assert (first.line, first.column) == (7, 1)
    assert first.text == "Kestrels leave the valleys in autumn."
    assert [c.key for c in second.cites] == ["gupta2021", "smith2020"]  # the e-mail address is no citation
    assert (second.line, second.column) == (8, 1)


def test_docx_author_year_and_pandoc_citations(tmp_path):
    import docx

    doc = docx.Document()
    doc.add_heading("Results", level=1)
    doc.add_paragraph("Glaciers retreated fast (Gupta, 2021; Smith et al. 2019, p. 3). Nothing cited here.")
    doc.add_paragraph("As Lindqvist and Berg (2019) found, kestrels leave in autumn [@berg2020].")
    path = tmp_path / "draft.docx"
    doc.save(path)
    draft = parse_docx(path)
    first, second = draft.sentences
    assert [c.key for c in first.cites] == ["Gupta 2021", "Smith 2019"]
    assert first.cites[1].locator == "p. 3"
    assert (first.line, first.column) == (2, 1)  # paragraph 2 (after the heading)
    assert [c.key for c in second.cites] == ["Lindqvist 2019", "berg2020"]
    assert second.line == 3


def test_keys_resolve_by_doi_title_and_key_form(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text("""
@article{byDoi, title={Something else entirely}, author={Nobody, A.}, year={1999}, doi={10.1000/ABC}}
@article{byTitle, title={Kestrel Migration Timing in {Alpine} Valleys}, author={Lindqvist, Maria}, year={2019}}
@article{absent, title={A Paper Nobody Has}, author={Else, Someone}, year={2001}}
@article{broken, title={oops
""")
    entries, problems = read_bib(bib)
    assert len(problems) == 1 and "refs.bib, line" in problems[0]
    papers = [
        paper("doi-paper", "Glacier Retreat", authors=["Anil Gupta"], published="2021", doi="10.1000/abc"),
        paper("kestrel", "Kestrel migration timing in alpine valleys", authors=["Maria Lindqvist", "Tomas Berg"],
              published="2019"),
        paper("deep", "Deep learning of glaciers", authors=["Jo Smith"], published="2020"),
    ]
    r = Resolver(papers)
    assert r.resolve("byDoi", entries["byDoi"]).paper_id == "doi-paper"
    assert r.resolve("byTitle", entries["byTitle"]).paper_id == "kestrel"
    assert r.resolve("smith2020deep", None).paper_id == "deep"  # no entry: the key's own form
    assert r.resolve("Lindqvist 2019", None).paper_id == "kestrel"  # a text citation
    absent = r.resolve("absent", entries["absent"])
    assert not absent.paper_id and "matches no paper" in absent.problem
    assert "no papers" in Resolver([]).resolve("x", None).problem


PAPERS = {
    "kestrel.pdf": ("Kestrel Migration Timing in Alpine Valleys", ["Maria Lindqvist", "Tomas Berg"], [
        "# Abstract\n\nWe study when kestrels leave alpine valleys in autumn using ten years of ringing data.",
        "# Results\n\nThe median departure date was 14 September. Young birds departed 9 days later than adults.",
        "# Body mass\n\nAt ringing, the masses of adult and juvenile kestrels were 186 g and 172 g, respectively.",
    ]),
    "glacier.pdf": ("Glacier Retreat Measured by Drone Photogrammetry", ["Anil Gupta"], [
        "# Abstract\n\nDrone photogrammetry measures glacier retreat at centimetre accuracy.",
        "# Findings\n\nThe glacier front retreated 38 metres per year between 2015 and 2021.",
        "# Discussion\n\nThese data suggest that summer warming drives the retreat of the glacier front.",
    ]),
}


@pytest.fixture
def checked_library(tmp_path, make_desk):
    from tests.support.pdf_factory import make_paper

    (tmp_path / "in").mkdir()
    for name, (title, authors, pages) in PAPERS.items():
        make_paper(tmp_path / "in" / name, title, authors, pages)
    desk = make_desk(tmp_path / "lib")
    assert desk.add([tmp_path / "in"]).ok
    return desk


def test_end_to_end_verdicts_report_and_cancel(tmp_path, checked_library):
    desk = checked_library
    (tmp_path / "refs.bib").write_text("""
@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria and Berg, Tomas}, year={2019}}
@article{gupta2021, title={Glacier Retreat Measured by Drone Photogrammetry}, author={Gupta, Anil}, year={2021}}
@article{white1980, title={A Heteroskedasticity-Consistent Covariance Matrix Estimator}, author={White, Halbert}, year={1980}}
""")
    draft = tmp_path / "draft.md"
    draft.write_text(
        "---\nbibliography: refs.bib\n---\n"
        "The glacier front retreated 38 metres per year between 2015 and 2021 [@gupta2021].\n\n"
        "Robust covariance estimators were proposed long ago [@white1980].\n\n"
        "Young kestrels departed 9 days later than adults [@lindqvist2019; @nokey2000].\n"
    )
    seen = []
    report = check_manuscript(desk, draft, None, events.Task(sink=seen.append))
    assert not report.partial and len(report.sentences) == 3
    glacier = report.sentences[0].citations[0]
    assert glacier.paper_id and glacier.paper_id.startswith("glacier")
    assert glacier.verdict in ("supported", "partial")  # the tiny test model may be unsure; never "not found"
    assert glacier.page == 2 and glacier.printed_page == "2" and "38 metres" in glacier.quote
    white = report.sentences[1].citations[0]
    assert white.verdict == "not-in-library" and white.paper_id is None
    third = report.sentences[2]
    assert [c.key for c in third.citations] == ["lindqvist2019", "nokey2000"]  # judged per paper
    assert third.citations[1].verdict == "not-in-library"
    assert any("white1980" in p and "matches no paper" in p for p in report.problems)
    assert any("nokey2000" in p and "missing from the reference list" in p for p in report.problems)
    progress = [e for e in seen if isinstance(e, events.Progress)]
    assert progress[-1].done == 3 and progress[-1].unit == "sentences"

    d = json.loads(report.to_json())
    assert d["counts"]["not-in-library"] == 2
    cit = d["sentences"][0]["citations"][0]
    assert set(cit) >= {"key", "paper_id", "verdict", "page", "printed_page", "quote", "better_source"}
    assert d["sentences"][0]["location"] == {"line": 4, "column": 1}
    assert CheckReport.from_dict(d).to_dict() == d
    md = report.to_markdown()
    assert "not in the library" in md and "Line 4, column 1" in md

    # Cancel after the first sentence: what is done comes back, marked partial.
    task = events.Task()
    task.sink = lambda e: task.token.cancel() if isinstance(e, events.Progress) and e.done >= 1 else None
    cut = check_manuscript(desk, draft, None, task)
    assert cut.partial and len(cut.sentences) == 1 and "Stopped early" in cut.to_markdown()


def test_bad_input_lines(tmp_path, make_desk):
    empty = make_desk(tmp_path / "empty")
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"not a zip file")
    report = check_manuscript(empty, broken, None, events.quiet())
    assert report.sentences == [] and any("broken.docx: not a readable .docx" in p for p in report.problems)

    draft = tmp_path / "d.tex"
    draft.write_text("Robust errors matter \\cite{white1980}. Unclosed \\cite{x\n")
    report = check_manuscript(empty, draft, tmp_path / "missing.bib", events.quiet())
    assert any("missing.bib: no such .bib file" in p for p in report.problems)
    assert any("library has no indexed papers" in p for p in report.problems)
    assert any("never closed" in p for p in report.problems)
    assert report.sentences[0].citations[0].verdict == "not-in-library"

    assert "not a manuscript" in parse_draft(tmp_path / "x.pdf").problems[0]


class _SpyChat(ChatModel):
    """A chat model that records what it is asked and answers one fixed verdict (the rules' tests need no model).

    It gives no probabilities, so the judge takes the path of backends that answer in words."""

    name = "spy"
    context_length = 4096

    def __init__(self, answer: str = '"supported"') -> None:
        self.answer = answer
        self.calls: list[list[dict]] = []

    def chat(self, messages, **kwargs):
        self.calls.append([dict(m) for m in messages])
        self.schema = kwargs.get("json_schema")
        return self.answer

    def count_tokens(self, text):
        return len(text) // 4

    def close(self):
        pass


def test_rules_settle_numbers_directions_names_without_the_model(tmp_path, checked_library):
    """A changed number, a flipped direction, a name the paper never uses: each flagged by the rules, and the
    paper's own words accepted — none of them asks the model."""
    desk = checked_library
    spy = _SpyChat('"unsupported"')  # were the model asked, the verbatim sentence would come back unsupported
    desk.set_chat_model(spy)
    draft = tmp_path / "rules.md"
    draft.write_text(
        "Young birds departed 19 days later than adults [@lindqvist2019].\n\n"  # a number the paper does not state
        "Young birds departed 9 days earlier than adults [@lindqvist2019].\n\n"  # the direction flipped
        "Drone photogrammetry with LiDAR measures glacier retreat at centimetre accuracy [@gupta2021].\n\n"
        "The glacier front retreated 38 metres per year between 2015 and 2021 [@gupta2021].\n"
    )
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria}, year={2019}}\n"
        "@article{gupta2021, title={Glacier Retreat Measured by Drone Photogrammetry}, author={Gupta, Anil}, year={2021}}\n"
    )
    report = check_manuscript(desk, draft, bib, events.quiet())
    got = [(s.citations[0].verdict, s.citations[0].note) for s in report.sentences]
    assert len(got) == 4
    (v19, n19), (vdir, ndir), (vname, nname), (vok, nok) = got
    assert v19 == "not-found" and "19" in n19
    assert vdir == "not-found" and "opposite" in ndir
    assert vname == "not-found" and "lidar" in nname
    assert vok == "supported" and "same words" in nok
    assert [s.citations[0].page for s in report.sentences] == [2, 2, 1, 2]
    assert "9 days later" in report.sentences[1].citations[0].quote  # the sentence that contradicts it is quoted
    assert spy.calls == [] and report.timings["model_pairs"] == 0 and report.timings["rule_pairs"] == 4


KESTREL_BIB = "@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria}, year={2019}}\n"
GLACIER_BIB = "@article{gupta2021, title={Glacier Retreat Measured by Drone Photogrammetry}, author={Gupta, Anil}, year={2021}}\n"


def _check_by_rules(tmp_path, desk, draft_text: str, bib_text: str, *, settled: int | None = None):
    """Check a one-entry draft. The rules must settle its first `settled` sentences (all, by
    default) without the model, a spy that answers "supported"; the others go to it."""
    spy = _SpyChat('"supported"')
    desk.set_chat_model(spy)
    draft, bib = tmp_path / "draft.md", tmp_path / "refs.bib"
    draft.write_text(draft_text)
    bib.write_text(bib_text)
    report = check_manuscript(desk, draft, bib, events.quiet())
    assert len(spy.calls) == len(report.sentences) - (len(report.sentences) if settled is None else settled)
    return [s.citations[0] for s in report.sentences]


def test_a_comparison_with_its_sides_swapped_is_flagged_by_the_rules(tmp_path, checked_library):
    """"Adults departed later than young birds" cites a paper that says the young depart later:
    the paper's words and comparative, the opposite finding. The rules settle it."""
    [citation] = _check_by_rules(tmp_path, checked_library,
                                 "Adults departed 9 days later than young birds [@lindqvist2019].\n", KESTREL_BIB)
    assert citation.verdict == "not-found" and "other way round" in citation.note


def test_a_figure_given_respectively_to_another_name_is_flagged_by_the_rules(tmp_path, checked_library):
    """The paper lists 186 g and 172 g for adults and juveniles, respectively: a draft that gives
    the juveniles 186 g states a figure the paper has, for the other name. The rules settle it;
    the draft's right figure passes them."""
    wrong, right = _check_by_rules(tmp_path, checked_library,
                                   "Juvenile kestrels weighed 186 g at ringing [@lindqvist2019].\n\n"
                                   "Juvenile kestrels weighed 172 g at ringing [@lindqvist2019].\n", KESTREL_BIB,
                                   settled=1)
    assert wrong.verdict == "not-found" and "186 for adult" in wrong.note and wrong.page == 3
    assert right.verdict != "not-found" and right.page == 3


def test_two_figures_the_paper_states_together_settle_a_paraphrase(tmp_path, checked_library):
    """A sentence that words the finding its own way but gives two or more of its exact figures,
    in one place of the paper beside most of its words, is supported by the rules (a small judge
    doubts paraphrases); one figure changed is still flagged, one figure alone goes to the model."""
    para, changed, single = _check_by_rules(
        tmp_path, checked_library,
        "Between 2015 and 2021 the front of the glacier lost 38 metres each year [@gupta2021].\n\n"
        "Between 2015 and 2021 the front of the glacier lost 35 metres each year [@gupta2021].\n\n"
        "The front of the glacier lost 38 metres each year [@gupta2021].\n", GLACIER_BIB, settled=2)
    assert para.verdict == "supported" and "figures" in para.note and para.page == 2
    assert changed.verdict == "not-found" and "35" in changed.note
    assert "figures" not in single.note


def test_the_model_reads_one_short_pair_after_a_fixed_prefix(tmp_path, checked_library):
    """Pairs the rules cannot settle go to the model: the same system and instruction text every time (llama.cpp's
    prefix cache keeps it), the sentence and the quote last, a one-word verdict by schema."""
    desk = checked_library
    spy = _SpyChat('"unsupported"')
    desk.set_chat_model(spy)
    draft = tmp_path / "para.md"
    draft.write_text(
        "Young birds migrated later in autumn than adults did [@lindqvist2019].\n\n"
        "Aerial images from a small aircraft gauge how fast ice fronts shrink [@gupta2021].\n"
    )
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria}, year={2019}}\n"
        "@article{gupta2021, title={Glacier Retreat Measured by Drone Photogrammetry}, author={Gupta, Anil}, year={2021}}\n"
    )
    report = check_manuscript(desk, draft, bib, events.quiet())
    # Each pair: the best window with its neighbours, and, the model finding no support there,
    # one other place of the paper (judge.model_reads) — two reads a pair at most.
    assert 2 <= len(spy.calls) <= 4 and report.timings["model_pairs"] == len(spy.calls)
    first, second = spy.calls[0][-1]["content"], spy.calls[-1][-1]["content"]
    assert spy.calls[0][0] == spy.calls[-1][0]  # the system message
    cut = first.index("Sentence:")
    assert first[:cut] == second[:cut] and second.index("Sentence:") == cut  # the instruction: one cached prefix
    assert "Young birds migrated" in first[cut:] and "9 days later" in first[cut:]  # the sentence and its quote, last
    assert len(first) < 1000  # the quote, not the whole page
    assert spy.schema == {"type": "string", "enum": ["supported", "partial", "unsupported"]}
    assert [s.citations[0].verdict for s in report.sentences] == ["not-found", "not-found"]
    assert "model judged" in report.sentences[0].citations[0].note
    assert "Aerial images" in second[second.index("Sentence:"):]


def test_the_judge_reads_a_sentence_that_refers_back_with_the_one_before_it(tmp_path, checked_library):
    desk = checked_library
    spy = _SpyChat('"supported"')
    desk.set_chat_model(spy)
    draft = tmp_path / "refers.md"
    draft.write_text("Young kestrels were followed through alpine valleys.\n"
                     "They migrated later in autumn than adults did [@lindqvist2019].\n\n"
                     "Young birds migrated later in autumn than adults did [@lindqvist2019].\n")
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria}, year={2019}}\n")
    report = check_manuscript(desk, draft, bib, events.quiet())
    assert [s.before for s in parse_draft(draft).sentences] == ["Young kestrels were followed through alpine valleys.", ""]
    asked = [call[-1]["content"] for call in spy.calls]
    assert any("They migrated" in a and "Context, not to be checked: Young kestrels were followed" in a for a in asked)
    assert not any("Young birds migrated" in a and "Context" in a for a in asked)  # no referring word: the sentence alone
    assert len(report.sentences) == 2


def test_latex_comment_before_a_blank_line_still_ends_the_paragraph():
    draft = parse_latex("Trees split \\cite{a}.  % note\n\nzoo handles series \\cite{b}. % note\nNext line \\cite{c}.\n")
    assert [(s.text, [c.key for c in s.cites]) for s in draft.sentences] == [
        ("Trees split.", ["a"]), ("zoo handles series.", ["b"]), ("Next line.", ["c"])]


def test_function_names_keep_their_parentheses():
    draft = parse_markdown("The function mob() fits trees (see [@a]).\n")
    assert draft.sentences[0].text == "The function mob() fits trees."


def test_rule_helpers_order_and_negation():
    from app.core.check.judge import negated, ordered_coverage

    assert ordered_coverage("the glacier front retreated fast", "the glacier front retreated fast indeed") == 1.0
    assert ordered_coverage("fast retreated front glacier", "the glacier front retreated fast") < 0.5  # same words, other order
    assert negated("such data rarely exhibit over-dispersion") and not negated("data typically exhibit over-dispersion")


def test_the_judge_reads_the_part_of_a_long_window_that_holds_the_sentence():
    """A window the layout ran on from a byline into the abstract (no full stop between them) is
    mostly names and addresses at its start: the model reads the stretch with the sentence's terms."""
    from app.core.check.judge import QUOTE_CHARS, quote_text
    from app.core.check.locate import paper_from_rows

    byline = " ".join(f"Author{k} Surname{k} 1Department of Pharmacy, University of Somewhere, City-{k}000, Country"
                      for k in range(5))
    abstract = ("ABSTRACT: Lupeol (1), epilupeol (2) and sitosterol (3) were isolated from the hexane fraction "
                "of a methanol extract of the leaves of Phoenix paludosa.")
    text = byline + " " + abstract
    paper = paper_from_rows("p1", [{"page": 1, "char_start": 0, "char_end": len(text), "text": text, "section": "",
                                    "page_label": "1", "vector": [1.0, 0.0]}])
    window = max(paper.windows, key=lambda w: len(w.text))
    assert len(window.text) > QUOTE_CHARS and window.text.startswith("Author0")
    claim = "Lupeol, epilupeol and sitosterol were isolated from the leaves of Phoenix paludosa."
    quote = quote_text(window, claim=claim)
    assert quote.startswith("… ") and quote.endswith("Phoenix paludosa.") and len(quote) <= QUOTE_CHARS + 2
    assert quote_text(window).startswith("Author0")  # no claim: the window's start, as before


def test_a_figure_listed_respectively_elsewhere_does_not_hide_the_place_that_agrees():
    """The results list the fractions' figures "respectively" with a fourth item and another name
    for the third; the abstract gives them as the sentence does. The results match the sentence
    best, but the place that agrees settles it; with no such place the rule still flags it."""
    import numpy as np

    from app.core.check.judge import rule_ruling
    from app.core.check.locate import best_windows, paper_from_rows

    results = ("The LC50 values of the cytotoxic soluble fractions of the methanol extract were found to be 2.17, 2.77, "
               "2.46 and 0.28 µg/ml for hexane, chloroform, aqueous fractions and vincristine sulfate, respectively.")
    abstract = "Hexane, chloroform and methanol soluble fractions were strongly cytotoxic (LC50 2.17, 2.77 and 2.46 µg/ml)."
    claim = ("The hexane, chloroform and methanol soluble fractions were cytotoxic, with LC50 values of 2.17, 2.77 "
             "and 2.46 µg/ml.")

    def ruling(texts):
        rows = [{"page": k + 1, "char_start": 0, "char_end": len(t), "text": t, "section": "", "page_label": str(k + 1),
                 "vector": [1.0, 0.0]} for k, t in enumerate(texts)]
        paper = paper_from_rows("p", rows)
        windows = best_windows(claim, np.array([1.0, 0.0], dtype=np.float32), paper, None)
        assert windows[0].text == results  # the sentence's best match by its words
        return rule_ruling(claim, windows, paper, "Extracts of a Swamp Palm")

    agreed = ruling([abstract, results])
    assert agreed.verdict == "supported" and agreed.window.text == abstract
    alone = ruling([results])
    assert alone.verdict == "unsupported" and "aqueous" in alone.reason


def test_a_judges_doubt_above_its_not_found_cut_is_partial_not_a_flag():
    """Between the judge's "not found" cut and its partial cut the check says partial: the writer
    looks, and a correct citation the small judge doubts is not flagged. Without the cut (another
    model's defaults), as before."""
    from app.core.check.judge import DOUBTED, check_verdict
    from app.core.models.catalog import JudgeCutoffs

    cuts = JudgeCutoffs(supported=0.65, partial=0.5, not_found=0.4)
    assert check_verdict(0.45, cuts) == ("partial", DOUBTED) and check_verdict(0.39, cuts) == ("unsupported", "")
    assert check_verdict(0.7, cuts) == ("supported", "") and check_verdict(0.55, cuts) == ("partial", "")
    assert check_verdict(0.45, JudgeCutoffs(supported=0.65, partial=0.5)) == ("unsupported", "")


class _DoubtingJudge(_SpyChat):
    """A judge that gives P(yes) — one fixed value per reading, in turn — at the starter's cut-offs."""

    gives_probabilities = True

    def __init__(self, p_yes: list[float]) -> None:
        super().__init__()
        self.p_yes = list(p_yes)
        self.judge_cutoffs = JudgeCutoffs(supported=0.65, partial=0.5, not_found=0.4)

    def choice_probabilities(self, messages, choices, **kwargs):
        self.calls.append([dict(m) for m in messages])
        p = self.p_yes.pop(0) if len(self.p_yes) > 1 else self.p_yes[0]
        return {"yes": p, "no": 1 - p}


@pytest.mark.parametrize("readings, verdict, note", [
    ([0.45, 0.30], "partial", "model doubts"),  # a doubt, then no: the doubt stands, and says so
    ([0.45, 0.70], "supported", ""),  # a doubt sends it on to the other place, which states it
    ([0.30, 0.35], "not-found", "model judged"),  # below the cut in both places: flagged
    # "no" where the terms are best, a doubt elsewhere: the doubt stands. Letting the "no" stand instead
    # caught two mis-citations of the check bench and flagged one correct citation whose two halves the
    # paper states in two places (docs/lab/2026-12-07-check-drafts.md): the writer looks, nothing is flagged.
    ([0.30, 0.45], "partial", "model doubts"),
])
def test_a_doubt_reads_on_and_the_better_reading_stands(tmp_path, checked_library, monkeypatch, readings, verdict, note):
    desk = checked_library
    # Two places to read (this small paper has one; judge.model_reads is tested in test_locate.py).
    monkeypatch.setattr("app.core.check.manuscript.model_reads", lambda window, windows, text: [window, windows[-1]])
    judge = _DoubtingJudge(readings)
    desk.set_chat_model(judge)
    draft = tmp_path / "one.md"
    draft.write_text("Young birds migrated later in autumn than adults did [@lindqvist2019].\n")
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria}, year={2019}}\n")
    (cited,) = check_manuscript(desk, draft, bib, events.quiet()).sentences[0].citations
    assert len(judge.calls) == 2  # both places read
    assert cited.verdict == verdict and note in cited.note


def test_a_check_over_papers_still_without_vectors_says_so(tmp_path, make_desk, fact_pdfs):
    """Between import's two phases (ingest/vectors.py) a cited paper is found by its words only;
    the check still finds the passage and says so in the report, as an answer does."""
    desk = make_desk(tmp_path / "lib")
    import_words_only(desk, [fact_pdfs])
    assert all(p.vectors_pending for p in desk.library.list_papers())
    (tmp_path / "refs.bib").write_text(
        "@article{lindqvist2019, title={Kestrel Migration Timing in Alpine Valleys}, author={Lindqvist, Maria}, year={2019}}\n")
    draft = tmp_path / "draft.md"
    draft.write_text("---\nbibliography: refs.bib\n---\nYoung kestrels departed 9 days later than adults [@lindqvist2019].\n")
    report = check_manuscript(desk, draft, None, events.Task())
    cited = report.sentences[0].citations[0]
    assert cited.paper_id and cited.page == 3 and "9 days later" in cited.quote
    assert any("1 paper was searched by their words only" in p for p in report.problems)
    assert "searched by their words only" in report.to_markdown()
