"""The LanceDB caches of this process, bounded for a laptop.

LanceDB keeps index pages and table metadata it has read in a session's caches. Its default
session allows 6 GB of index pages and 1 GB of metadata; a library of 10,000 papers filled enough
of that, while one process wrote and indexed 450,000 passages, to pass 2 GB
(docs/lab/2026-12-07-library-memory.md). One session serves every library this process opens.
"""

from __future__ import annotations

import threading

from lancedb import Session

INDEX_CACHE_BYTES = 512 * 2**20  # index pages kept: a 10,000-paper library's vector and full-text indices fit
METADATA_CACHE_BYTES = 128 * 2**20  # manifests and fragment metadata kept

_session: Session | None = None
_lock = threading.Lock()


def shared_session() -> Session:
    """The process's one LanceDB session (made on first use)."""
    global _session
    with _lock:
        if _session is None:
            _session = Session(index_cache_size_bytes=INDEX_CACHE_BYTES, metadata_cache_size_bytes=METADATA_CACHE_BYTES)
        return _session
