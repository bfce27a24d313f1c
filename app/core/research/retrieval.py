"""Candidate retrieval from LanceDB: vector or hybrid (BM25 + vector, fused by RRF).

LanceDB does the searching and the filtering (prefilter, so `paper_id IN (…)`
narrows the search rather than trimming its results). A hybrid search is two
LanceDB queries, a vector one and a full-text (BM25) one, fused by reciprocal
rank. We run the legs ourselves rather than through LanceDB's hybrid builder
because stage 1 needs two hybrid searches at once: all four legs go to one
kept thread pool together (LanceDB releases the GIL), where the builder made a
new pool per search and ran the searches one after another. On a 2-core
laptop that was half of stage 1's time. The fusion is the standard RRF
(score = Σ 1 / (K + rank)), the same formula as LanceDB's RRFReranker.

We also add the cosine of each candidate to the query, computed from the
returned vectors, which the cutoffs and MMR use.
"""

from __future__ import annotations

import atexit
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

RRF_K = 60  # the usual constant: ranks below ~60 matter little to the fused order
KEYWORD_KEEP = 5  # the best BM25 matches pass the cosine cutoff whatever their cosine

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="retrieval")
atexit.register(_POOL.shutdown, wait=False)


@dataclass
class Candidate:
    paper_id: str
    text: str
    section: str
    source_type: str
    chunk_index: int
    page: int
    page_label: str
    char_start: int
    char_end: int
    vector: np.ndarray
    cosine: float  # similarity to the query embedding
    relevance: float  # fused (hybrid) or cosine score; higher is better
    rank: int  # position in the result list
    text_rank: int | None = None  # position in the full-text (BM25) leg; None: not found by it

    def passes(self, cutoff: float) -> bool:
        """Similar enough to the query, or one of the best keyword matches.

        The cosine cutoff judges the embedding alone; a passage the BM25 leg ranks
        near the top carries the question's own terms, which a small embedding
        model can score low (measured: cutting those lost right pages).
        """
        return self.cosine >= cutoff or (self.text_rank is not None and self.text_rank < KEYWORD_KEEP)


@dataclass
class Request:
    """One search: `limit` best chunks of `table` for the query, optionally prefiltered."""

    table: Any
    query_vector: np.ndarray
    query_text: str
    limit: int
    where: str | None = None
    hybrid: bool = True


def search(
    table,
    query_vector: np.ndarray,
    query_text: str,
    *,
    limit: int,
    where: str | None = None,
    hybrid: bool = True,
) -> list[Candidate]:
    """Top `limit` candidates from `table`, best first."""
    return search_many([Request(table, query_vector, query_text, limit, where, hybrid)])[0]


def search_many(requests: list[Request]) -> list[list[Candidate]]:
    """Run several searches side by side; each result list is best first."""
    live = [r for r in requests if r.table is not None and r.limit > 0]
    fts_legs: dict[int, Future] = {}
    for r in live:
        text = _fts_safe(r.query_text) if r.hybrid else ""
        if text:
            fts_legs[id(r)] = _POOL.submit(_fts_leg, r, text)
    vector_legs = {id(r): _POOL.submit(_vector_leg, r) for r in live}
    results: list[list[Candidate]] = []
    for r in requests:
        if id(r) not in vector_legs:
            results.append([])
            continue
        vector_rows = vector_legs[id(r)].result()
        fts_rows = fts_legs[id(r)].result() if id(r) in fts_legs else None
        results.append(_fuse(vector_rows, fts_rows, r))
    return results


def _vector_leg(r: Request) -> pa.Table:
    q = r.table.search(r.query_vector.astype(np.float32), vector_column_name="vector").distance_type("cosine")
    if r.where:
        q = q.where(r.where, prefilter=True)
    return q.limit(r.limit).to_arrow()


def _fts_leg(r: Request, text: str) -> pa.Table | None:
    try:
        q = r.table.search(text, query_type="fts", fts_columns="text")
        if r.where:
            q = q.where(r.where, prefilter=True)
        return q.limit(r.limit).to_arrow()
    except Exception:  # noqa: BLE001 - no FTS index yet (or a query it cannot parse): vector only
        return None


def _fuse(vector_rows: pa.Table, fts_rows: pa.Table | None, r: Request) -> list[Candidate]:
    """Reciprocal-rank fusion of the two legs (vector order alone without a text leg)."""
    rows: dict[str, dict[str, Any]] = {}
    score: dict[str, float] = {}
    text_rank: dict[str, int] = {}
    for table in (vector_rows, fts_rows):
        if table is None:
            continue
        for rank, row in enumerate(_rows(table)):
            key = row["id"]
            rows.setdefault(key, row)
            score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + rank)
            if table is fts_rows:
                text_rank[key] = rank
    qv = r.query_vector.astype(np.float32)
    fused = fts_rows is not None
    ranked = sorted(rows, key=lambda k: -score[k]) if fused else list(rows)
    out = []
    for rank, key in enumerate(ranked[: r.limit]):
        row = rows[key]
        cosine = float(row["vector"] @ qv)
        out.append(_candidate(rank, row, cosine, score[key] if fused else cosine, text_rank.get(key)))
    return out


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as dicts, with the vector as a numpy array (not a Python list of floats)."""
    if table.num_rows == 0:
        return []
    vectors = table.column("vector").combine_chunks()
    dim = vectors.type.list_size
    matrix = vectors.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
    rows = table.drop_columns(["vector"]).to_pylist()
    for row, vec in zip(rows, matrix):
        row["vector"] = vec
    return rows


def _fts_safe(text: str) -> str:
    """Strip characters the full-text query parser treats as syntax."""
    cleaned = "".join(ch if ch.isalnum() or ch in "-_ " else " " for ch in text)
    return " ".join(cleaned.split())


def _candidate(rank: int, row: dict[str, Any], cosine: float, relevance: float, text_rank: int | None) -> Candidate:
    return Candidate(
        paper_id=row["paper_id"],
        text=row["text"],
        section=row.get("section") or "",
        source_type=row.get("source_type") or "content",
        chunk_index=int(row.get("chunk_index") or 0),
        page=int(row.get("page") or 0),
        page_label=row.get("page_label") or "",
        char_start=int(row.get("char_start") or 0),
        char_end=int(row.get("char_end") or 0),
        vector=np.asarray(row["vector"], dtype=np.float32),
        cosine=cosine,
        relevance=relevance,
        rank=rank,
        text_rank=text_rank,
    )
