"""The LanceDB tables of a library: names, Arrow schemas, rows ↔ Paper records."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

import pyarrow as pa

from .records import Paper

PAPERS = "papers"
SUMMARY_CHUNKS = "summary_chunks"
CONTENT_CHUNKS = "content_chunks"
SCHEMA_VERSION = 2


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
    return pa.schema(cols)


def migrate_papers(table) -> None:
    """Add the columns a newer schema has and an older papers table lacks (as nulls)."""
    have = set(table.schema.names)
    missing = [f for f in papers_schema() if f.name not in have]
    if missing:
        table.add_columns(missing)


def paper_from_row(row: dict[str, Any]) -> Paper:
    names = {f.name for f in fields(Paper)}
    data = {k: v for k, v in row.items() if k in names}
    for key in ("authors", "page_labels", "tags", "unsure"):
        data[key] = list(data.get(key) or [])
    for key in ("venue", "source_key"):
        data[key] = data.get(key) or ""
    data["summarized"] = bool(data.get("summarized"))
    return Paper(**data)


def paper_to_dict(paper: Paper) -> dict[str, Any]:
    return asdict(paper)
