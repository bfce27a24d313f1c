"""One reader of "long form (ABBR)" for the table reader, focusing and the manuscript check (acronyms.py)."""

from __future__ import annotations

import pytest

from app.core.text.acronyms import definitions


@pytest.mark.parametrize("text, expected", [
    ("Surgeon-scrub (SS) and surgeon-circulator (SC) teaming scores were calculated.",
     {"SS": "Surgeon-scrub", "SC": "surgeon-circulator"}),
    ("Retrievable inferior vena cava (IVC) filters were placed.", {"IVC": "inferior vena cava"}),
    ("the US Food and Drug Administration (FDA) approved it", {"FDA": "Food and Drug Administration"}),
    ("images from the Dark Energy Camera (DECam) and near-Earth objects (NEOs)",
     {"DECam": "Dark Energy Camera", "NEOs": "near-Earth objects"}),
    # connectors between the spelled words, unspelled; a hyphen parts a word
    ("the Ministry of Health (MoH) and near-Earth objects (NEOs); mean (SD); 12 mg (MG)",
     {"MoH": "Ministry of Health", "NEOs": "near-Earth objects"}),
    # a connector that spells a letter of its own, as a word or inside one
    ("clusters and networks of workstations (NOW) were used", {"NOW": "networks of workstations"}),
    ("a time-of-flight (TOF) detector", {"TOF": "time-of-flight"}),
    # ligatures, as PDFs set "fi" and "fl", read as their letters
    ("with rectiﬁed linear units (ReLUs) and zero-inﬂated Poisson (ZIP) models",
     {"ReLUs": "rectified linear units", "ZIP": "zero-inflated Poisson"}),
    # quotes, commas and a possessive are not part of the long form
    ("the ‘Moscow Engineering Physics Institute’ (MEPhI), and the Standard Template Library’s (STL) vector",
     {"MEPhI": "Moscow Engineering Physics Institute", "STL": "Standard Template Library"}),
    # the first definition stands
    ("cell membrane stability (CMS) … the CMS channel (CMS)", {"CMS": "cell membrane stability"}),
])
def test_the_words_before_a_bracket_that_spell_it_are_its_long_form(text, expected):
    assert definitions(text) == expected


@pytest.mark.parametrize("text", [
    "as shown before (Table) and after (HC3)",  # not spelled by the words before it
    "the estimator of the model (M) was used",  # one letter is not an acronym
    "a new treatment protocol (GLM) was tried",  # the words before spell TP, not GLM
    "the model re-estimates the (RE) terms",  # a connector never ends the long form
    "the chloroform extract (HX)",  # the initials spell CE, not HX
    "fitted to 12 samples (NS)",  # a figure ends the search
])
def test_a_bracket_the_words_before_do_not_spell_defines_nothing(text):
    assert definitions(text) == {}
