"""Candidate retrieval from LanceDB: vector or hybrid (BM25 + vector, fused by RRF).

LanceDB does the searching, the filtering (prefilter, so `paper_id IN (…)`
narrows the search rather than trimming its results) and the fusion
(`RRFReranker`). We only add what is ours: the cosine of each candidate to
the query, computed from the returned vectors, which the cutoff and MMR use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_COLUMNS = ("paper_id", "chunk_index", "source_type", "section", "text", "page", "page_label", "char_start", "char_end")


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
    rank: int  # position in LanceDB's result list


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
    if table is None or limit <= 0:
        return []
    rows: list[dict[str, Any]] | None = None
    if hybrid and query_text.strip():
        rows = _hybrid(table, query_vector, query_text, limit, where)
    if rows is None:
        q = table.search(query_vector.astype(np.float32), vector_column_name="vector").distance_type("cosine")
        if where:
            q = q.where(where, prefilter=True)
        rows = q.limit(limit).to_list()
    return [_candidate(i, row, query_vector) for i, row in enumerate(rows)]


def _hybrid(table, query_vector, query_text, limit, where) -> list[dict[str, Any]] | None:
    from lancedb.rerankers import RRFReranker

    try:
        q = (
            table.search(query_type="hybrid", vector_column_name="vector", fts_columns="text")
            .vector(query_vector.astype(np.float32))
            .text(_fts_safe(query_text))
            .distance_type("cosine")
        )
        if where:
            q = q.where(where, prefilter=True)
        return q.rerank(RRFReranker()).limit(limit).to_list()
    except Exception:  # noqa: BLE001 - no FTS index yet (or a query it cannot parse): vector only
        return None


def _fts_safe(text: str) -> str:
    """Strip characters the full-text query parser treats as syntax."""
    cleaned = "".join(ch if ch.isalnum() or ch in "-_ " else " " for ch in text)
    return " ".join(cleaned.split())


def _candidate(rank: int, row: dict[str, Any], query_vector: np.ndarray) -> Candidate:
    vector = np.asarray(row["vector"], dtype=np.float32)
    cosine = float(vector @ query_vector)
    relevance = float(row["_relevance_score"]) if "_relevance_score" in row else cosine
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
        vector=vector,
        cosine=cosine,
        relevance=relevance,
        rank=rank,
    )
