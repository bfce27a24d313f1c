"""Reference lists told by their text (research/evidence/not_evidence.py): never evidence for a claim."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research.evidence.focus import split_sentences
from app.core.research.evidence.not_evidence import entry_share, entry_spans, is_entry, is_reference_list

# Entries as journals of several fields print them (shortened from real lists).
ENTRIES = [
    "Kudsk KA, Fabian TC, Baum S, Gold RE: Silent deep vein thrombosis in immobilized multiple trauma patients.",  # Vancouver
    "Am J Surg 1989, 158:515-9.",
    "Ann Surg. 2013;258:953–957.",
    "Int J Med Inform 2005, 74(2–4):111–117.",
    "J. Neurosci. 28, 9610–9618. doi: 10.1523/JNEUROSCI.3071-08.2008",  # Frontiers
    "Shadmehr, R., and Holcomb, H. H. (1997).",
    "[5] L. Wang, M. Liao, M. Gong, R. Yang, and D. Nister, “High-quality real-time stereo",  # IEEE
    "SIAM Journal on Computing, 4:187–200, 1975.",
    "In Proceedings of SuperComputing’2000, Nov 2000.",
    "Boslough, M., Brown, P., & Harris, A. W. 2015, in Aerospace Conference, 2015 IEEE, 1-12",  # astronomy
]
# Running text that cites, names software or dates things, and blocks with dates and times.
PROSE = [
    "The trick of in-batch negatives has been used in the full batch setting (Yih et al., 2011) and more "
    "recently for mini-batch (Henderson et al., 2017; Gillick et al., 2019).",
    "Here we discuss hurdle models in the pscl package (Jackman 2008), available from http://CRAN.R-project.org/.",
    "The median departure date was 14 September 2019, and 12 of 40 birds left before 10:30.",
    "According to Pekny et al. (2011) two opposing force fields do not destroy each other.",
    "The glacier front retreated 38 metres per year between 2015 and 2021 (Table 2, rows 3-7).",
    "Patients with Hepatitis B and Hepatitis C, or Type I and Type II diabetes, were excluded in 2019.",
    "2. Results In total 40 birds were ringed in 2019.",
]


@pytest.mark.parametrize("unit", ENTRIES)
def test_entries_of_reference_lists_in_several_styles(unit):
    assert is_entry(unit)


@pytest.mark.parametrize("unit", PROSE)
def test_running_text_that_cites_is_not_an_entry(unit):
    assert not is_entry(unit)


CONCLUSION = ("Temporal aggregation is markedly more robust to noise than matching the current frames alone. "
              "It runs in real time on a laptop GPU.")
REFERENCES = ("[1] D. Scharstein and R. Szeliski, “A taxonomy and evaluation of dense two-frame stereo correspondence "
              "algorithms,” International Journal of Computer Vision, vol. 47, pp. 7–42, 2002. "
              "[2] K.-J. Yoon and I.-S. Kweon, “Locally adaptive support-weight approach for visual correspondence search,” "
              "in Proceedings of CVPR, pp. 924–931, 2005. "
              "[3] L. Wang, M. Liao, M. Gong, R. Yang, and D. Nister, “High-quality real-time stereo using adaptive cost "
              "aggregation and dynamic programming,” in 3DPVT, pp. 798–805, 2006.")


def test_a_passage_that_runs_into_its_references_keeps_its_own_sentences():
    text = CONCLUSION + "\n\n" + REFERENCES
    spans = entry_spans(text)
    assert spans and all(a >= len(CONCLUSION) for a, _ in spans)
    assert 0.5 < entry_share(text) < 1.0
    kept = [c.text for c in split_sentences(Evidence(1, "p", 6, "6", "", text, 0.5))]
    assert any("robust to noise" in k for k in kept) and any("real time" in k for k in kept)
    assert not any("Szeliski" in k or "Kweon" in k or "Nister" in k for k in kept)


def test_a_reference_list_is_told_from_a_page_of_prose():
    assert is_reference_list(REFERENCES)
    assert not is_reference_list(" ".join(PROSE))
    assert not is_reference_list("```\n> z <- zoo(1:3, as.Date(c(\"2000-01-15\", \"2000-03-03\")))\n"
                                 "2000-01-15 10:34:02 1\n2000-03-03 11:18:23 2\n```")


KESTREL_BODY = ("# Results\n\nKestrels left the alpine valleys in autumn: the median departure date was 14 September. "
                "Young kestrels departed 9 days later than adults, and birds from higher valleys left first.")
# A two-column journal's list that runs on under the last section, with no heading of its own: its
# titles repeat the question's words, as real ones do.
KESTREL_REFERENCES = (
    "# Discussion\n\nDeparture dates agree with earlier ringing studies.\n\n"
    "1. Lindqvist M, Berg T, Holm A: Autumn migration of kestrels from alpine valleys. J Avian Biol 2011, 42:115-24.\n"
    "2. Berg T, Lindqvist M: Departure dates of kestrels leaving alpine valleys in autumn. Ibis 2014, 156:301-9.\n"
    "3. Holm A, Gupta A, Berg T: Kestrel migration timing and valley altitude. Bird Study 2016, 63:44-51.\n"
    "4. Nilsson K, Holm A: When do kestrels leave the alpine valleys? Ardea 2018, 106:12-19.\n"
    "5. Gupta A, Lindqvist M: Alpine kestrels and autumn departure. J Ornithol 2019, 160:77-85."
)


def test_a_reference_list_without_a_heading_is_not_evidence(tmp_path, make_desk):
    from tests.support.pdf_factory import make_paper

    (tmp_path / "in").mkdir()
    make_paper(tmp_path / "in" / "kestrel.pdf", "Kestrel Departure from Alpine Valleys", ["Maria Lindqvist"],
               ["# Abstract\n\nWe ring kestrels in alpine valleys.", KESTREL_BODY, KESTREL_REFERENCES])
    desk = make_desk(tmp_path / "lib")
    assert desk.add([tmp_path / "in"]).ok
    # The list is in the library, under a section that is not called References.
    chunks = desk.library.chunks_table("content_chunks").to_arrow().to_pylist()
    listed = [c for c in chunks if "J Avian Biol" in c["text"]]
    assert listed and all(c["section"].strip("# ").lower() != "references" for c in listed)

    result = desk.funnel().run("When do kestrels leave the alpine valleys in autumn?", evidence_only=True)
    assert any("14 September" in e.text for e in result.evidence)
    assert not any(is_reference_list(e.text) for e in result.evidence)
    assert not any("J Avian Biol" in e.text or "Ibis 2014" in e.text for e in result.evidence)


# Entries in a style whose marks the text rule reads weakly (no volume and pages, titles in words
# that repeat the question's): only the heading tells them, numbered as ACM and many non-English
# papers number it.
PLAIN_ENTRIES = (
    "Lindqvist, M. and Berg, T. Autumn migration of kestrels from alpine valleys and the timing of their departure. "
    "Doctoral thesis, University of Uppsala. Berg, T. When kestrels leave the valleys: departure dates in autumn "
    "across three alpine regions of Sweden and Norway. Report of the Nordic ringing scheme."
)


def test_a_reference_list_under_a_numbered_or_non_english_heading_is_not_evidence(tmp_path, make_desk):
    from app.core.research.evidence.not_evidence import is_bibliography
    from tests.support.pdf_factory import make_paper

    for heading in ("6. REFERENCES", "VII. References", "7. Bibliografía", "Références bibliographiques",
                    "Literaturverzeichnis", "References and Notes"):
        assert is_bibliography(heading) and is_reference_list(PLAIN_ENTRIES, heading), heading
    for heading in ("6. Results", "Reference genes", "2.6 Linking bibliographies to papers", "zoo Quick Reference"):
        assert not is_bibliography(heading), heading
    assert not is_reference_list(PLAIN_ENTRIES)  # by its text alone it reads as prose

    (tmp_path / "in").mkdir()
    make_paper(tmp_path / "in" / "kestrel.pdf", "Kestrel Departure from Alpine Valleys", ["Maria Lindqvist"],
               ["# 1. Introduction\n\nWe ring kestrels in alpine valleys.", KESTREL_BODY, "# 6. REFERENCES\n\n" + PLAIN_ENTRIES])
    desk = make_desk(tmp_path / "lib")
    assert desk.add([tmp_path / "in"]).ok
    chunks = desk.library.chunks_table("content_chunks").to_arrow().to_pylist()
    assert any(c["section"].strip("# ") == "6. REFERENCES" and "Nordic ringing" in c["text"] for c in chunks)
    result = desk.funnel().run("When do kestrels leave the alpine valleys in autumn?", evidence_only=True)
    assert any("14 September" in e.text for e in result.evidence)
    assert not any("Nordic ringing" in e.text or "Doctoral thesis" in e.text for e in result.evidence)


def test_reference_lists_are_not_evidence():
    from app.core.research.evidence.not_evidence import is_bibliography

    assert is_bibliography("References") and is_bibliography("## Bibliography ")
    assert not is_bibliography("Related work") and not is_bibliography("")
