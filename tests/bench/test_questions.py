"""The bench's development / held-out split (bench/questions/split.json) stays honest.

Only what the repository carries: the question files, split.json, support-pairs.jsonl and, where
git is there, the commit messages and tracked files. The facts on their pages need the corpus and
PyMuPDF: `python3 bench/questions/check_heldout.py`.
"""

from __future__ import annotations

import sys

from tests.support.paths import REPO

QUESTIONS = REPO / "bench" / "questions"
sys.path.insert(0, str(QUESTIONS))

import check_heldout  # noqa: E402


def test_every_question_is_in_one_part_and_no_spent_id_is_held_out():
    # A held-out id named in a commit message or a tracked file, or whose answer was labelled,
    # is spent: it fails here until it is moved to development.
    errors: list[str] = []
    rows = check_heldout.load_questions(check_heldout.HELDOUT, errors)
    dev, held = check_heldout.check_split(rows, errors)
    assert errors == []
    assert len(rows) >= 30 and held >= len(rows) and dev > 0
