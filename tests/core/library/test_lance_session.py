"""Every library of a process reads through one LanceDB session whose caches are bounded
(app/core/library/lance_session.py), not LanceDB's default of 6 GB of index pages and 1 GB of metadata."""

from __future__ import annotations

import numpy as np

from app.core.library.lance_session import INDEX_CACHE_BYTES, METADATA_CACHE_BYTES, shared_session
from app.core.library.store import CONTENT_CHUNKS, Library
from app.core.records import Chunk


def _library(root, seed: int) -> Library:
    lib = Library(root)
    chunks = [Chunk("p1", i, f"passage {i} on kestrel departure dates", page=1 + i % 5, section="Results",
                    source_type="content", char_start=i, char_end=i + 10) for i in range(60)]
    v = np.random.default_rng(seed).standard_normal((len(chunks), 16)).astype(np.float32)
    lib.append_chunks(CONTENT_CHUNKS, chunks, v / np.linalg.norm(v, axis=1, keepdims=True))
    lib.finish_writes()
    return lib


def test_the_librarys_reads_fill_the_shared_bounded_session(tmp_path):
    before = shared_session().approx_num_items
    first, second = _library(tmp_path / "a", 1), _library(tmp_path / "b", 2)
    for lib in (first, second):
        table = lib.chunks_table(CONTENT_CHUNKS)
        assert table.search(np.ones(16, dtype=np.float32)).limit(5).to_list()
        assert table.search("kestrel", query_type="fts").limit(5).to_list()
    assert shared_session().approx_num_items > before  # the libraries' metadata and index pages are cached there
    assert shared_session() is shared_session()
    assert shared_session().size_bytes <= INDEX_CACHE_BYTES + METADATA_CACHE_BYTES
