"""Focusing keeps what a sentence runs on into: the listing it introduces, the equation it states.

"To go from a daily series to the series of just the last-traded-day of each month aggregate
can be used" | `R> prices2returns(aggregate(m, as.yearmon, tail, 1))` was kept without its
listing (a passage past the three best gets its best sentence only), so a how-to question could
not quote the call; "The result is" | "mH = 125.09 ± 0.24 GeV" lost the figure the same way.
The pages are real PDFs read by the import's layout code; the embedder is the real tiny one.
"""

from __future__ import annotations

from app.core.pdf import extract as px
from app.core.records import Claim, Evidence
from app.core.research.evidence.focus import focus_evidence
from app.core.research.answer.key_sentences import key_sentences
from app.core.research.text.question_reading import asks

from tests.support.pdf_factory import make_paper

ZOO_PAGE = """# Aggregation

Daily closing prices of the three indices were read from a text file with one column per index.

To go from a daily series to the series of just the last-traded-day of each month aggregate can be used

```
R> prices2returns(aggregate(m, as.yearmon, tail, 1))
```

The returns keep the month of the price they were computed from."""

HIGGS_PAGE = """# Summary

A combined measurement of the Higgs boson mass is performed in two decay channels using the data sets of both experiments.

The result is

mH = 125.09 ± 0.24 GeV

where the total uncertainty is dominated by the statistical term."""

FILLER = [" ".join(f"Survey note {k}.{j}: the weather station logged wind and rain at the usual hour." for j in range(6))
          for k in range(3)]


def _page(tmp_path, name: str, md_source: str, number: int, score: float) -> Evidence:
    pdf = make_paper(tmp_path / f"{name}.pdf", title=name.title(), pages=[md_source])
    md = next(px.iter_pages(px.open_pdf(pdf))).markdown
    return Evidence(number, name, 1, "1", "", md, score, char_start=0, char_end=len(md))


def _filler(number: int) -> Evidence:
    text = FILLER[number - 1]
    return Evidence(number, f"survey-{number}", 2, "2", "", text, 0.6, char_start=0, char_end=len(text))


def test_a_passage_past_the_windows_keeps_the_listing_its_sentence_introduces(tmp_path, fact_library):
    question = "How can I reduce a daily zoo series to month-end values with aggregate?"
    embedder = fact_library.embedder()
    # Three passages ranked above it take the windows; the zoo page gets its best sentence only.
    evidence = [_filler(1), _filler(2), _filler(3), _page(tmp_path, "zoo", ZOO_PAGE, 4, 0.3)]
    focused = focus_evidence(question, embedder.embed_one(question), evidence, embedder, token_budget=2000)
    zoo = next(e for e in focused if e.paper_id == "zoo")
    texts = [s.text for s in zoo.sentences]
    assert texts[0].startswith("To go from a daily series") and texts[1].startswith("```"), texts
    for s in zoo.sentences:  # spans stay exact on the page
        assert zoo.text[s.char_start:s.char_end] == s.text
    # So the how-to question quotes the call, introduced by its sentence.
    quotes = key_sentences([Claim("Prices are read from a text file.", [1])], focused, 1, asked=asks(question))
    assert quotes[0].text == ("“To go from a daily series to the series of just the last-traded-day of each month "
                              "aggregate can be used: `prices2returns(aggregate(m, as.yearmon, tail, 1))`”")


def test_a_sentence_that_runs_on_through_a_display_equation_is_one_sentence(tmp_path):
    """Apart, "The result is" and "mH = 125.09 ± 0.24 GeV" each scored too low to be read or
    quoted; as the page reads them they are one sentence, its span and text the page's own."""
    from app.core.research.evidence.focus import split_sentences

    e = _page(tmp_path, "higgs", HIGGS_PAGE, 1, 0.8)
    units = split_sentences(e)
    (result,) = [u for u in units if "125.09" in u.text]
    assert " ".join(result.text.split()) == (
        "The result is mH = 125.09 ± 0.24 GeV where the total uncertainty is dominated by the statistical term.")
    assert e.text[result.start:result.end].strip() == result.text
    assert [u.order for u in units] == list(range(len(units)))
    before = units[units.index(result) - 1]
    assert before.text.startswith("A combined measurement")  # a sentence with its stop joins nothing


def test_a_window_grows_into_the_unit_its_sentence_runs_on_into(tmp_path, monkeypatch):
    """The window grows toward the better-scoring neighbour, except that a sentence without its
    stop takes the unit it runs on into first (here the pieces are kept apart, as a piece longer
    than a display equation is): the equation scores low on the question's words."""
    from app.core.research.evidence import sentence_runs
    from app.core.research.evidence.focus import _window, split_sentences
    from app.core.research.evidence.sentence_runs import runs_on

    monkeypatch.setattr(sentence_runs, "DISPLAY_CHARS", 0)
    units = split_sentences(_page(tmp_path, "higgs", HIGGS_PAGE, 1, 0.8))
    texts = [u.text for u in units]
    k = texts.index("The result is")
    before, top, equation = units[k - 1:k + 2]
    assert before.text.startswith("A combined measurement") and equation.text.startswith("mH = 125.09")
    assert runs_on(top) and not runs_on(before)
    for u in units:  # the sentence before outscores the equation
        u.score = {id(before): 0.6, id(top): 0.9}.get(id(u), 0.1)
    count = lambda s: max(1, len(s) // 4)  # noqa: E731
    room = count(top.text) + count(before.text) + 2  # the top sentence and either neighbour, not both
    window, _ = _window(units, top, room, count)
    # The equation, and with the room left the clause that ends its sentence; not the sentence before.
    assert [texts[j] for j in window] == ["The result is", "mH = 125.09 ± 0.24 GeV",
                                          "where the total uncertainty is dominated by the statistical term."]


def test_a_figure_set_as_a_display_equation_is_quoted_with_its_sentence(tmp_path):
    """"The result is" alone is no sentence to quote and "mH = 125.09 ± 0.24 GeV" is no prose;
    together, as the page reads, they are the answer to "what mass did they obtain?"."""
    from app.core.records import Sentence
    from app.core.research.evidence.focus import split_sentences
    from app.core.research.answer.key_sentences import unquoted

    e = _page(tmp_path, "higgs", HIGGS_PAGE, 1, 0.8)
    units = [u for u in split_sentences(e) if not u.text.startswith("Ada Lovelace")]  # the author line
    evidence = [Evidence(1, "higgs", 11, "11", "", e.text, 0.8,
                         sentences=[Sentence(u.text, u.start, u.end, 0.5) for u in units])]
    question = "What Higgs boson mass did the combined analysis obtain?"
    claims = [Claim("A combined measurement of the Higgs boson mass is performed in two decay channels.", [1])]
    quotes = key_sentences(claims, evidence, 1, asked=asks(question))
    assert [unquoted(q.text) for q in quotes] == [
        "The result is mH = 125.09 ± 0.24 GeV where the total uncertainty is dominated by the statistical term"]
    assert px.locate_text(px.open_pdf(tmp_path / "higgs.pdf")[0], unquoted(quotes[0].text))  # highlighted on the page
