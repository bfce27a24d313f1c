"""Candidate retrieval: vector or hybrid (BM25 + vector, fused by reciprocal rank, as LanceDB's
RRFReranker does).

The legs run on the table's Lance dataset (`table_reader`) in one kept thread pool, so that stage
1's two hybrid searches run all four legs at once (Lance releases the GIL). A paper filter narrows
the search (prefilter) rather than trimming its results. The legs read only each hit's paper and
vector (the cosine to the query is computed from it); text and metadata are read once, for the
fused result only.
"""

from __future__ import annotations

import atexit
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ...library.table_reader import ROW_ID, Snapshot, snapshot, vector_matrix
from ...text.wording import plural
from ...units import LOW_RANK, LOW_ROW_UNIT, TABLE_TYPES

log = logging.getLogger(__name__)

RRF_K = 60  # the usual constant: ranks below ~60 matter little to the fused order
KEYWORD_KEEP = 5  # the best BM25 matches pass the cosine cutoff whatever their cosine

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="retrieval")
atexit.register(_POOL.shutdown, wait=False)


@dataclass
class Candidate:
    """One chunk found by a search. Without `details` (see `Request`) only the paper,
    vector, scores and ranks are set: the text and metadata are left empty."""

    paper_id: str
    vector: np.ndarray
    cosine: float  # similarity to the query embedding
    relevance: float  # fused (hybrid) or cosine score; higher is better
    rank: int  # position in the result list
    text_rank: int | None = None  # position in the full-text (BM25) leg; None: not found by it
    text: str = ""
    section: str = ""
    chunk_index: int = 0
    page: int = 0
    page_label: str = ""
    char_start: int = 0
    char_end: int = 0
    source_type: str = ""  # "content", or a table's unit (tables.TABLE_TYPES)
    table_no: str = ""
    rect: tuple[float, float, float, float] | None = None  # a table row's rectangle on the page

    @property
    def vector_pending(self) -> bool:
        """A chunk of a "words" paper: found by its words, its vector not computed yet (cosine 0)."""
        return not self.vector.any()

    def passes(self, cutoff: float) -> bool:
        """Similar enough to the query, or one of the best keyword matches.

        The cosine cutoff judges the embedding alone; a passage the BM25 leg ranks
        near the top carries the question's own terms, which a small embedding
        model can score low (measured: cutting those lost right pages). A chunk
        without its vector yet has no cosine to judge: the BM25 leg finding it is
        what it has.
        """
        if self.vector_pending:
            return self.text_rank is not None
        return self.cosine >= cutoff or (self.text_rank is not None and self.text_rank < KEYWORD_KEEP)


@dataclass
class Request:
    """One search: the `limit` best chunks of `table` for the query, optionally within `papers`.

    `details=False` skips reading the chunks' text and metadata (stage 1 only needs
    to know which papers match). `query_vector` may be left out when the searches are
    started before the query is embedded (see `start`)."""

    table: Any
    query_vector: np.ndarray | None
    query_text: str
    limit: int
    papers: list[str] | None = None
    hybrid: bool = True
    details: bool = True


def search(
    table,
    query_vector: np.ndarray,
    query_text: str,
    *,
    limit: int,
    papers: list[str] | None = None,
    hybrid: bool = True,
) -> list[Candidate]:
    """Top `limit` candidates from `table` (within `papers` if given), best first."""
    return search_many([Request(table, query_vector, query_text, limit, papers, hybrid)])[0]


def search_many(requests: list[Request]) -> list[list[Candidate]]:
    """Run several searches side by side; each result list is best first."""
    return start(requests).finish()


def start(requests: list[Request]) -> Searches:
    """Start the full-text legs of `requests` now; `finish` runs the vector legs.

    The full-text legs need no query vector, so they can run while the caller embeds
    the query (on a 2-core laptop the embedding leaves the other core idle).
    """
    return Searches(requests)


class Searches:
    """Searches under way (see `start`)."""

    def __init__(self, requests: list[Request]) -> None:
        self.requests = requests
        self._live = [r for r in requests if r.table is not None and r.limit > 0 and r.papers != []]
        self._snapshots = {id(r): snapshot(r.table) for r in self._live}
        self._text_legs: dict[int, Future] = {}
        for r in self._live:
            text = _fts_safe(r.query_text) if r.hybrid else ""
            if text:
                self._text_legs[id(r)] = _POOL.submit(_fts_leg, self._snapshots[id(r)], r, text)

    def finish(self, query_vector: np.ndarray | None = None) -> list[list[Candidate]]:
        """Each request's candidates, best first; `query_vector` for requests without one."""
        vectors = {id(r): np.asarray(r.query_vector if r.query_vector is not None else query_vector, dtype=np.float32)
                   for r in self._live}
        vector_legs = {id(r): _POOL.submit(self._snapshots[id(r)].nearest, vectors[id(r)], r.limit, r.papers)
                       for r in self._live}
        results: list[list[Candidate]] = []
        for r in self.requests:
            if id(r) not in vector_legs:
                results.append([])
                continue
            text_leg = self._text_legs.get(id(r))
            found = _fuse(vector_legs[id(r)].result(), text_leg.result() if text_leg else None, vectors[id(r)], r.limit)
            if r.details:
                _add_details(found, self._snapshots[id(r)])
                found.sort(key=lambda t: -t[1].relevance)  # stable: only low-ranked table rows move
            results.append([c for _, c in found])
        return results


def _fts_leg(snap: Snapshot, r: Request, text: str) -> pa.Table | None:
    try:
        return snap.full_text(text, r.limit, r.papers)
    except Exception as exc:  # noqa: BLE001 - no FTS index yet (or a query it cannot parse): vector only, on purpose
        log.debug("full-text leg unavailable for %r (%s); vector search only", text[:80], exc)
        return None


def _fuse(vector_hits: pa.Table, text_hits: pa.Table | None, qv: np.ndarray, limit: int) -> list[tuple[int, Candidate]]:
    """Reciprocal-rank fusion of the two legs (vector order alone without a text leg).

    Returns (row id, candidate) pairs, best first.
    """
    hits: dict[int, tuple[str, np.ndarray]] = {}
    score: dict[int, float] = {}
    text_rank: dict[int, int] = {}
    for table in (vector_hits, text_hits):
        if table is None or table.num_rows == 0:
            continue
        row_ids = table.column(ROW_ID).to_pylist()
        for rank, (row_id, paper_id, vector) in enumerate(zip(row_ids, table.column("paper_id").to_pylist(), vector_matrix(table))):
            hits.setdefault(row_id, (paper_id, vector))
            score[row_id] = score.get(row_id, 0.0) + 1.0 / (RRF_K + rank)
            if table is text_hits:
                text_rank[row_id] = rank
    fused = text_hits is not None
    ranked = sorted(hits, key=lambda k: -score[k]) if fused else list(hits)
    out = []
    for rank, row_id in enumerate(ranked[:limit]):
        paper_id, vector = hits[row_id]
        cosine = float(vector @ qv)
        out.append((row_id, Candidate(paper_id, vector, cosine, score[row_id] if fused else cosine, rank, text_rank.get(row_id))))
    return out


def _add_details(found: list[tuple[int, Candidate]], snap: Snapshot) -> None:
    details = snap.details([row_id for row_id, _ in found])
    for row_id, c in found:
        row = details.get(row_id) or {}
        c.text = row.get("text") or ""
        c.section = row.get("section") or ""
        c.chunk_index = int(row.get("chunk_index") or 0)
        c.page = int(row.get("page") or 0)
        c.page_label = row.get("page_label") or ""
        c.char_start = int(row.get("char_start") or 0)
        c.char_end = int(row.get("char_end") or 0)
        c.source_type = row.get("source_type") or ""
        c.table_no = row.get("table_no") or ""
        c.rect = tuple(row["rect"]) if row.get("rect") else None
        if c.source_type == LOW_ROW_UNIT:  # a reagent table's row: found, but after the passages (tables.py)
            c.relevance *= LOW_RANK


def _fts_safe(text: str) -> str:
    """Strip characters the full-text query parser treats as syntax."""
    cleaned = "".join(ch if ch.isalnum() or ch in "-_ " else " " for ch in text)
    return " ".join(cleaned.split())


def page_groups(candidates: list[Candidate]) -> list:
    """Stage 2's MMR groups a page's running-text chunks (`same_page_similarity`); a table's
    units stand alone: a row is what answers an amount question, and the page's text that holds
    the same cells as a run of numbers had pushed it out of the evidence."""
    return [i if c.source_type in TABLE_TYPES else (c.paper_id, c.page) for i, c in enumerate(candidates)]


def words_only_note(count: int) -> str:
    """The answer's line where some papers were searched by BM25 alone (ingest/vectors.py)."""
    were = "was" if count == 1 else "were"
    return f"{plural(count, 'paper')} {were} searched by their words only (their vectors are still being computed)."
