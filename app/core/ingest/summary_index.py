"""The summary side of the index: what stage 1 (scoping) searches.

Per paper, `summary_chunks` holds:
- `abstract`: title + authors + abstract, and a second chunk listing the section
  headings, so that scoping works before (or without) an LLM summary;
- `summary`: chunks of summaries/<id>.md, once summarized;
- `notes`: chunks of the user's notes/<id>.md.
All of a paper's summary chunks are replaced together, in one delete + add.
"""

from __future__ import annotations

import re

from ..units import TokenCounter, approx_tokens
from .chunking import chunk_pages, token_counter
from ..library.schema import pending_vectors
from ..library.store import SUMMARY_CHUNKS, Library
from ..models.base import EmbeddingModel
from ..records import Chunk, PageText, Paper

_HEADINGS_PREFIX = "Sections of"


def profile_chunks(paper: Paper, sections: list[str]) -> list[Chunk]:
    authors = ", ".join(paper.authors[:6])
    lines = [paper.title]
    if authors:
        lines.append(f"Authors: {authors}")
    if paper.abstract:
        lines.append(paper.abstract)
    chunks = [Chunk(paper.id, 0, "\n".join(lines), source_type="abstract", section="Abstract")]
    headings = [s for s in dict.fromkeys(sections) if s and s.lower() != "abstract"]
    if headings:
        text = f"{_HEADINGS_PREFIX} {paper.title}: " + "; ".join(headings[:60])
        chunks.append(Chunk(paper.id, 1, text, source_type="abstract", section="Contents"))
    return chunks


def text_chunks(paper_id: str, text: str, source_type: str, start_index: int,
                count_tokens: TokenCounter = approx_tokens) -> list[Chunk]:
    """Chunk a markdown document (summary or notes) that has no pages."""
    text = text.strip()
    if not text:
        return []
    chunks = list(chunk_pages(paper_id, [PageText(page=0, label="", markdown=text)], target_tokens=200, max_tokens=300,
                              overlap_tokens=40, count_tokens=count_tokens))
    for i, c in enumerate(chunks):
        c.page, c.page_label = 0, ""
        c.chunk_index = start_index + i
        c.source_type = source_type
    return chunks


def headings_from_text_file(text: str) -> list[str]:
    return re.findall(r"^#{1,4}\s+(.+?)\s*$", text, flags=re.M)[1:]  # [0] is the paper title


def index_summary_side(
    library: Library, embedder: EmbeddingModel, paper: Paper, *, sections: list[str] | None = None,
    embed: bool = True, delete_first: bool = True,
) -> int:
    """(Re)build a paper's summary chunks from its metadata, summary and notes files.

    `embed=False` writes them with pending (zero) vectors: found by their words only, until the
    vectors phase of import rebuilds them with `embed=True`. `delete_first=False` only for a paper
    that has no summary rows yet (a new paper at import: one commit fewer)."""
    if sections is None:
        path = library.text_path(paper.id)
        sections = headings_from_text_file(path.read_text(encoding="utf-8")) if path.exists() else []
    chunks = profile_chunks(paper, sections)
    for source_type, path in (("summary", library.summary_path(paper.id)), ("notes", library.notes_path(paper.id))):
        if path.exists():
            chunks += text_chunks(paper.id, path.read_text(encoding="utf-8"), source_type, len(chunks),
                                  token_counter(embedder))
    vectors = embedder.embed([c.text for c in chunks]) if embed else pending_vectors(len(chunks), embedder.dimension)
    library.replace_chunks(SUMMARY_CHUNKS, paper.id, chunks, vectors, delete_first=delete_first)
    return len(chunks)
