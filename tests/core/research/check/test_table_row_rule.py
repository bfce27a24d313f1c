"""A claim that reads a table row back is decided by the row (research/check/table_row_rule.py),
through the real support check with a real model: the row rule passes a right figure for its own
column, and a figure given for another column, another row or another group goes on to the rules
and the model as before."""

from __future__ import annotations

import pytest

from app.core.records import Evidence, Support
from app.core.research.check.support import Pair, check_pairs
from app.core.research.check.table_row_rule import states_row

ROW = ("Table 1 (page 8) · Female › Alzheimer · No. of cigarettes daily None: 91 · No. of cigarettes daily <10: 7 · "
       "No. of cigarettes daily 10–20: 15 · No. of cigarettes daily >20: 21")
WEIGHTS = ("Table 1 (page 8) · Analysis weights · Uncertainty in ATLAS results [GeV] H→γγ: 19% (22%) · "
           "Uncertainty in ATLAS results [GeV] H→ZZ: 18% (14%) · Uncertainty in CMS results [GeV] H→γγ: 40% (46%)")
TEAMS = ("Table 2 (page 6) · Thoracic surgery · Scrub nurses Median: 0.404 · Scrub nurses IQR: 0.291-0.453 · "
         "Circulating nurses Median: 0.355 · Circulating nurses IQR: 0.058-0.476")
# A row whose one value's column head was not read, its name set with the tables' "w/".
PUBMED = "Table 3 (page 5) · Papers w/ Pubmed IDs · 21.5M (26.5%)"
CLUSTERING = "Table 6 (page 6) · Paper clustering · Title: 0.93 · Authors: 0.89"
OURS = "Table 2 (page 5) · Our method · GPU: GTX 680 · Time per frame (ms): 41 · Error (%): 6.2"
# A column headed by an acronym (its footnote mark dropped: superscripts.py) that the claim spells out.
SPEED = "Table II (page 5) · Our Method · GPU: GeForce GTX 680 · MDE/s: 215.7 · FPS: 90 · Error: 6.20"
# Rows whose names nest: a claim about the model with augmentation names the second, not the first.
NESTED = ("Table 4 (page 7) · Baseline · Top-1 error (%): 12.4\n"
          "Table 4 (page 7) · Baseline + augmentation · Top-1 error (%): 9.8")
FRACTION = "Table 1 (page 4) · HF = n-hexane soluble fractions of the methanolic extract · LC50 (µg/ml): 2.17 ± 1.30"


def test_a_figure_for_its_own_row_and_column_is_stated_by_the_row():
    assert states_row("There are 21 female Alzheimer patients who smoked more than 20 cigarettes daily.", ROW)
    assert states_row("The CMS H→γγ analysis weight is 40%.", WEIGHTS)
    assert states_row("The n-hexane fraction gave an LC50 of 2.17 ± 1.30 µg/ml.", FRACTION)
    # the column named best: "circulating" and "median" (not every word of its header)
    assert states_row("The circulating nurses' median score for thoracic surgery was 0.355.", TEAMS)
    # "w/" said as "with" or left out, "IDs" as "ID"; a single value has no other column to mistake
    assert states_row("21.5M (26.5%) of the papers in the S2ORC corpus carry a PubMed ID.", PUBMED)
    # a plural stems apart from its singular ("titles", "Title"); a paper's "Our" row is its method
    assert states_row("S2ORC's paper clustering was 0.93 accurate when evaluated on titles.", CLUSTERING)
    assert states_row("The stereo matching method takes 41 ms a frame on the GTX 680.", OURS)
    # the claim spells out the column's acronym
    assert states_row("The temporal stereo matching method reaches 90 frames per second on a GeForce GTX 680.", SPEED)


def test_a_figure_for_another_column_row_or_group_is_not():
    assert not states_row("There are 15 female Alzheimer patients who smoked more than 20 cigarettes daily.", ROW)
    assert not states_row("There are 21 male Alzheimer patients who smoked more than 20 cigarettes daily.", ROW)
    assert not states_row("The CMS H→γγ analysis weight is 19%.", WEIGHTS)  # ATLAS's figure
    assert not states_row("Female Alzheimer patients: 21.", ROW)  # which column is not said
    assert not states_row("The scrub nurses' median score for thoracic surgery was 0.355.", TEAMS)
    assert not states_row("The chloroform fraction gave an LC50 of 2.17 µg/ml.", FRACTION)
    assert not states_row("26.5% of the papers carry a PMC ID.", PUBMED)  # another row's name
    assert not states_row("5.8% of the papers carry a PubMed ID.", PUBMED)  # a figure the row does not hold
    assert not states_row("S2ORC's paper clustering was 0.93 accurate when evaluated on authors.", CLUSTERING)
    assert not states_row("The stereo matching method reaches 6.20 frames per second.", SPEED)  # the error's figure
    assert not states_row("The baseline with augmentation had a top-1 error of 12.4 %.", NESTED)
    assert states_row("The baseline with augmentation had a top-1 error of 9.8 %.", NESTED)
    assert states_row("The baseline alone had a top-1 error of 12.4 %.", NESTED)


@pytest.mark.slow
def test_the_support_check_passes_a_right_row_claim_and_asks_the_model_about_the_others(tiny_models):
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.settings import ModelConfig

    row = Evidence(1, "lego", 8, "8", "Table 1", ROW, 0.5)
    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048))
    try:
        right = Pair("There are 21 female Alzheimer patients who smoked more than 20 cigarettes daily.", row)
        other_column = Pair("There are 15 female Alzheimer patients who smoked more than 20 cigarettes daily.", row)
        changed = Pair("There are 23 female Alzheimer patients who smoked more than 20 cigarettes daily.", row)
        check_pairs([right, other_column, changed], chat, context="How many female Alzheimer patients smoked heavily?")
    finally:
        chat.close()
    assert right.verdict == Support.SUPPORTED.value and "table row" in right.reason
    assert "table row" not in other_column.reason  # left to the model, whatever it says
    assert changed.verdict == Support.UNSUPPORTED.value and "23" in changed.reason  # the rules, as before


def test_a_row_opened_by_a_shared_setting_is_named_by_its_short_cells_and_a_column_by_initials():
    """DPR's Table 4 opens every row with its training set ("Single"), and the method stands in a
    cell of its own; its columns are initials ("WQ" for WebQuestions)."""
    row = ("Table 4 (page 8) · Single · Model: REALMNews (Guu et al., 2020) · NQ = Natural Questions: 40.4 · "
           "TriviaQA: - · WQ: 40.7 · TREC: 42.9 · SQuAD: -")
    assert states_row("The REALMNews model pretrained on CC-News reaches 40.7 exact match on WebQuestions.", row)
    assert not states_row("The REALMNews model reaches 40.4 exact match on WebQuestions.", row)  # NQ's figure
    assert not states_row("The REALMWiki model reaches 40.7 exact match on WebQuestions.", row)  # another row
    assert states_row("REALMNews reaches 40.4 on Natural Questions.", row)
