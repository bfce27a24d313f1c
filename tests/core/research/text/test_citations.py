"""Citation parsing (canonical and near-miss forms) and checking against evidence."""

from __future__ import annotations

from app.core.records import Evidence
from app.core.research.text.citations import check_citations, normalise_answer, parse_citations


def ev(n, pid, page, text):
    return Evidence(number=n, paper_id=pid, page=page, page_label=str(page), section="", text=text, score=0.5)


EVIDENCE = [
    ev(1, "2301.12345v1", 5, "The sandwich estimator is consistent under heteroskedasticity of unknown form."),
    ev(2, "zeileis-2004-econometric", 3, "HC3 is recommended for small samples because it has better size properties."),
    ev(3, "zeileis-2004-econometric", 7, "The vcovHAC function computes heteroskedasticity and autocorrelation consistent estimates."),
]
IDS = ["2301.12345v1", "zeileis-2004-econometric", "bates-lme4"]


def parse(answer):
    return parse_citations(answer, EVIDENCE, IDS)


def test_canonical_and_near_miss_forms():
    answer = (
        "It is consistent [2301.12345v1, page 5]. HC3 suits small samples [zeileis-2004-econometric, p. 3]. "
        "HAC estimates exist (zeileis-2004-econometric, pp. 7-8). Also [Source 1] and [2301.12345, p.5] "
        "and [ZEILEIS-2004-ECONOMETRIC p3; 2301.12345v1, page 5]."
    )
    cits = parse(answer)
    got = [(c.paper_id, c.page) for c in cits]
    assert got == [
        ("2301.12345v1", 5),
        ("zeileis-2004-econometric", 3),
        ("zeileis-2004-econometric", 7),
        ("2301.12345v1", 5),
        ("2301.12345v1", 5),
        ("zeileis-2004-econometric", 3),
        ("2301.12345v1", 5),
    ]


def test_markdown_links_and_plain_brackets_are_not_citations():
    assert parse("See [the docs](http://x.org) and [optional] text.") == []


def test_statuses():
    answer = (
        "The estimator is consistent under heteroskedasticity [2301.12345v1, page 5]. "
        "HC3 is recommended for small samples [zeileis-2004-econometric, page 9]. "
        "Mixed models are fitted by penalized least squares [bates-lme4, page 2]. "
        "Bananas ripen quickly in tropical warehouses [zeileis-2004-econometric, page 3]."
    )
    cits = check_citations(answer, parse(answer), EVIDENCE)
    assert [c.status for c in cits] == ["verified", "page-mismatch", "not-in-evidence", "unsupported"]
    assert "3, 7" in cits[1].note


def test_source_number_maps_to_evidence_and_is_verified():
    answer = "HAC estimates: vcovHAC computes autocorrelation consistent estimates [Source 3]."
    cits = check_citations(answer, parse(answer), EVIDENCE)
    assert (cits[0].paper_id, cits[0].page, cits[0].status, cits[0].evidence_number) == (
        "zeileis-2004-econometric", 7, "verified", 3)


def test_normalise_rewrites_to_canonical_with_correct_spans():
    answer = "Consistent estimator [Source 1]. HC3 small samples (zeileis-2004-econometric, p. 3)."
    cits = check_citations(answer, parse(answer), EVIDENCE)
    text, cits = normalise_answer(answer, cits)
    assert text == (
        "Consistent estimator [2301.12345v1, page 5]. HC3 small samples [zeileis-2004-econometric, page 3]."
    )
    for c in cits:
        assert text[c.start:c.end] == f"[{c.paper_id}, page {c.page}]"


def test_multiple_in_one_bracket_keep_distinct_spans():
    answer = "Both hold [2301.12345v1, page 5; zeileis-2004-econometric, page 3]."
    text, cits = normalise_answer(answer, check_citations(answer, parse(answer), EVIDENCE))
    assert [text[c.start:c.end] for c in cits] == ["[2301.12345v1, page 5]", "[zeileis-2004-econometric, page 3]"]


def test_uncited_sentences_are_attributed_to_the_passage_holding_their_terms():
    from app.core.research.text.citations import attribute_citations

    evidence = [
        Evidence(1, "zeileis-2004", 5, "5", "", "The default type in vcovHC is HC3; types HC0, HC1 and HC2 can also be requested.", 0.7, "stage2"),
        Evidence(2, "grothendieck-2005", 2, "2", "", "The zoo class stores an ordered index alongside the data matrix.", 0.6, "stage2"),
    ]
    answer = ("## Answer\n\nBy default vcovHC uses the HC3 type. Other types HC0, HC1 and HC2 can be requested.\n"
              "The weather was pleasant in Innsbruck last spring.")
    tagged, added = attribute_citations(answer, evidence)
    assert added == 2
    assert "HC3 type [zeileis-2004, page 5]." in tagged
    assert "requested [zeileis-2004, page 5]." in tagged
    assert "Innsbruck last spring." in tagged and "spring. [" not in tagged  # unrelated: left uncited
    assert tagged.startswith("## Answer\n\n")
    cits = parse_citations(tagged, evidence, ["zeileis-2004", "grothendieck-2005"])
    check_citations(tagged, cits, evidence)
    assert [c.status for c in cits] == ["verified", "verified"]
    # An answer that cites already is left alone.
    cited = "The default is HC3 [zeileis-2004, page 5]."
    assert attribute_citations(cited, evidence) == (cited, 0)


def test_numbered_citations_map_to_their_passages_and_normalise():
    answer = "HC3 is recommended for small samples [2]. Both estimators exist [1][3]. Also [2, 3]."
    cits = check_citations(answer, parse(answer), EVIDENCE)
    assert [(c.paper_id, c.page, c.evidence_number) for c in cits] == [
        ("zeileis-2004-econometric", 3, 2),
        ("2301.12345v1", 5, 1),
        ("zeileis-2004-econometric", 7, 3),
        ("zeileis-2004-econometric", 3, 2),
        ("zeileis-2004-econometric", 7, 3),
    ]
    assert cits[0].status == "verified"
    text, _ = normalise_answer(answer, cits)
    assert text.startswith("HC3 is recommended for small samples [zeileis-2004-econometric, page 3].")
    assert "[2, 3]" not in text and "[2]" not in text
    assert parse("Years such as [2004] or a list [a, b] are not passage numbers.") == []
