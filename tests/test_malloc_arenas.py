"""The app bounds glibc's malloc arenas (app/malloc_arenas.py): a real LanceDB index build, which
spreads over many arenas in a plain Python process, stays within two once `app` is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas: Linux only")

BUILD = """
import ctypes, sys, tempfile
import numpy as np
if sys.argv[1] == "app":
    import app  # noqa: F401 - its import applies the process's policies
import lancedb
rng = np.random.default_rng(0)
words = np.array("kestrel departure valley logger adult young bird sahara route median date".split())
db = lancedb.connect(tempfile.mkdtemp())
table = db.create_table("t", [{"id": i, "text": " ".join(rng.choice(words, 40)),
                               "vector": rng.standard_normal(32).astype(np.float32)} for i in range(20000)])
table.create_fts_index("text")
table.create_index(metric="cosine", num_partitions=4, num_sub_vectors=4)
table.optimize()
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" block per arena, on stderr
"""


def _arenas(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", BUILD, mode], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def test_an_index_build_stays_within_two_arenas_once_the_app_is_imported():
    from app.malloc_arenas import ARENAS

    plain = _arenas("plain")
    if plain <= ARENAS:
        pytest.skip(f"this machine's build used {plain} arenas without the limit: nothing to show")
    assert 1 <= _arenas("app") <= ARENAS
