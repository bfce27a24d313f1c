"""Bound glibc's malloc arenas to two a process (Linux).

glibc gives a thread that finds the arenas busy an arena of its own, up to eight a core, and keeps
the memory freed in an arena for that arena's later use. LanceDB's index and compaction threads
each allocate large, short-lived buffers, so a process that builds a library's indices ends with
memory held in many arenas: a 2,000-paper build peaked at 1,138 MB, and at 998 MB with two arenas,
in the same time (docs/lab/2026-12-07-library-memory.md). A MALLOC_ARENA_MAX the user set wins.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_ARENA_MAX = -8  # mallopt's parameter number, from glibc's malloc.h
ARENAS = 2


def limit_malloc_arenas() -> bool:
    """Ask glibc for at most `ARENAS` arenas; False where this is not glibc or the user chose."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no such knob): its allocator as it is
        return False
    return bool(mallopt(M_ARENA_MAX, ARENAS))
