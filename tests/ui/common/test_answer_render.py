"""The answer's HTML (app/ui/common/answer_render.py): citation links and their verdict marks,
the evidence preview, the streaming text, key passages set apart."""

from __future__ import annotations

from app.core.records import Citation, Claim, Evidence, Reference, ResearchResult, Sentence
from app.ui.common.answer_render import (
    CiteLink,
    citation_summary,
    cite_href,
    markdown_to_html,
    parse_cite,
    render_answer,
    render_evidence_preview,
    render_streaming,
)


def _result() -> ResearchResult:
    answer = "Glaciers retreated fast [2301.00001v2, page 3]. Bees use skylight [bees-2020, page 9]."
    c1 = Citation("[2301.00001v2, page 3]", "2301.00001v2", 3, "verified", 0, 0, evidence_number=2, reference_number=1)
    c1.start = answer.index("[2301")
    c1.end = c1.start + len(c1.raw)
    c2 = Citation("[bees-2020, page 9]", "bees-2020", 9, "page-mismatch", 0, 0, reference_number=2, note="evidence is on page 2")
    c2.start = answer.index("[bees")
    c2.end = c2.start + len(c2.raw)
    refs = [
        Reference(1, "2301.00001v2", "Glacier <Retreat>", ["I. Holm"], "2023"),
        Reference(2, "bees-2020", "Bees", [], ""),
    ]
    return ResearchResult(query="q", answer=answer, citations=[c1, c2], references=refs)


def test_answer_html_links_citations_with_status_marks():
    html = render_answer(_result())
    # Each link names its citation (index into result.citations), whose quote the viewer highlights.
    assert 'href="cite:2301.00001v2:3:2:0"' in html
    assert 'href="cite:bees-2020:9:0:1"' in html
    assert "\u2713" in html and "\u26a0" in html
    assert "Glacier &lt;Retreat&gt;" in html  # titles are escaped
    assert html.index("References") > html.index("Bees use skylight")
    assert citation_summary(_result()) == "2 citations · 1 supported · 1 flagged"


def test_a_power_of_ten_is_shown_raised_and_other_carets_and_years_are_not():
    html = markdown_to_html("About 10^6.6 NEOs (3.5 × 10^6), p ≈ 10^−10; in 2010^3 and a^2.")
    assert "10<sup>6.6</sup> NEOs" in html and "10<sup>6</sup>)" in html and "10<sup>−10</sup>" in html
    assert "2010^3" in html and "a^2" in html


def test_cite_links_round_trip_odd_ids():
    for pid in ("hep-th/9901001v1", "smith:2020", "a b"):
        link = parse_cite(cite_href(pid, 12, 4))
        assert (link.paper_id, link.page, link.evidence_number) == (pid, 12, 4)
        assert parse_cite(cite_href(pid, 12, 4, citation=7)) == CiteLink(pid, 12, 4, citation=7)
        assert parse_cite(cite_href(pid, 12, 4, sentence=2)) == CiteLink(pid, 12, 4, sentence=2)
    assert parse_cite("cite:abc:4:0") == CiteLink("abc", 4, 0)  # the 3-part form (streaming, older answers)
    assert parse_cite("cite:abc:4:0:x") is None
    assert parse_cite("summary:x") is None


def _verdict_result() -> ResearchResult:
    """A claim-bound answer whose citations got each verdict, and a claim citing nothing."""
    from app.core.research.answer.synthesis import render

    text = "Glacier tongues retreated by 31 metres per year on average. The median glacier lost 0.9 metres of ice thickness per year."
    e1 = Evidence(1, "glaciers", 1, "1", "Abstract", text, 0.8)
    e2 = Evidence(2, "bees", 2, "ii", "Experiments", "Foragers flew in the tunnel under a rotating polarizer.", 0.6)
    result = ResearchResult(query="How fast did glaciers retreat?", evidence=[e1, e2], claims=[
        Claim("Glacier tongues retreated by 31 metres per year.", [1]),
        Claim("The median glacier lost 0.9 metres of ice, mostly from debris-free tongues.", [1]),
        Claim("Retreat was measured with bees.", [2]),
        Claim("Retreat doubled after 2010.", []),
    ])
    render(result)  # the core's rendering: answer text and citation spans
    verdicts = [
        ("verified", "supported", "", "Glacier tongues retreated by 31 metres per year on average."),
        ("partial", "partial", "the passage does not name debris", "The median glacier lost 0.9 metres of ice thickness per year."),
        ("unsupported", "unsupported", "the model judged the cited text not to state this", "Foragers flew in the tunnel under a rotating polarizer."),
    ]
    for c, (status, support, note, quote) in zip(result.citations, verdicts):
        c.status, c.support, c.note, c.quote = status, support, note, quote
        result.claims[c.claim].support = support
    result.claims[3].support = "unsupported"
    result.references = [Reference(1, "bees", "Bees", [], ""), Reference(2, "glaciers", "Glaciers", [], "")]
    return result


def test_answer_marks_each_verdict_distinctly_and_flags_unbacked_claims():
    result = _verdict_result()
    assert [c.claim for c in result.citations] == [0, 1, 2]
    html = render_answer(result)
    ok, partial, bad = (html.index(f'href="cite:{c.paper_id}:{c.page}:{c.evidence_number}:{i}"') for i, c in enumerate(result.citations))
    # supported ✓ green, partly supported ? amber, unsupported ✗ red: each its own class and mark.
    assert '<a class="cite ok"' in html and '<span class="mark ok"' in html
    assert '<a class="cite partial"' in html and '<span class="mark partial"' in html
    assert '<a class="cite bad"' in html and '<span class="mark bad"' in html
    assert html[ok:partial].count("\u2713") == 1 and "?" in html[partial:bad] and "\u2717" in html[bad:]
    # Tooltips carry the verdict, its note and the quote.
    partial_tip = html[html.rindex("<a ", 0, partial + 1) : html.index("</a>", partial)]
    assert "Partly supported:" in partial_tip and "debris" in partial_tip
    assert "“The median glacier lost 0.9 metres of ice thickness per year.”" in partial_tip
    # The claim resting on an unsupported citation, and the one citing nothing, are flagged.
    assert '<span class="unbacked"' in html
    assert html.count('<span class="unbacked"') == 2
    assert ">Retreat was measured with bees</span>" in html
    assert ">Retreat doubled after 2010</span>" in html and "no\u00a0source" in html
    assert html.index("no\u00a0source") > html.index("Retreat doubled after 2010")
    assert "Glacier tongues retreated by 31 metres per year" in html.split('<span class="unbacked"')[0]  # a supported claim is not flagged
    # The header counts the model's claims by verdict (a claim citing nothing is unsupported).
    assert citation_summary(result) == "4 claims · 1 supported · 1 partly supported · 2 unsupported"


def test_evidence_preview_links_the_best_focused_sentences():
    text = "Alpha one two three. Beta four five six. Gamma seven eight nine."
    e1 = Evidence(3, "paper-a", 5, "12", "Results", text, 0.7, char_start=0, char_end=len(text), sentences=[
        Sentence("Alpha one two three.", 0, 20, 0.2), Sentence("Gamma seven eight nine.", 41, 64, 0.9)])
    e2 = Evidence(4, "paper-b", 2, "", "", "Delta ten eleven twelve.", 0.6, sentences=[Sentence("Delta ten eleven twelve.", 0, 24, 0.5)])
    html = render_evidence_preview([e1, e2], top=2)
    assert "Best evidence so far" in html
    assert html.index("Gamma") < html.index("Delta")  # by sentence score, across passages
    assert "Alpha" not in html  # only the top 2
    assert 'href="cite:paper-a:5:3:s1"' in html and 'href="cite:paper-b:2:4:s0"' in html
    assert parse_cite("cite:paper-a:5:3:s1").sentence == 1
    assert "Best evidence so far" not in render_evidence_preview([e1, e2], writing=True)
    assert render_evidence_preview([Evidence(1, "p", 1, "", "", "whole", 0.5)]) == ""  # not focused: nothing to preview


def test_streaming_html_shows_pending_citations_and_cursor():
    html = render_streaming("Partial **bold** text [abc, page 4] and more")
    assert "<strong>bold</strong>" in html
    assert 'class="cite pending"' in html and "cite:abc:4:0" in html
    assert "\u258d" in html


def test_a_quoted_key_sentence_is_set_apart_from_the_models_claims():
    from app.core.research.answer.key_sentences import quoted
    from app.core.research.answer.synthesis import render

    text = "The median departure date was 14 September. Young birds departed 9 days later than adults."
    e = Evidence(1, "kestrels", 3, "3", "Results", text, 0.8)
    result = ResearchResult(query="When do kestrels leave?", evidence=[e], claims=[
        Claim("Kestrels leave around 14 September.", [1]),
        Claim(quoted("Young birds departed 9 days later than adults."), [1], quoted=True),
    ])
    render(result)
    for c in result.citations:
        c.status, c.support = "verified", "supported"
    for claim in result.claims:
        claim.support = "supported"
    html = render_answer(result)
    start = html.index('<span class="quoted"')
    assert html.index("“Young birds departed 9 days later than adults”") > start
    assert html.index("Kestrels leave around") < start  # the model's own claim is not
    assert html.count('<span class="quoted"') == 1
    # The quotes stand under their own heading beneath the answer, and the header counts claims apart from them.
    assert html.index("Kestrels leave around") < html.index("Key passages") < start
    assert citation_summary(result) == "1 claim · 1 supported · 1 key passage"
    result.claims[0].support = "partial"
    assert citation_summary(result) == "1 claim · 1 partly supported · 1 key passage"  # no "0 supported" beside it
