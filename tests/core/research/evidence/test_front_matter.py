"""A paper's contact lines, affiliations, keyword lines and copyright notices are never evidence (research/evidence/not_evidence.py)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research.evidence.focus import split_sentences
from app.core.research.evidence.not_evidence import is_front_matter



def kept(text: str) -> list[str]:
    """The units focusing keeps of a passage holding `text`."""
    return [c.text for c in split_sentences(Evidence(1, "p", 1, "1", "", text, 0.5))]

@pytest.mark.parametrize("text", [
    "* Correspondence: ball.chad@gmail.com 1Department of Surgery, University of Calgary, Calgary, Canada",
    "Corresponding author: David E. Trilling david.trilling@nau.edu",
    "© 2010 Datta et al; licensee BioMed Central Ltd.",
    "Copyright © 2022 Wolters Kluwer Health, Inc.",
    "Douglas Bates University of Wisconsin-Madison",
    "Department of Statistics",
    "and Kiran K. Turaga, MD, MPH* ✉",
    "Hunter D.D. Witmer, MD, MBA,*† Çağla Keçeli, MS,† Joshua A. Morris-Levenson, PhD,‡",
    "Ludwig-Maximilians-Universität München",
    "1 Agronomy Dept., University of Florida, Gainesville, FL, United States of America, 2 West Florida "
    "Research and Education Center, University of Florida, Jay, FL, United States of America",
    "Keywords: irregular time series, daily data, weekly data, returns.",
    "Key words. dropout, neural networks, regularization",
    "JEL classification: C63; C68",
    "Index Terms—Dense retrieval, open-domain question answering",
    "MSC 2010: 62J05, 62F40",
    "Keywords Selective pressure analysis, Protein molecular evolution, Large-scale comparative genomics",
    "Received: 4 September 2013 Accepted: 27 December 2013 Published: 2 January 2014",
    "Received 25 July 2008\nAccepted 8 September 2008\nPublished 3 October 2008",
    "Received 19 July 2013/20 August 2013; accepted 9 September 2013",
    "Accepted for publication in JINST.",
    "(Received; Revised; Accepted)",
    "RESEARCH ARTICLE Comparative physiological and metabolomics analysis of wheat (Triticum aestivum L.) "
    "following post-anthesis heat stress",
    "ORIGINAL RESEARCH ARTICLE",
    "OPEN ACCESS",
    "How to cite this article Webb et al. (2017), VESPA: Very large-scale Evolutionary and Selective Pressure Analyses.",
    "This open access article is licensed under a Creative Commons Attribution 3.0 IGO License.",
    "This is an Open Access article distributed under the terms of the Creative Commons Attribution License "
    "(http://creativecommons.org/licenses/by/2.0), which permits unrestricted use, distribution, and reproduction "
    "in any medium, provided the original work is properly cited.",
    "This article is distributed under a CC-BY licence.",
    "doi:10.1186/1752-2897-4-1 Cite this article as: Datta et al.: Complications related to deep venous thrombosis "
    "prophylaxis in trauma: a systematic review of the literature.",
])
def test_front_matter_is_told(text):
    assert is_front_matter(text)


@pytest.mark.parametrize("text", [
    "The data are available from the corresponding author on reasonable request.",
    "There is a one-to-one correspondence between the knots and the basis functions.",
    "The package zoo is released under the GPL-2 licence and distributed through CRAN.",
    "The images are available under a Creative Commons CC BY 4.0 licence from the repository.",
    "The trial was run at the University of Florida between 2015 and 2017.",
    "Patients admitted to the hospital received enoxaparin within 24 hours.",
    "Relapse rates differed between RRMS, MS patients and controls in the second year",
    "Retrievable filters failed to be removed in 2.8% of trauma patients.",
    "Keywords matter less than citations when ranking the papers of a library.",
    "Keywords: " + "the list ran into the paragraph after it without a break, " * 5,
    "Research on heat stress in wheat has focused on yield and its components.",
    "Open access to the data made the replication possible.",
    "We cite this article as the source of the protocol.",
    "Received signal strength fell by 3 dB over the 2019 trials.",
    "Accepted models were refit on the full sample.",
    "Published estimates of the effect range from 0.2 to 0.5.",
])
def test_sentences_about_the_work_are_not_front_matter(text):
    assert not is_front_matter(text)


def test_focusing_keeps_the_abstract_and_drops_the_contact_line_beside_it():
    text = ("The failed retrieval rate is calculated to be 2.8%.\n\n"
            "* Correspondence: ball.chad@gmail.com 1Department of Surgery, University of Calgary, Calgary, Canada\n\n"
            "© 2010 Datta et al; licensee BioMed Central Ltd.\n\n"
            "Level one evidence supports low molecular weight heparins in trauma patients.")
    assert kept(text) == ["The failed retrieval rate is calculated to be 2.8%.",
                    "Level one evidence supports low molecular weight heparins in trauma patients."]


def test_focusing_drops_the_keyword_line_that_repeats_the_question():
    """The keyword line holds the question's words ("daily data", "weekly data") and outscored the
    sentence that answers; it is a list of topics, not a statement."""
    text = ("Keywords: irregular time series, daily data, weekly data, returns.\n\n"
            "Daily data are aggregated to weekly data with aggregate() and a function giving each date's Friday.")
    assert kept(text) == ["Daily data are aggregated to weekly data with aggregate() and a function giving each date's Friday."]


def test_focusing_drops_contact_and_history_lines_set_apart_as_blocks():
    """Set in short lines beside the abstract, a corresponding author's address and the editorial
    history are blocks, not sentences; they go all the same."""
    text = ("Worker wasps forage farther in warm weather than in cool weather.\n\n"
            "Corresponding author\nMary J. Rossi,\nm.rossi@example.ac.uk\n\n"
            "Received 25 July 2008\nAccepted 8 September 2008\n\n"
            "Foraging range rose by 40 % between 15 and 25 degrees.\n\n"
            "```\nPackage: wasps\nMaintainer: Mary Rossi <m.rossi@example.ac.uk>\n```")
    assert kept(text) == ["Worker wasps forage farther in warm weather than in cool weather.",
                    "Foraging range rose by 40 % between 15 and 25 degrees.",
                    "```\nPackage: wasps\nMaintainer: Mary Rossi <m.rossi@example.ac.uk>\n```"]  # a listing stays
