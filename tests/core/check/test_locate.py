"""Finding a claim's support anywhere in the cited paper (check/locate.py, check/judge.py):
numbers a sentence or two apart, numbers stated elsewhere in the paper, what the model
reads, what a partial verdict says, and figures held to their own item. Rows stand in for the paper's
LanceDB content rows (read_paper reads them with a paper_id filter)."""

from __future__ import annotations

import numpy as np

from app.core.check.judge import PARTIAL_NOTE, model_reads, rule_ruling
from app.core.check.locate import around, best_windows, paper_from_rows

CAVITY = [
    (1, "Tuner test", "The tuner was installed on the dressed cavity. The piezo actuators were preloaded by stretching the "
                      "cavity. The safety gap was set during tuner assembly."),
    (2, "Microphonics", "During the test no resources were available to suppress external vibration, and the overall level "
                        "of microphonics was ~400 Hz peak. The LLRF system captured the detuning continuously for several "
                        "minutes. A spectrogram of the cavity microphonics is shown in Fig. 6. For reference, the "
                        "microphonics budget for the cavity is just 30 Hz peak."),
    (3, "Summary", "Measured cavity frequency shift during cool-down was 6.5 MHz. Thirteen tuners were tested in total."),
]


def _paper():
    rows = []
    for k, (page, section, text) in enumerate(CAVITY):
        vec = np.zeros(8, dtype=np.float32)
        vec[k] = 1.0
        rows.append({"paper_id": "cavity", "page": page, "page_label": str(page), "section": section, "text": text,
                     "char_start": 0, "char_end": len(text), "vector": vec})
    return paper_from_rows("cavity", rows)


def _rule(claim: str):
    paper = _paper()
    windows = best_windows(claim, np.ones(8, dtype=np.float32) / np.sqrt(8), paper, None)
    return rule_ruling(claim, windows, paper, "Tuner testing of a dressed cavity"), windows, paper


def test_numbers_three_sentences_apart_are_found_before_the_check_says_not_stated():
    ruling, _, _ = _rule("The microphonics of the cavity reached about 400 Hz peak, against a budget of just 30 Hz.")
    assert ruling.verdict != "unsupported"
    assert "400 Hz" in ruling.window.text and "30 Hz" in ruling.window.text and ruling.window.evidence.page == 2


def test_a_number_the_paper_never_states_is_still_not_found():
    ruling, _, _ = _rule("The microphonics of the cavity reached about 400 Hz peak, against a budget of just 80 Hz.")
    assert ruling.verdict == "unsupported" and "80" in ruling.reason


def test_a_number_stated_outside_the_best_windows_is_found_in_the_whole_paper():
    ruling, windows, _ = _rule("Thirteen tuners were tested and the frequency shift in cool-down was 6.5 MHz.")
    assert ruling.verdict != "unsupported" and ruling.window.evidence.page == 3


def test_the_model_reads_the_window_with_its_neighbours_then_another_place():
    paper = _paper()
    claim = "The LLRF system captured the cavity detuning for several minutes."
    windows = best_windows(claim, np.ones(8, dtype=np.float32), paper, None)
    reads = model_reads(windows[0], windows, paper)
    assert reads[0].text.startswith("During the test") or "400 Hz" in reads[0].text  # the sentence before it too
    assert "LLRF" in reads[0].text and len(reads) <= 2
    if len(reads) == 2:
        assert "LLRF" not in reads[1].text  # the second read is elsewhere


def test_around_grows_within_the_passage_only():
    paper = _paper()
    w = best_windows("Thirteen tuners were tested in total.", np.ones(8, dtype=np.float32), paper, None)[0]
    grown = around(paper, w, 3, 3)
    assert grown.evidence.page == 3 and grown.text.startswith("Measured") and grown.text.endswith("in total.")


def test_missing_words_send_a_paraphrase_to_the_model_and_never_make_it_partial():
    # "recorded … without a break" for "captured … continuously": a paraphrase lacks the passage's words
    ruling, _, _ = _rule("The low-level RF system recorded the detuning of the cavity without a break for minutes.")
    assert ruling.verdict == ""  # the model reads it: no rule marks it partial (or anything else) for its words
    assert "recorded" not in PARTIAL_NOTE and "does not state" not in PARTIAL_NOTE


PARTITION = [(2, "Extraction", "A portion (5 g) of the concentrated methanol extract was fractionated by the modified "
                               "Kupchan partitioning method. Evaporation of solvents afforded n-hexane (1.50 g), carbon "
                               "tetrachloride (0.70 g), chloroform (1.30 g) and aqueous soluble (1.2 g) materials.")]


def _partition_rule(claim: str):
    rows = [{"paper_id": "palm", "page": 2, "page_label": "2", "section": PARTITION[0][1], "text": PARTITION[0][2],
             "char_start": 0, "char_end": len(PARTITION[0][2]), "vector": np.ones(8, dtype=np.float32)}]
    paper = paper_from_rows("palm", rows)
    windows = best_windows(claim, np.ones(8, dtype=np.float32) / np.sqrt(8), paper, None)
    return rule_ruling(claim, windows, paper, "Phytochemical investigations of a palm")


def test_values_given_respectively_are_held_to_their_own_item():
    right = _partition_rule("Partitioning 5 g of the extract gave 1.50 g, 0.70 g, 1.30 g and 1.2 g of n-hexane, carbon "
                            "tetrachloride, chloroform and aqueous soluble material, respectively.")
    assert right.verdict != "unsupported", right.reason  # each figure is its own item's, whatever name stands before it
    swapped = _partition_rule("Partitioning gave 0.70 g of n-hexane and 1.50 g of carbon tetrachloride soluble material, "
                              "respectively.")
    assert swapped.verdict == "unsupported" and "carbon tetrachloride" in swapped.reason
    listed = _partition_rule("Partitioning gave 1.50 g and 0.70 g of carbon tetrachloride and n-hexane soluble material, "
                             "respectively.")
    assert listed.verdict == "unsupported" and "1.5" in listed.reason


def test_an_acronym_the_paper_spells_out_is_a_name_it_mentions():
    text = ("The method has been used to develop novel inhibitor scaffolds of thrombin, human immunodeficiency virus "
            "protease and influenza neuraminidase.")
    rows = [{"paper_id": "ace", "page": 7, "page_label": "7", "section": "Discussion", "text": text, "char_start": 0,
             "char_end": len(text), "vector": np.ones(8, dtype=np.float32)}]
    paper = paper_from_rows("ace", rows)
    claim = "The method earlier produced new inhibitor scaffolds for thrombin, HIV protease and influenza neuraminidase."
    windows = best_windows(claim, np.ones(8, dtype=np.float32) / np.sqrt(8), paper, None)
    ruling = rule_ruling(claim, windows, paper, "Fragment-based design of inhibitors")
    assert "never mentions" not in ruling.reason
    wrong = "The method earlier produced new inhibitor scaffolds for thrombin, HCV protease and influenza neuraminidase."
    assert "never mentions hcv" in rule_ruling(wrong, windows, paper, "Fragment-based design of inhibitors").reason


def test_a_rule_family_switched_off_leaves_its_pair_to_the_next_family_or_the_judge(monkeypatch):
    """bench/check.py --without NAME (the ablation): judge.OFF holds the families switched off."""
    from app.core.check import judge

    text = ("The method has been used to develop novel inhibitor scaffolds of thrombin, human immunodeficiency virus "
            "protease and influenza neuraminidase.")
    rows = [{"paper_id": "ace", "page": 7, "page_label": "7", "section": "Discussion", "text": text, "char_start": 0,
             "char_end": len(text), "vector": np.ones(8, dtype=np.float32)}]
    paper = paper_from_rows("ace", rows)
    wrong = "The method earlier produced new inhibitor scaffolds for thrombin, HCV protease and influenza neuraminidase."
    windows = best_windows(wrong, np.ones(8, dtype=np.float32) / np.sqrt(8), paper, None)
    assert [name for name, _, _ in judge.FAMILIES].count("names") == 1
    assert "never mentions hcv" in rule_ruling(wrong, windows, paper, "Fragment-based design of inhibitors").reason
    monkeypatch.setattr(judge, "OFF", {"names"})
    assert rule_ruling(wrong, windows, paper, "Fragment-based design of inhibitors").verdict == ""
