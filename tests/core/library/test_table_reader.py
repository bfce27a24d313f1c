"""The search read path (app/core/library/table_reader.py) on real LanceDB tables.

Every vector-search path must agree with a brute-force ranking over all rows; the
kept snapshot must follow writes; details must come back for the right rows.
"""

from __future__ import annotations

import lance
import numpy as np
import pytest
from lancedb.index import HnswSq

from app.core.library import table_reader
from app.core.library.store import CONTENT_CHUNKS, Library
from app.core.records import Chunk
from app.core.research.evidence import retrieval

DIM = 16
PAPERS = [f"p{i}" for i in range(6)]
PER_PAPER = 40


def _chunks(start: int, count: int, paper: str | None = None) -> list[Chunk]:
    out = []
    for i in range(start, start + count):
        pid = paper or PAPERS[i % len(PAPERS)]
        out.append(Chunk(pid, i, f"chunk {i} of {pid} about topic{i % 7}", page=1 + i % 9, section=f"S{i % 3}",
                         source_type="content", char_start=i, char_end=i + 10))
    return out


def _vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def library(tmp_path) -> tuple[Library, list[Chunk], np.ndarray]:
    lib = Library(tmp_path / "lib")
    chunks = _chunks(0, len(PAPERS) * PER_PAPER)
    vectors = _vectors(len(chunks), 1)
    lib.append_chunks(CONTENT_CHUNKS, chunks, vectors)
    lib.finish_writes()
    return lib, chunks, vectors


def _brute_force(chunks, vectors, q, limit, papers=None) -> list[str]:
    keep = [i for i, c in enumerate(chunks) if papers is None or c.paper_id in papers]
    sims = vectors[keep] @ q
    order = np.argsort(-sims, kind="stable")[:limit]
    return [chunks[keep[i]].text for i in order]


def _texts(snap, hits) -> list[str]:
    details = snap.details(hits.column("_rowid").to_pylist())
    return [details[r]["text"] for r in hits.column("_rowid").to_pylist()]


def test_in_memory_search_is_the_exact_ranking(library):
    lib, chunks, vectors = library
    snap = table_reader.snapshot(lib.chunks_table(CONTENT_CHUNKS))
    assert not snap.has_vector_index
    for seed in range(5):
        q = _vectors(1, 100 + seed)[0]
        assert _texts(snap, snap.nearest(q, 12)) == _brute_force(chunks, vectors, q, 12)
        within = ["p1", "p4"]
        assert _texts(snap, snap.nearest(q, 12, within)) == _brute_force(chunks, vectors, q, 12, within)
    assert snap._vectors is not None, "a small table is searched from memory"
    assert snap.nearest(q, 5, ["no-such-paper"]).num_rows == 0


def test_indexed_table_filtered_search_is_exact_and_ann_is_reranked(library):
    lib, chunks, vectors = library
    table = lib.chunks_table(CONTENT_CHUNKS)
    table.create_index("vector", config=HnswSq(distance_type="cosine", num_partitions=2))
    snap = table_reader.snapshot(table)
    assert snap.has_vector_index, "the new index is a new table version: the snapshot follows it"
    q = _vectors(1, 7)[0]
    within = ["p0", "p3", "p5"]
    assert _texts(snap, snap.nearest(q, 10, within)) == _brute_force(chunks, vectors, q, 10, within)
    hits = snap.nearest(q, 10)
    sims = table_reader.vector_matrix(hits) @ q
    assert list(sims) == sorted(sims, reverse=True), "ANN hits come back in exact-cosine order"
    exact = set(_brute_force(chunks, vectors, q, 10))
    assert len(exact & set(_texts(snap, hits))) >= 8, "the index finds most of the true neighbours"


def test_full_text_hits_and_their_details(library):
    lib, chunks, _ = library
    snap = table_reader.snapshot(lib.chunks_table(CONTENT_CHUNKS))
    hits = snap.full_text("topic3", 50)
    texts = _texts(snap, hits)
    assert texts and all("topic3" in t for t in texts)
    assert len(texts) == sum("topic3" in c.text for c in chunks)
    within = snap.full_text("topic3", 50, ["p2"])
    assert set(within.column("paper_id").to_pylist()) == {"p2"}
    row = snap.details(hits.column("_rowid").to_pylist()[:1])
    (detail,) = row.values()
    chunk = next(c for c in chunks if c.text == detail["text"])
    assert (detail["page"], detail["section"], detail["char_start"]) == (chunk.page, chunk.section, chunk.char_start)


def test_details_fall_back_to_a_row_id_filter(library, monkeypatch):
    lib, _, _ = library
    snap = table_reader.snapshot(lib.chunks_table(CONTENT_CHUNKS))
    row_ids = snap.full_text("topic5", 5).column("_rowid").to_pylist()
    expected = snap.details(row_ids)

    def missing(*args, **kwargs):
        raise AttributeError("_take_rows")

    monkeypatch.setattr(lance.LanceDataset, "_take_rows", missing)
    assert snap.details(row_ids) == expected


def test_snapshot_follows_writes_from_another_connection(library, tmp_path):
    lib, chunks, vectors = library
    table = lib.chunks_table(CONTENT_CHUNKS)
    before = table_reader.snapshot(table)
    before.nearest(vectors[0], 3)  # loads the in-memory vectors of this version
    other = Library(tmp_path / "lib")  # a second process, as far as LanceDB knows
    new = _chunks(10_000, 3, paper="p-new")
    new_vectors = _vectors(3, 99)
    other.append_chunks(CONTENT_CHUNKS, new, new_vectors)
    after = table_reader.snapshot(table)
    assert after.version > before.version
    assert _texts(after, after.nearest(new_vectors[1], 1)) == [new[1].text]
    assert table_reader.snapshot(table) is after, "kept while the table does not change"
    # Deleted rows never come back, from memory or from disk.
    other.delete_chunks(CONTENT_CHUNKS, "p-new")
    latest = table_reader.snapshot(table)
    assert "p-new" not in latest.nearest(new_vectors[1], 300).column("paper_id").to_pylist()


def test_hybrid_search_fuses_both_legs_and_reads_details_once(library):
    lib, chunks, vectors = library
    table = lib.chunks_table(CONTENT_CHUNKS)
    q = vectors[17]  # the vector of chunk 17 itself, whose text says topic3
    found = retrieval.search(table, q, "topic3", limit=10)
    assert found[0].text == chunks[17].text and found[0].cosine == pytest.approx(1.0, abs=1e-5)
    assert found[0].text_rank is not None, "chunk 17 is also a full-text match"
    assert all(c.text and c.page for c in found)
    light = retrieval.search_many([retrieval.Request(table, q, "topic3", 10, details=False)])[0]
    assert [c.paper_id for c in light] == [c.paper_id for c in found]
    assert all(c.text == "" for c in light)
    started = retrieval.start([retrieval.Request(table, None, "topic3", 10)])
    assert [c.text for c in started.finish(q)[0]] == [c.text for c in found]


def test_numpy_blas_runs_one_thread():
    """A spinning OpenBLAS worker thread took a whole core from the searches (app/blas_threads.py)."""
    import threadpoolctl  # a dependency of the app (pyproject.toml)

    import app  # noqa: F401 - the package applies the limit on import

    blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
    assert blas and all(p["num_threads"] == 1 for p in blas)


def test_library_indexes_vectors_above_the_threshold(tmp_path, monkeypatch):
    monkeypatch.setattr(Library, "VECTOR_INDEX_MIN_ROWS", 200)
    lib = Library(tmp_path / "lib")
    chunks = _chunks(0, 240)
    lib.append_chunks(CONTENT_CHUNKS, chunks, _vectors(240, 3))
    lib.finish_writes()
    table = lib.chunks_table(CONTENT_CHUNKS)
    kinds = {i.index_type for i in table.list_indices()}
    assert {"Bitmap", "FTS", "IvfHnswSq"} <= kinds
    assert table_reader.snapshot(table).has_vector_index
