"""Sentences a page break cuts in two are made whole in the evidence (research/evidence/page_breaks.py):
on page texts directly, and through a real library built from a PDF whose answer sentence runs
over a page break."""

from __future__ import annotations

from app.core.records import Evidence
from app.core.research.evidence.page_breaks import mend_page_breaks

PAGES = {
    1: "# Results\n\nNests were checked every third day. In our survey about 50 to 100 nests were enough for",
    2: "reliable estimates of hatching success, as earlier studies found. Predation was the main cause of loss.",
    3: "Clutch size did not differ between years.",
}


def passage(page: int, text: str | None = None, start: int = 0) -> Evidence:
    text = PAGES[page] if text is None else text
    return Evidence(1, "nests", page, str(page), "Results", text, 0.5, char_start=start, char_end=start + len(text))


def test_a_passage_ending_mid_sentence_gets_the_rest_from_the_next_page():
    [mended] = mend_page_breaks([passage(1)], lambda paper: PAGES)
    assert mended.text.endswith("were enough for reliable estimates of hatching success, as earlier studies found.")
    assert mended.char_start == 0 and mended.text.startswith(PAGES[1])  # its own page's span is where it was


def test_a_passage_opening_mid_sentence_gets_its_beginning_from_the_page_before():
    [mended] = mend_page_breaks([passage(2)], lambda paper: PAGES)
    lead = "In our survey about 50 to 100 nests were enough for "
    assert mended.text == lead + PAGES[2]
    assert mended.char_start == -len(lead)  # the page's own text keeps its offsets
    own = mended.text[0 - mended.char_start:]
    assert own == PAGES[2]


def test_with_both_halves_in_the_evidence_the_better_ranked_passage_holds_the_sentence_once():
    whole = "In our survey about 50 to 100 nests were enough for reliable estimates of hatching success, as earlier studies found."
    first, second = mend_page_breaks([passage(1), passage(2)], lambda paper: PAGES)
    assert first.text.endswith(whole)
    assert second.text == "Predation was the main cause of loss."
    assert second.char_start == PAGES[2].index("Predation")  # still the slice of its page it names
    second, first = mend_page_breaks([passage(2), passage(1)], lambda paper: PAGES)
    assert second.text.startswith(whole)
    assert first.text == "# Results\n\nNests were checked every third day."
    assert sum(whole in e.text for e in (first, second)) == 1
    only_half = passage(2, "reliable estimates of hatching success, as earlier studies found.")
    _, kept = mend_page_breaks([passage(1), only_half], lambda paper: PAGES)
    assert kept.text == only_half.text  # nothing else in it: left as it was


def test_the_publishers_footer_between_the_halves_is_passed_over_and_left_out():
    """A licence line and a page number at the foot of the page stand between the two halves of
    the sentence: the break is judged around them, and the mended passage goes without them."""
    footer = ("\n\nwww.birdjournal.org 307 © 2014 The Author(s) This is an open access article distributed under "
              "the terms of the Creative Commons Attribution Licence, which permits unrestricted use.\n\n12")
    pages = {**PAGES, 1: PAGES[1] + footer, 2: "www.birdjournal.org\n\n" + PAGES[2]}
    [mended] = mend_page_breaks([passage(1, pages[1])], lambda paper: pages)
    assert mended.text == PAGES[1] + " reliable estimates of hatching success, as earlier studies found."
    [opening] = mend_page_breaks([passage(2, pages[2])], lambda paper: pages)
    assert opening.text == "In our survey about 50 to 100 nests were enough for " + PAGES[2]
    at = pages[2].index(PAGES[2])  # past the address line, which went
    assert opening.text[at - opening.char_start:] == PAGES[2]  # the page's own text keeps its offsets


def test_finished_sentences_blocks_and_mid_page_passages_are_left_alone():
    finished = {**PAGES, 1: PAGES[1] + " reliable results."}
    assert mend_page_breaks([passage(2)], lambda paper: finished)[0].text == PAGES[2]  # page 1 ends a sentence
    capital = {**PAGES, 2: "Reliable estimates came later."}
    assert mend_page_breaks([passage(1)], lambda paper: capital)[0].text == PAGES[1]  # page 2 starts a new one
    middle = passage(2, "Predation was the main cause of loss.", start=67)
    assert mend_page_breaks([middle], lambda paper: PAGES)[0] is middle  # not the page's opening sentence
    table = {**PAGES, 1: "Nests were checked.\n\n| site | nests |\n|---|---|\n| A | 50"}
    assert mend_page_breaks([passage(2)], lambda paper: table)[0].text == PAGES[2]  # a table is not a sentence
    assert mend_page_breaks([passage(1)], lambda paper: {})[0].text == PAGES[1]  # no page text: as it was


def test_the_focused_evidence_holds_the_sentence_a_page_break_cut(tmp_path, tiny_models):
    from app.core.desk import Desk
    from app.core.research.answer.synthesis import focus_into
    from tests.support.library import tiny_settings
    from tests.support.pdf_factory import make_paper

    filler = " ".join(f"Observers walked transect {k} at dawn and noted every nest they passed." for k in range(14))
    pages = [
        f"# Methods\n\n{filler}\n\nIn our survey about 50 to 100 monitored nests were enough for",
        "reliable estimates of hatching success, which is consistent with earlier studies. "
        "Predation by foxes was the main cause of nest loss in both years.",
    ]
    (tmp_path / "in").mkdir()
    make_paper(tmp_path / "in" / "nests.pdf", "Hatching Success of Ground Nests", ["Ann Field"], pages)
    desk = Desk(tiny_settings(tiny_models), library=str(tmp_path / "lib"))
    try:
        assert desk.add([tmp_path / "in"]).ok
        funnel = desk.funnel()
        result = funnel.run("How many nests were needed for reliable estimates of hatching success?", evidence_only=True)
        assert not any("enough for reliable" in e.text for e in result.evidence)  # the index holds the halves
        focus_into(funnel, result)
        kept = [s.text for e in result.evidence for s in e.sentences]
        whole = "In our survey about 50 to 100 monitored nests were enough for reliable estimates of hatching success"
        assert any(whole in " ".join(s.split()) for s in kept), kept
        for e in result.evidence:  # every kept sentence is still the slice of its passage that its span names
            for s in e.sentences:
                assert e.text[s.char_start - e.char_start : s.char_end - e.char_start] == s.text
    finally:
        desk.close()


def test_the_viewer_finds_a_quote_whose_sentence_began_on_the_page_before(tmp_path):
    import pymupdf

    from app.core.pdf.extract import locate_text
    from tests.support.pdf_factory import make_paper

    path = make_paper(tmp_path / "p.pdf", "Nests", ["Ann Field"], [
        "Nests were checked every third day. In our survey about 50 to 100 nests were enough for",
        "reliable estimates of hatching success, as earlier studies found."])
    quote = "In our survey about 50 to 100 nests were enough for reliable estimates of hatching success, as earlier studies found."
    with pymupdf.open(path) as doc:
        assert locate_text(doc[0], quote)  # its beginning, on the page it starts on
        on_second = locate_text(doc[1], quote)  # its end, cited where the passage is
        assert on_second and all(r.y0 < 200 for r in on_second)
        assert not locate_text(doc[1], "Clutch size did not differ between the two study years at all.")
