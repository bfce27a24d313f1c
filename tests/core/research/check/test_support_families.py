"""The answer check's rule families (research/check/support_rules.FAMILIES): each decides the case it
is for, and switched off (as bench/support.py --without does) leaves that case to the families after
it or to the model — the switch the ablation in docs/research.md rests on."""

from __future__ import annotations

import pytest

from app.core.records import Support
from app.core.research.check import support_rules
from app.core.research.check.support_rules import FAMILIES, check_specifics

KESTRELS = ("Young kestrels departed 9 days later than adults. Nest failure rose from 12% to 30% after the drought. "
            "The median specialty scores were higher for scrubs than circulators. Fifteen participants took part, "
            "seven from the rural hospital and eight from the urban hospital.")
ROW = ("Table 1 (page 8) · Female › Alzheimer · No. of cigarettes daily None: 91 · No. of cigarettes daily <10: 7 · "
       "No. of cigarettes daily 10–20: 15 · No. of cigarettes daily >20: 21")

# family: (claim, passage, what the family makes of it)
CASES = {
    "reason": ("Nest failure rose from 12% to 30% after the drought because the colony moved inland.", KESTRELS,
               Support.PARTIAL.value),
    "figures": ("Young kestrels departed 11 days later than adults.", KESTRELS, Support.UNSUPPORTED.value),
    "respectively": ("Of the fifteen participants, eight came from the rural hospital and seven from the urban hospital.",
                     KESTRELS, Support.UNSUPPORTED.value),
    "direction": ("Young kestrels departed 9 days earlier than adults.", KESTRELS, Support.UNSUPPORTED.value),
    "names": ("Young Falco naumanni departed 9 days later than adults.", KESTRELS, Support.UNSUPPORTED.value),
    "table-row": ("There are 21 female Alzheimer patients who smoked more than 20 cigarettes daily.", ROW,
                  Support.SUPPORTED.value),
}


@pytest.fixture
def off():
    yield support_rules.OFF
    support_rules.OFF.clear()


def test_every_family_has_a_case_and_a_name_of_its_own():
    names = [name for name, _, _ in FAMILIES]
    assert len(names) == len(set(names)) and set(names) == set(CASES)
    assert all(decides.split(":")[0] in {"partial", "unsupported", "supported, without the model"} for _, decides, _ in FAMILIES)


@pytest.mark.parametrize("name", list(CASES))
def test_a_family_decides_its_case_and_switched_off_leaves_it(name, off):
    claim, passage, verdict = CASES[name]
    on = check_specifics(claim, passage, quote=passage)
    assert on.cap == verdict and on.reason
    assert on.settled == (name == "table-row")
    off.add(name)
    without = check_specifics(claim, passage, quote=passage)
    # Switched off, the case goes to the model whole (cap "supported", nothing settled): no other family decides it.
    assert (without.cap, without.settled, without.judged) == (Support.SUPPORTED.value, False, ""), without.reason


def test_the_comparison_turned_round_is_the_direction_familys(off):
    claim = "The median specialty scores were higher for circulators than scrubs."
    assert check_specifics(claim, KESTRELS).contradicts
    off.add("direction")
    assert check_specifics(claim, KESTRELS).cap == Support.SUPPORTED.value
