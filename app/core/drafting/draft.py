"""Draft one section of the user's own paper from the library (DESIGN.md, "Section drafting").

Pipeline (seed 003, adapted):

1. Default queries for the section (queries.py), each run through deep
   research's `search_evidence` (vector top N → query-aware summary and LLM
   score → combined 0.4·vector + 0.6·LLM).
2. An agent loop: the model, held to a JSON schema, says what the evidence
   covers, what is missing, whether it is sufficient and the next search. The
   code enforces the stops: sufficient / nothing missing, at most
   `max_custom_searches` custom searches (5), no new query, the time budget.
   Every search is tracked (query, default/custom, the gap it was for, what
   it found).
3. Evidence for the writer, diversity first: the best passage of each paper,
   then a paper's further passages only when they are the only evidence for
   one of the searches ("needed") or when there is room left (at most
   `max_per_paper` per paper).
4. Generation held to a JSON schema: a list of paragraphs, each
   `{"cites": [keys…], "text": "…"}` where `cites` is an enum of the keys of
   the evidence in the prompt with at least one item. So every paragraph
   carries at least one citation that resolves to a library paper and to the
   pages its evidence came from, whatever the model's size. Citations the
   model writes in the text (`[@key]`, `\\cite{key}`, `(Author 2004)`) are
   kept when they resolve to offered evidence and removed with a warning
   otherwise; declared keys missing from the text are placed after the
   sentence their evidence supports best.
5. The support check (research/check/support.py, the same check as answers): every
   (sentence, cited passage) pair gets a verdict — supported, partial,
   unsupported. A citation its passage does not support is dropped where the
   sentence has a supported citation besides it, and flagged otherwise; either
   way a warning says so.
6. A ledger: for every citation, the claim, the paper, page, a quote of at
   most 30 words, the vector / LLM / combined scores and the verdict.

Time: the writer's reserve is at least the predicted cost of writing a
full-size section and checking it on this machine. A budget with no room for
the model to score evidence goes straight from retrieval (ranked as standard
mode ranks it) to writing; a larger one keeps searching to its research
deadline (the context's fields, then the gaps named earlier) even once the
agent judges the evidence sufficient.

In-text citations use Pandoc's form `[@key]` (rendered "(Zeileis 2004)" by
`pandoc --citeproc`), which maps 1:1 to the BibTeX key; the LaTeX output

Progress goes through the run's `events.Task`: stages ("gather", "write",
"check"), one `events.Round` per search (deep_progress.RoundRecord), the
paragraphs as they are written (`events.ClaimWritten` with a `Paragraph`), and
`events.Notice` for what the user should know.

Where the parts live: records.py (the result and its rows), gathering.py
(searches, the agent, evidence selection), writer.py (prompt, schema, reply),
citations.py (citations in the text, author names), ledger.py (the support
check and the ledger). This module assembles them; every name callers import
from `drafting.draft` is importable here.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

from .. import events
from ..bibtex import citation_keys
from ..errors import Cancelled, NoRelevantPapers
from ..records import Paper
from ..research.deep.runner import DeepResearch
from ..research.funnel import Funnel
from ..settings import DeepParams
from ..text.wording import plural, trim_repetition  # noqa: F401 - trim_repetition: re-exported for callers
from .citations import author_names, author_year, citation_keys_in, finish_paragraph  # noqa: F401
from .context import DraftContext
from .gathering import DECISION_SCHEMA, DraftBudget, GatherMixin, select_evidence  # noqa: F401
from .ledger import STATUS_OF, LedgerMixin, best_passage, claim_of, clip_words, copied_runs, quote, vector_score  # noqa: F401
from .queries import default_queries, normalise_section, section_title
from .records import DraftParams, DraftResult, LedgerRow, Paragraph, SearchRecord  # noqa: F401
from .writer import PARAGRAPHS, WORDS, WriterMixin, parse_paragraphs, section_instructions, section_schema  # noqa: F401

log = logging.getLogger(__name__)

__all__ = [
    "SectionDrafter", "draft_section", "STAGES", "DraftParams", "DraftResult", "LedgerRow", "Paragraph", "SearchRecord",
    "DraftBudget", "DECISION_SCHEMA", "select_evidence", "PARAGRAPHS", "WORDS", "parse_paragraphs", "section_instructions",
    "section_schema", "finish_paragraph", "citation_keys_in", "author_names", "author_year", "STATUS_OF", "best_passage",
    "claim_of", "clip_words", "copied_runs", "quote", "vector_score", "trim_repetition",
]

# The drafter's stages, as its Stage events name them (index = position + 1).
STAGES = ("gather", "write", "check")


class SectionDrafter(GatherMixin, WriterMixin, LedgerMixin, DeepResearch):
    """Deep research's search_evidence, budget and model calls, driven for one section."""

    def __init__(
        self,
        funnel: Funnel,
        deep_params: DeepParams,
        section: str,
        context: DraftContext,
        *,
        task: events.Task | None = None,
        time_minutes: float | None = 5.0,
        params: DraftParams | None = None,
        clock: Callable[[], float] = time.monotonic,
        started_at: float | None = None,
    ) -> None:
        super().__init__(funnel, deep_params, task=task, deep=True, time_minutes=time_minutes, clock=clock, started_at=started_at)
        self.section = normalise_section(section)
        self.title = section_title(self.section)
        self.context = context
        self.draft_params = params or DraftParams()
        self.cap = self.draft_params.max_custom_searches
        self.mode = "draft"
        budget = DraftBudget(self.budget.total_s, clock)
        budget.start = self.budget.start  # keeps `started_at`
        budget.answer_s = self.answer_cost_s  # the writer's and the check's predicted cost
        self.budget = budget
        self.searches: list[SearchRecord] = []
        self.custom = 0
        self.widening = False  # searching on, to the research deadline, after the agent stopped
        self.notes: list[str] = []
        self.keys: dict[str, str] = {}
        self.library_papers: dict[str, Paper] = {}

    # -- public -----------------------------------------------------------------------
    def run(self) -> DraftResult:
        started = self.budget.clock()
        result = DraftResult(section=self.section, title=self.title, context=self.context)
        papers = self.funnel.library.list_papers()
        self.library_papers = {p.id: p for p in papers}
        self.funnel._papers = dict(self.library_papers)
        if not any(p.complete for p in papers):
            raise NoRelevantPapers("The library has no indexed papers to draft from.", "Add PDFs first (`research-desk add PATH`).")
        self.keys = citation_keys(papers)  # over the whole library: stable across runs
        queries, notes = default_queries(self.section, self.context)
        self.notes += notes

        self._stage(1, f"gathering evidence for the {self.title} section")
        try:
            self.gather(queries)
        except Cancelled:
            if self.user_cancelled():
                raise
        result.timings["gather_s"] = round(self.budget.clock() - started, 2)
        # Only evidence from papers that are in the library (and complete) can be cited.
        self.pool = [e for e in self.pool if e.paper_id in self.library_papers and self.library_papers[e.paper_id].complete]
        if not self.pool:
            raise NoRelevantPapers(
                f"No passage in the library matched the {self.title} queries closely enough.",
                "Describe the study with the terms the papers use, add papers on the topic, or lower the evidence cutoff in Settings.",
            )

        t = self.budget.clock()
        selected = select_evidence(self.pool, self.draft_params.max_evidence, self.draft_params.max_per_paper)
        self._stage(2, f"writing the {self.title} section from {plural(len(selected), 'passage')} of {plural(len({e.paper_id for e in selected}), 'paper')}")
        paragraphs, offered, warnings = self.write(selected)
        result.timings["write_s"] = round(self.budget.clock() - t, 2)

        self._stage(3, "checking citations")
        result.paragraphs = paragraphs
        result.offered = offered
        result.gathered = sorted(self.pool, key=lambda e: -e.score)
        result.warnings = warnings
        self._finish(result)
        result.searches = list(self.searches)
        result.decisions = list(self.decisions)
        result.notes = list(self.notes)
        result.stop_reason = self.stop_reason
        result.limits_hit = list(dict.fromkeys(self.limits_hit))
        result.timings["scoring_s"] = round(self.scoring_s, 2)
        result.timings["total_s"] = round(self.budget.elapsed(), 2)  # from `started_at`: model loading included
        self._stage(3, f"{plural(len(result.cited_keys()), 'paper')} cited, {plural(len(result.ledger), 'citation')} in the ledger")
        return result

    # -- reporting ---------------------------------------------------------------------
    def _stage(self, index: int, detail: str) -> None:
        self.task.stage(STAGES[index - 1], index, len(STAGES), detail)

    def _note_draft(self, message: str) -> None:
        log.info("drafting: %s", message)
        self.notes.append(message)
        self.task.notice(message, level="info")


def draft_section(
    desk,
    section: str,
    context: DraftContext,
    *,
    task: events.Task | None = None,
    time_minutes: float | None = 5.0,
    params: DraftParams | None = None,
    started_at: float | None = None,
) -> DraftResult:
    """Draft `section` for `context` from the desk's library (the Desk's `draft` calls this).

    The time budget counts from `started_at` (a `time.monotonic()` reading, e.g.
    when the user pressed the button) or from now.
    """
    started_at = time.monotonic() if started_at is None else started_at
    task = task or events.Task()
    drafter = SectionDrafter(desk.funnel(task), desk.settings.deep, section, context, task=task, time_minutes=time_minutes,
                             params=params, started_at=started_at)
    return drafter.run()
