"""The LanceDB tables of a library: names, Arrow schemas, rows ↔ Paper records."""

from __future__ import annotations

import logging
from dataclasses import fields
from typing import Any

import numpy as np
import pyarrow as pa

from ..records import Chunk, Paper

log = logging.getLogger(__name__)

PAPERS = "papers"
SUMMARY_CHUNKS = "summary_chunks"
CONTENT_CHUNKS = "content_chunks"
SCHEMA_VERSION = 3  # 3: content_chunks has table_no and rect (tables.py)


def papers_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("title", pa.string()),
            pa.field("authors", pa.list_(pa.string())),
            pa.field("published", pa.string()),
            pa.field("abstract", pa.string()),
            pa.field("doi", pa.string()),
            pa.field("arxiv_id", pa.string()),
            pa.field("source_file", pa.string()),
            pa.field("page_count", pa.int32()),
            pa.field("page_labels", pa.list_(pa.string())),
            pa.field("content_hash", pa.string()),
            pa.field("imported_at", pa.string()),
            pa.field("status", pa.string()),
            pa.field("status_reason", pa.string()),
            pa.field("summarized", pa.bool_()),
            # Added in schema 2; older tables get them as nulls on open (_migrate_papers).
            pa.field("venue", pa.string()),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("source_key", pa.string()),
            pa.field("unsure", pa.list_(pa.string())),
            pa.field("collections", pa.list_(pa.string())),  # issue 53; nulls in older tables
            pa.field("source_labels", pa.list_(pa.string())),  # null: not recorded (Paper.source_labels)
        ]
    )


def chunks_schema(dim: int, *, content: bool) -> pa.Schema:
    cols = [
        pa.field("id", pa.string()),
        pa.field("paper_id", pa.string()),
        pa.field("chunk_index", pa.int32()),
        pa.field("source_type", pa.string()),
        pa.field("section", pa.string()),
        pa.field("text", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ]
    if content:
        cols[3:3] = [
            pa.field("page", pa.int32()),
            pa.field("page_label", pa.string()),
            pa.field("char_start", pa.int32()),
            pa.field("char_end", pa.int32()),
        ]
        cols.extend(TABLE_FIELDS)
    return pa.schema(cols)


# Added for table units (tables.py): the table's number and the row's rectangle on the page
# (x0, y0, x1, y1 in PDF points); null for running text. Older content tables get them as
# nulls on open (migrate_content_chunks); their papers get table units when re-imported or
# rebuilt (`research-desk rebuild-index`), nothing else changes.
TABLE_FIELDS = [pa.field("table_no", pa.string()), pa.field("rect", pa.list_(pa.float32()))]


def pending_vectors(count: int, dim: int) -> np.ndarray:
    """Vectors for chunks written before they are embedded (a "words" paper, ingest/vectors.py).

    All zeros: no embedding is the zero vector (they are normalised), so a search can tell a
    chunk waiting for its vector from any real one (table_reader skips them in the vector leg)
    without a column or a status lookup, in every table version."""
    return np.zeros((count, dim), dtype=np.float32)


def migrate_content_chunks(table) -> None:
    """Add the table columns to a content_chunks table written before them (as nulls)."""
    missing = [f for f in TABLE_FIELDS if f.name not in set(table.schema.names)]
    if not missing:
        return
    try:
        table.add_columns(missing)
    except Exception:  # noqa: BLE001 - another writer added them at the same moment, or a read-only store
        if any(f.name not in set(table.schema.names) for f in missing):
            # Rows are still written (without the table columns) and searched; only tables' rectangles wait.
            log.warning("could not add the table columns to content_chunks", exc_info=True)


def chunk_row(chunk: Chunk, vector, *, content: bool) -> dict[str, Any]:
    """A chunk as a row of its table (`content`: content_chunks, with page, span and table columns)."""
    row = {
        "id": f"{chunk.paper_id}:{chunk.source_type}:{chunk.chunk_index}",
        "paper_id": chunk.paper_id,
        "chunk_index": chunk.chunk_index,
        "source_type": chunk.source_type,
        "section": chunk.section,
        "text": chunk.text,
        "vector": vector.tolist(),
    }
    if content:
        rect = getattr(chunk, "rect", None)  # tables.TableChunk: a table's caption or row
        row.update(page=chunk.page, page_label=chunk.page_label, char_start=chunk.char_start,
                   char_end=chunk.char_end, table_no=getattr(chunk, "table_no", None) or None,
                   rect=[float(v) for v in rect] if rect else None)
    return row


def migrate_papers(table) -> None:
    """Add the columns a newer schema has and an older papers table lacks (as nulls)."""
    have = set(table.schema.names)
    missing = [f for f in papers_schema() if f.name not in have]
    if missing:
        table.add_columns(missing)


def paper_from_row(row: dict[str, Any]) -> Paper:
    names = {f.name for f in fields(Paper)}
    data = {k: v for k, v in row.items() if k in names}
    for key in ("authors", "page_labels", "tags", "unsure", "collections"):
        data[key] = list(data.get(key) or [])
    for key in ("venue", "source_key"):
        data[key] = data.get(key) or ""
    data["summarized"] = bool(data.get("summarized"))
    labels = data.get("source_labels")
    data["source_labels"] = None if labels is None else list(labels)
    return Paper(**data)
