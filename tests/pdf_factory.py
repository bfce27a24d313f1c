"""Moved to tests/support/pdf_factory.py. This name stays only for the callers outside tests/
(bench/faults.py, packaging/smoke_bundle.py), which the tests' re-layout did not change: they
should import tests.support.pdf_factory, and then this file goes."""

from tests.support.pdf_factory import *  # noqa: F401,F403
