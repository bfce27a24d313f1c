"""The repository's and the test data's folders, computed once from this file's place
(tests/support/paths.py): a test imports these instead of counting `parents[…]` from its own
file, which moves when the tests are re-laid out."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
DATA = TESTS / "data"  # the tests' data files (tests/data/)
# Reference outputs of the upstream MiniLM converter and model (copied from the team share).
REFERENCE = DATA / "reference"
