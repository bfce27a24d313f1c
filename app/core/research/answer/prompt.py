"""The answer's prompt: the passages as the model reads them, the first turn's template, and the
beginning that every answer shares (system prompt, worked answers, rules), which a backend that
keeps prefixes reads once per model load (`ChatModel.prefill`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Sequence

from ...models.base import ChatMessage, ChatModel
from ...models.figure_guard import figures_of
from ...paths import load_prompt
from ...records import Evidence
from ...units import is_table_unit
from ..text import row_columns
from ..text.row_columns import named_columns_first, named_rows_first
from .worked_answers import fitting_turns

if TYPE_CHECKING:
    from ...settings import ResearchParams


def format_passage(e: Evidence, query: str = "") -> str:
    """The passage as the model reads it; a table's rows and columns that `query` names first
    (row_columns.py)."""
    if not (e.sentences and is_table_unit(e.text)):
        return f"{passage_header(e)}\n{e.focus_text}"
    # A table's rows a line each, as printed: run into one line, the model read two rows as one
    # (S2ORC's "… Academic: multi S2ORC (LATEX-parse) · Papers w/: 1.5M …").
    lines = [named_columns_first(s.text, query, only=row_columns.NAMED_ONLY) if query else s.text for s in e.sentences]
    order = named_rows_first(lines, query) if query else list(range(len(lines)))
    if order == sorted(order):  # in page order: "…" where rows were left out, as focus_text marks them
        text = e.kept_text(lines, line_breaks=True)
    else:
        text = "\n".join(lines[k] for k in order)
    return f"{passage_header(e)}\n{text}"


def passage_header(e: Evidence) -> str:
    """`[3] (paper, page 5; section)`: the line a passage opens with in the prompt."""
    where = [f"{e.paper_id}, page {e.page}"]
    if e.section:
        where.append(e.section.strip("# ")[:80])
    return f"[{e.number}] ({'; '.join(where)})"


def claims_prompt(query: str, evidence: list[Evidence], *, template: str = "synthesis_claims.md",
                  earlier: Sequence[ChatMessage] = (), **fields) -> list[ChatMessage]:
    """The answer prompt; `earlier`: turns before the question's (worked_answers.py)."""
    system = load_prompt("synthesis_system.md").strip()
    body = load_prompt(template).format(query=query, evidence="\n\n".join(format_passage(e, query) for e in evidence),
                                        **fields)
    return [{"role": "system", "content": system}, *earlier, {"role": "user", "content": body}]


def first_turn(params: "ResearchParams") -> tuple[str, dict]:
    """The first turn's prompt template and its fields beyond the question and the passages."""
    if params.first_turn_claims > 1:
        return "synthesis_parts.md", {"n": params.first_turn_claims}
    return "synthesis_first.md", {}


def answer_beginning(template: str = "synthesis_first.md", fields: dict | None = None, *,
                     earlier: Sequence[ChatMessage] = ()) -> list[ChatMessage]:
    """The part of the answer prompt that is the same for every question: the system prompt, the
    worked answers if any, and the rules, up to where the question goes. The model reads it once
    (`ChatModel.prefill`) and every answer starts from it, which takes ~190 tokens off the time
    to the first claim (and all of the worked answers')."""
    system = load_prompt("synthesis_system.md").strip()
    rules = load_prompt(template).split("{query}", 1)[0].rstrip().format(**(fields or {}))
    return [{"role": "system", "content": system}, *earlier, {"role": "user", "content": rules}]


def first_turn_beginning(chat: ChatModel, params: "ResearchParams") -> tuple[str, dict, list[ChatMessage]]:
    """The first turn's template, its fields, and the worked answers this model reads before it."""
    template, fields = first_turn(params)
    return template, fields, fitting_turns(chat, template, fields, params.worked_answers)


def read_answer_beginning(chat: ChatModel, params: "ResearchParams") -> None:
    """Have the model read (or restore) the fixed beginning of every answer's first turn, once per model."""
    if params.structured_answers:
        template, fields, earlier = first_turn_beginning(chat, params)
        chat.prefill(answer_beginning(template, fields, earlier=earlier))


def prompt_cost(chat: ChatModel, query: str = "") -> Callable[[Evidence], int]:
    """What a passage costs in the answer's prompt: its header and text in the chat model's tokens,
    a table's rows with the columns `query` names (as the prompt shows them)."""
    return lambda e: chat.count_tokens(format_passage(e, query)) + 2


# A passage's header line as passage_header writes it: where the passage stands, not what it says.
_HEADER_LINE = re.compile(r"^\[\d+\] \(.*\)$", re.M)


def printed_figures(chat: ChatModel, printed: str) -> dict[str, frozenset[str]]:
    """`chat.chat(**…)`'s `figures`: those `printed` prints (the turns that hold this answer's
    passages and question; never the worked answers, whose figures are invented), where the
    backend holds a reply to them (figure_guard.py). The passages' header lines do not count: a
    paper id made from a DOI and a page number are labels, and the starter model wrote them as
    its answer ("The exit interviews were conducted with 10.1186-1472-6963-14-1, page 1")."""
    return {"figures": figures_of(_HEADER_LINE.sub("", printed))} if chat.holds_figures else {}
