"""LLM summaries of papers, map-reduce over the pages so nothing is truncated.

Map: the paper's text is cut into parts that fit the model's context window
(by token budget, at page boundaries where possible), and each part becomes a
few bullet notes. Reduce: the notes are combined into a structured summary;
if the notes themselves are too long, they are reduced in groups first.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..callbacks import IsCancelled, Progress, check_cancelled, no_progress
from ..library.store import Library
from ..models.base import ChatModel, EmbeddingModel
from ..paths import load_prompt
from ..records import Paper
from ..library.store import atomic_write_text
from ..units import pages_of_text_file
from .summary_index import index_summary_side

MAP_OUTPUT_TOKENS = 200
REDUCE_OUTPUT_TOKENS = 500


@dataclass
class _Part:
    first_page: int
    last_page: int
    text: str


def split_to_budget(pages: list[tuple[int, str]], budget: int, count_tokens) -> list[_Part]:
    """Group pages into parts of at most `budget` tokens; split a page that alone is too big."""
    parts: list[_Part] = []
    current: list[tuple[int, str]] = []
    used = 0
    for page, text in pages:
        tokens = count_tokens(text)
        if tokens > budget:
            if current:
                parts.append(_Part(current[0][0], current[-1][0], "\n\n".join(t for _, t in current)))
                current, used = [], 0
            pieces = max(2, -(-tokens // budget))
            step = -(-len(text) // pieces)
            for k in range(pieces):
                parts.append(_Part(page, page, text[k * step : (k + 1) * step]))
            continue
        if used + tokens > budget and current:
            parts.append(_Part(current[0][0], current[-1][0], "\n\n".join(t for _, t in current)))
            current, used = [], 0
        current.append((page, text))
        used += tokens
    if current:
        parts.append(_Part(current[0][0], current[-1][0], "\n\n".join(t for _, t in current)))
    return parts


def summarize_paper(
    library: Library,
    chat: ChatModel,
    embedder: EmbeddingModel,
    paper: Paper,
    *,
    progress: Progress | None = None,
    cancelled: IsCancelled | None = None,
) -> str:
    progress = progress or no_progress
    text = library.text_path(paper.id).read_text(encoding="utf-8")
    map_prompt = load_prompt("summary_map.md")
    reduce_prompt = load_prompt("summary_reduce.md")
    overhead = chat.count_tokens(map_prompt) + MAP_OUTPUT_TOKENS + 64
    budget = max(256, chat.context_length - overhead)
    parts = split_to_budget(list(pages_of_text_file(text)), budget, chat.count_tokens)

    notes: list[str] = []
    for i, part in enumerate(parts, 1):
        check_cancelled(cancelled)
        progress((i - 1) / (len(parts) + 1), f"{paper.id}: reading pages {part.first_page}–{part.last_page} ({i}/{len(parts)})")
        prompt = map_prompt.format(
            title=paper.title, first_page=part.first_page, last_page=part.last_page,
            page_count=paper.page_count, text=part.text,
        )
        notes.append(chat.chat([{"role": "user", "content": prompt}], max_tokens=MAP_OUTPUT_TOKENS, cancelled=cancelled).strip())

    authors = ", ".join(paper.authors) or "unknown authors"
    reduce_budget = max(256, chat.context_length - chat.count_tokens(reduce_prompt) - REDUCE_OUTPUT_TOKENS - 64)
    # Reduce in groups until all notes fit one prompt.
    while chat.count_tokens("\n".join(notes)) > reduce_budget and len(notes) > 1:
        check_cancelled(cancelled)
        groups = split_to_budget([(i, n) for i, n in enumerate(notes)], reduce_budget, chat.count_tokens)
        notes = [
            chat.chat([{"role": "user", "content": map_prompt.format(title=paper.title, first_page="-", last_page="-", page_count=paper.page_count, text=g.text)}], max_tokens=MAP_OUTPUT_TOKENS, cancelled=cancelled).strip()
            for g in groups
        ]
    check_cancelled(cancelled)
    progress(len(parts) / (len(parts) + 1), f"{paper.id}: writing the summary")
    body = chat.chat(
        [{"role": "user", "content": reduce_prompt.format(title=paper.title, authors=authors, notes="\n".join(notes))}],
        max_tokens=REDUCE_OUTPUT_TOKENS,
        cancelled=cancelled,
    ).strip()
    summary = render_summary(paper, body)
    atomic_write_text(library.summary_path(paper.id), summary)
    paper.summarized = True
    index_summary_side(library, embedder, paper)
    library.upsert_paper(paper)
    progress(1.0, f"{paper.id}: summarized")
    return summary


def render_summary(paper: Paper, body: str) -> str:
    lines = [f"# {paper.title}", ""]
    lines.append(f"- **ID:** {paper.id}")
    if paper.authors:
        lines.append(f"- **Authors:** {', '.join(paper.authors)}")
    if paper.published:
        lines.append(f"- **Published:** {paper.published}")
    if paper.doi:
        lines.append(f"- **DOI:** {paper.doi}")
    if paper.arxiv_id:
        lines.append(f"- **arXiv:** {paper.arxiv_id}")
    lines.append(f"- **Pages:** {paper.page_count}")
    lines.append("")
    if paper.abstract:
        lines += ["## Abstract", "", paper.abstract, ""]
    lines += [body, ""]
    return "\n".join(lines)
