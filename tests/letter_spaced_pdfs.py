"""Moved to tests/support/letter_spaced_pdfs.py. This name stays only for bench/layout.py, which
the tests' re-layout did not change: it should import tests.support.letter_spaced_pdfs, and then
this file goes."""

from tests.support.letter_spaced_pdfs import *  # noqa: F401,F403
