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
5. The support check (research/support.py, the same check as answers): every
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
turns them into `\\cite{key}`.
"""

from __future__ import annotations

import json
import math
import re
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..bibtex import citation_keys, family_name
from ..callbacks import IsCancelled
from ..errors import Cancelled, ModelError, ModelTimeout, NoRelevantPapers, ResearchDeskError, SynthesisFailed
from ..models.base import ChatModel
from ..paths import load_prompt
from ..records import Citation, CitationStatus, Evidence, Paper, Support
from ..research.citations import support
from ..research.deep import CALL_OVERHEAD_S, CONSERVATIVE_RATE, Budget, DeepResearch
from ..research.support import Pair, check_pairs
from ..wording import plural, to_sentence_end, trim_repetition
from ..research.funnel import Funnel
from ..settings import DeepParams
from .context import KEYS, LABELS, DraftContext
from .queries import FOCUS, QUERY_FIELDS, _join, default_queries, normalise_section, section_title

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "covered": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "missing": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "sufficient": {"type": "boolean"},
        "nextQuery": {"type": "string"},
    },
    "required": ["covered", "missing", "sufficient", "nextQuery"],
}

# Target size per section: paragraphs (upper bound in the schema) and words.
PARAGRAPHS = {"abstract": 1, "conclusion": 2, "introduction": 4, "related-work": 4, "methods": 3, "results": 3, "discussion": 4}
WORDS = {"abstract": 180, "conclusion": 220, "introduction": 450, "related-work": 450, "methods": 380, "results": 350, "discussion": 450}
QUOTE_WORDS = 30  # longest quote in the ledger
COPY_WORDS = 12  # a run of this many words copied from a passage is flagged
LOOP_WORDS = 8  # a repeated run of this many words means the writer is looping
WRITER_SKELETON_TOKENS = 450  # system prompt, instructions and the study's description, before the prompt is built
TOKENS_PER_CITATION = 70  # section tokens per (sentence, cited paper) pair, to guess how many pairs the check reads
STATUS_OF = {
    Support.SUPPORTED.value: CitationStatus.VERIFIED.value,
    Support.PARTIAL.value: CitationStatus.PARTIAL.value,
    Support.UNSUPPORTED.value: CitationStatus.UNSUPPORTED.value,
}


class DraftBudget(Budget):
    """Deep research's clock with a larger writing reserve and per-search slices.

    The reserve is the predicted cost of writing and checking a full-size
    section on this machine (before a prediction: min(2.5 min, 0.4 x budget),
    a section being longer than a research answer). A slice brings the research deadline forward for one
    search: deep research's scoring checks `research_over()` between batches
    and its model calls are cancelled at `research_remaining()`, so one
    default search stops there (its unscored candidates keep their vector
    scores) and the next default search and the agent still get their turn.
    """

    slice_end: float | None = None

    def design_reserve_s(self) -> float:
        return 150.0 if self.total_s is None else min(150.0, 0.4 * self.total_s)

    def research_remaining(self) -> float:
        left = super().research_remaining()
        if self.slice_end is not None:
            left = min(left, self.slice_end - self.clock())
        return left


@dataclass
class DraftParams:
    max_custom_searches: int = 5
    max_evidence: int = 10  # passages offered to the writer (fewer if the context is small)
    max_per_paper: int = 2  # unless a further passage is the only evidence for a search
    passage_chars: int = 700  # each passage is clipped to this for the writer
    max_paragraphs: int | None = None  # None: per section (PARAGRAPHS)


@dataclass
class SearchRecord:
    number: int
    query: str
    kind: str  # "default" | "custom"
    gap: str  # the missing aspect a custom search was for
    found: int  # new passages kept
    papers: list[str]  # paper ids of those passages
    seconds: float
    note: str = ""


@dataclass
class Paragraph:
    text: str  # Markdown with [@key] citations
    keys: list[str]
    complete: bool = True  # False: salvaged from a reply cut off by the time or token limit


@dataclass
class LedgerRow:
    paragraph: int
    claim: str
    key: str
    paper_id: str
    title: str
    authors: str
    year: str
    page: int
    page_label: str
    quote: str
    vector_score: float | None
    llm_score: float | None
    combined_score: float
    support: str  # the support check's verdict: supported | partial | unsupported
    status: str  # verified | partial | unsupported (as answers' citations)
    query: str
    support_note: str = ""  # why the verdict is not "supported" (the rules' or the model's reason)


@dataclass
class DraftResult:
    section: str
    title: str
    context: DraftContext
    paragraphs: list[Paragraph] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)  # paper id → BibTeX key, cited papers only
    papers: dict[str, Paper] = field(default_factory=dict)  # cited papers
    offered: list[Evidence] = field(default_factory=list)  # evidence in the writer's prompt
    gathered: list[Evidence] = field(default_factory=list)  # everything the searches kept
    ledger: list[LedgerRow] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)  # spans in `markdown`, for links
    searches: list[SearchRecord] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stop_reason: str = ""
    limits_hit: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def markdown(self) -> str:
        """The section: heading and paragraphs (citation spans in `citations` refer to this)."""
        return f"# {self.title}\n\n" + "\n\n".join(p.text for p in self.paragraphs) + "\n"

    def cited_keys(self) -> list[str]:
        seen: list[str] = []
        for p in self.paragraphs:
            for k in citation_keys_in(p.text):
                if k not in seen:
                    seen.append(k)
        return seen

    def pages(self, key: str) -> list[int]:
        return sorted({r.page for r in self.ledger if r.key == key})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["papers"] = {pid: p.to_dict() for pid, p in self.papers.items()}
        d["markdown"] = self.markdown
        return d


# -- the drafter ---------------------------------------------------------------------
class SectionDrafter(DeepResearch):
    """Deep research's search_evidence, budget and model calls, driven for one section."""

    def __init__(
        self,
        funnel: Funnel,
        deep_params: DeepParams,
        section: str,
        context: DraftContext,
        *,
        time_minutes: float | None = 5.0,
        params: DraftParams | None = None,
        clock: Callable[[], float] = time.monotonic,
        cancelled: IsCancelled | None = None,
        started_at: float | None = None,
    ) -> None:
        super().__init__(funnel, deep_params, deep=True, time_minutes=time_minutes, clock=clock, cancelled=cancelled, started_at=started_at)
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

        self._progress(0.02, f"Stage 1/3: gathering evidence for the {self.title} section…")
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
        self._progress(0.7, f"Stage 2/3: writing the {self.title} section from {plural(len(selected), 'passage')} of {plural(len({e.paper_id for e in selected}), 'paper')}…")
        paragraphs, offered, warnings = self.write(selected)
        result.timings["write_s"] = round(self.budget.clock() - t, 2)

        self._progress(0.95, "Stage 3/3: checking citations…")
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
        self._progress(1.0, f"Stage 3/3: {plural(len(result.cited_keys()), 'paper')} cited, {plural(len(result.ledger), 'citation')} in the ledger")
        return result

    # -- evidence gathering ------------------------------------------------------------
    def gather(self, default: list[str]) -> None:
        self._chat_model()  # loads and measures the model: the plan needs its speed
        self.plan = {"answer_s": round(self.answer_cost_s(), 1), "round_s": round(self.round_cost_s(), 1)}
        if not self.room_for_research():
            # No room for the model to score a batch and still write: the evidence is what
            # retrieval ranks first (as standard mode ranks it), and the writer gets the time.
            self._limit("time (too short for scoring or agent searches)")
            self._note_draft(
                f"the budget leaves too little time on this machine for the model to score evidence (~{self.plan['round_s']:.0f} s "
                f"a batch) before writing (~{self.budget.reserve_s:.0f} s): evidence is ranked by retrieval alone")
            for query in default:
                self._search(query, "default", 0, score=False)
            return
        for n, query in enumerate(default, 1):
            if n > 1 and self.budget.research_over():
                self._limit("time")
                return
            # Each default search gets an equal share of the research time left,
            # counting the agent's custom searches as one more share.
            shares = len(default) - n + 1 + (1 if self.cap > 0 else 0)
            left = self.budget.research_remaining()
            self.budget.slice_end = None if math.isinf(left) or shares <= 1 else self.budget.clock() + left / shares
            try:
                self._search(query, "default", 0)
            finally:
                self.budget.slice_end = None
        while True:
            if self.budget.research_over():
                self._limit("time")
                return
            if self.widening:  # the agent has had its say: widen without asking again
                if not self._widen():
                    return
                continue
            if self.custom >= self.cap:
                self._limit(f"custom search cap ({self.cap})")
                if not self._time_to_fill():
                    return
                self.widening = True
                continue
            decision = self.decide_draft(self.custom + 1)
            if decision.get("timeout"):
                self._limit("time")
                return
            if decision.get("malformed"):
                self.stop_reason = "the model's decision was unusable; the agent stopped"
                if not self._time_to_fill():
                    return
                self.widening = True
                continue
            missing = [m.strip() for m in decision["missing"] if isinstance(m, str) and m.strip()]
            next_query = str(decision.get("nextQuery") or "").strip()
            query, gap = (None, "") if decision["sufficient"] else self._pick_query(next_query, missing)
            if query is None:
                self.stop_reason = ("the model judged the evidence sufficient" if decision["sufficient"] or not (missing or next_query)
                                    else "no new search: every proposed query had already been run")
                if not self._time_to_fill():
                    return
                self.widening = True
                continue
            self._search(query, "custom", self.custom + 1, gap=gap)

    def _time_to_fill(self) -> bool:
        """A budgeted run keeps searching to its research deadline, whatever the agent thinks of the evidence."""
        return self.budget.total_s is not None and not self.budget.research_over()

    def _widen(self) -> bool:
        """One more search with time left after the agent stopped; False when none is left.

        These searches are bounded by what there is to widen to (the study's fields, the
        gaps named earlier), not by the agent's custom-search cap.
        """
        query, gap = self._widening_query()
        if query is None:
            self._note_draft("the search had nothing left to widen to")
            return False
        self._search(query, "widen", len(self.searches) + 1, gap=gap)
        return True

    def _widening_query(self) -> tuple[str | None, str]:
        """The next search the code adds: each field of the study on its own (the section's
        fields first), then aspects the agent called missing earlier; never a repeat."""
        done = {_norm(s.query) for s in self.searches}
        fields = list(dict.fromkeys([k for combo in QUERY_FIELDS[self.section] for k in combo] + list(KEYS)))
        for key in fields:
            text = self.context.get(key).strip()
            query = _join([text]) if text else ""
            if len(_norm(query).split()) >= 2 and _norm(query) not in done:
                return query, f"{LABELS[key].lower()} on its own"
        for d in self.decisions:
            for m in d.get("missing", []):
                if isinstance(m, str) and len(_norm(m).split()) >= 2 and _norm(m) not in done:
                    return " ".join(m.split())[:300], m
        return None, ""

    def decide_draft(self, iteration: int) -> dict[str, Any]:
        """The agent's judgement of the evidence, held to DECISION_SCHEMA.

        One attempt: the grammar makes the reply valid JSON unless it is cut
        off, and the same prompt at temperature 0 would be cut off again.
        """
        left = self.budget.research_remaining()
        prompt = load_prompt("draft_decision.md").format(
            section_title=self.title,
            context=self.context.block(400),
            focus=FOCUS[self.section],
            evidence=self._digest(),
            papers=self._papers_line(),
            queries="; ".join(f"“{s.query[:160]}”" for s in self.searches) or "none",
            searches_left=self.cap - self.custom,
            time_remaining="unlimited" if math.isinf(left) else f"{max(0.0, left) / 60:.1f}",
        )
        decision: dict[str, Any]
        try:
            raw = self._call([{"role": "user", "content": prompt}], max_tokens=240, json_schema=DECISION_SCHEMA)
            decision = _validate_decision(json.loads(raw))
        except ModelTimeout:
            decision = {"covered": [], "missing": [], "sufficient": True, "nextQuery": "", "timeout": True}
        except (ValueError, TypeError, ModelError) as exc:
            self._note_draft(f"decision {iteration}: unusable reply ({getattr(exc, 'message', exc)})")
            decision = {"covered": [], "missing": [], "sufficient": True, "nextQuery": "", "malformed": True}
        decision["iteration"] = iteration
        self.decisions.append(decision)
        self._emit("decision", decision)
        return decision

    def _pick_query(self, next_query: str, missing: list[str]) -> tuple[str | None, str]:
        """The model's next query, else the first missing aspect, that was not searched yet.

        A one-word "query" (small models echo field names) is no search and is skipped.
        """
        done = {_norm(s.query) for s in self.searches}
        for candidate, gap in [(next_query, missing[0] if missing else next_query)] + [(m, m) for m in missing]:
            if len(_norm(candidate).split()) >= 2 and _norm(candidate) not in done:
                return " ".join(candidate.split())[:300], gap
        return None, ""

    def _search(self, query: str, kind: str, iteration: int, gap: str = "", score: bool = True) -> list[Evidence]:
        self._emit("round", {"iteration": iteration, "topic": query})
        started = time.monotonic()
        note = "" if score else "ranked by retrieval alone"
        try:
            found = self.search_evidence(query, score=score)
        except Cancelled:
            if self.user_cancelled():
                raise
            found, note = [], "stopped at the time limit"
        except ResearchDeskError as exc:
            found, note = [], f"failed: {exc.message}"
            self._note_draft(f"search {query!r} {note}")
        record = SearchRecord(
            number=len(self.searches) + 1, query=query, kind=kind, gap=gap, found=len(found),
            papers=sorted({e.paper_id for e in found}), seconds=round(time.monotonic() - started, 2), note=note,
        )
        self.searches.append(record)
        if kind == "custom":
            self.custom += 1
        self._emit("search", record)
        return found

    def _call(self, messages, *, max_tokens: int, json_schema: dict[str, Any]) -> str:
        # A call cut at the research deadline is a timeout, not a cancellation:
        # search_evidence then keeps its candidates with their vector scores
        # instead of losing the whole search.
        try:
            return super()._call(messages, max_tokens=max_tokens, json_schema=json_schema)
        except Cancelled:
            if self.user_cancelled():
                raise
            raise ModelTimeout("The research time ran out during a model call.") from None

    # -- the plan: what writing and checking a section cost on this machine ------------
    def writer_sizes(self, chat: ChatModel | None = None) -> tuple[int, int]:
        """(evidence tokens, section tokens) of a full-size section for this context window."""
        chat = chat or self._chat
        context = chat.context_length if chat is not None else 4096
        answer = max(96, min(int(WORDS[self.section] * 1.6) + 60, context // 2))
        per_passage = self.draft_params.passage_chars // 4 + 70  # passage, head, summary
        evidence = max(200, min(self.draft_params.max_evidence * per_passage, context - WRITER_SKELETON_TOKENS - answer - 64))
        return evidence, answer

    def answer_cost_s(self, evidence_tokens: int | None = None, answer_tokens: int | None = None) -> float:
        """Predicted seconds to write the section (full size by default) and check its citations."""
        evidence0, answer0 = self.writer_sizes()
        evidence = evidence0 if evidence_tokens is None else evidence_tokens
        answer = answer0 if answer_tokens is None else answer_tokens
        write = CALL_OVERHEAD_S + self.meter.predict_s(WRITER_SKELETON_TOKENS + evidence, answer, CONSERVATIVE_RATE)
        return write + self.check_cost_s(self._pairs_for(answer))

    @staticmethod
    def _pairs_for(answer_tokens: int) -> int:
        return max(2, answer_tokens // TOKENS_PER_CITATION)

    def _writer_size(self, chat: ChatModel, remaining_s: float) -> tuple[int, int]:
        """(section tokens, evidence tokens) that can be written and checked in `remaining_s`."""
        evidence0, answer0 = self.writer_sizes(chat)
        evidence, answer = evidence0, answer0
        if math.isinf(remaining_s):
            return answer, evidence
        while self.answer_cost_s(evidence, answer) > remaining_s:
            if answer > max(96, answer0 // 2):
                answer = max(96, answer0 // 2, answer - 40)
            elif evidence > 300:
                evidence = max(300, evidence - 100)
            elif answer > 96:
                answer = max(96, answer - 40)
            else:
                break
        return answer, evidence

    def _grace_s(self) -> float:
        total = self.budget.total_s
        return 0.0 if total is None else min(60.0, max(30.0, 0.25 * total))

    # -- writing -----------------------------------------------------------------------
    def write(self, selected: list[Evidence]) -> tuple[list[Paragraph], list[Evidence], list[str]]:
        chat = self._chat_model()
        answer_tokens, evidence_tokens = self._writer_size(chat, max(self.budget.remaining(), 0.5 * self.budget.reserve_s))
        max_paragraphs = self.draft_params.max_paragraphs or PARAGRAPHS[self.section]
        n_paragraphs = max(1, min(max_paragraphs, answer_tokens // 150))
        words = max(60, min(WORDS[self.section], int(answer_tokens * 0.6)))

        system = load_prompt("draft_system.md").strip()
        template = load_prompt("draft_section.md")
        fields = dict(
            section_title=self.title,
            context=self.context.block(),
            instructions=section_instructions(self.section),
            paragraphs=n_paragraphs,
            words=words,
        )
        skeleton = template.format(evidence="", keys="", example="", **fields)
        skeleton_tokens = chat.count_tokens(system + skeleton)
        # Only what the model can read and still write (and check) in the time the writer has:
        # llama.cpp cannot interrupt reading a prompt, so an oversized prompt would overrun
        # the budget. The best passage is offered in any case (clipped).
        budget = min(chat.context_length - skeleton_tokens - answer_tokens - 64, evidence_tokens)
        offered, blocks = [], []
        spent = 0
        for e in selected:
            block = self._evidence_block(e)
            cost = chat.count_tokens(block) + 2 + 8  # + its key in the key list
            if spent + cost > budget:
                if not offered:  # the writer needs at least one passage: clip the best one to fit
                    block = block[: max(300, 4 * max(0, budget - 10))]
                    offered.append(e)
                    blocks.append(block)
                    spent += chat.count_tokens(block)
                continue
            offered.append(e)
            blocks.append(block)
            spent += cost
        if len(offered) < len(selected):
            self._note_draft(f"{len(selected) - len(offered)} of {len(selected)} passages did not fit the model's context or the time left and were not offered")
        keys = list(dict.fromkeys(self.keys[e.paper_id] for e in offered))
        example = f"[@{keys[0]}]" if keys else ""
        prompt = template.format(evidence="\n\n".join(blocks), keys=", ".join(keys), example=example, **fields)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        schema = section_schema(keys, n_paragraphs)

        raw, cut = self._generate(chat, messages, schema, answer_tokens, words / n_paragraphs)
        items = parse_paragraphs(raw)
        if not items:
            why = f" ({cut})" if cut else ""
            raise SynthesisFailed(f"Drafting failed: the model wrote no usable paragraph{why}.", "Give the run more time (--time), or use a larger model.")
        warnings: list[str] = []
        if cut:
            warnings.append(f"The reply was cut off ({cut.rstrip('.')}); the draft keeps what the model had written.")
        paragraphs = []
        for n, (item, complete) in enumerate(items, 1):
            paragraph, notes = finish_paragraph(
                n, str(item.get("text") or ""), [str(k) for k in item.get("cites") or []], complete,
                offered, self.keys, self.library_papers,
            )
            warnings += notes
            if paragraph is not None:
                paragraphs.append(paragraph)
        if not paragraphs:
            raise SynthesisFailed("Drafting failed: the model's paragraphs were empty after cleaning.", "Give the run more time (--time), or use a larger model.")
        return paragraphs, offered, warnings

    def _generate(self, chat: ChatModel, messages, schema, max_tokens: int, words_per_paragraph: float) -> tuple[str, str]:
        """The writer's JSON reply, or what of it arrived before a stop (time, tokens, a loop).

        At the end of the time budget the writer stops as soon as it has one
        usable paragraph. If it has none yet (the research overran, the model
        is slow) it may run on for a bounded grace period: a late draft is
        more use than none. The overrun is reported in `limits_hit`.
        """
        tokens: list[str] = []
        state = {"why": "", "usable": False}
        now = self.budget.clock()
        total = self.budget.total_s
        # The writer stops early enough for the support check of what it wrote to follow.
        check_s = self.check_cost_s(self._pairs_for(max_tokens))
        soft = math.inf if total is None else max(self.budget.start + total - check_s, now + self.budget.reserve_s * 0.5)
        hard = soft + self._grace_s()

        def watch(token: str) -> None:
            tokens.append(token)
            if len(tokens) % 12:
                return
            items = parse_paragraphs("".join(tokens))
            if items:
                self._emit("draft_text", [str(i.get("text") or "") for i, _ in items])
                text = str(items[-1][0].get("text") or "")
                state["usable"] = len(items) > 1 or items[-1][1] or len(text.split()) >= 25
                if trim_repetition(text, LOOP_WORDS)[1]:
                    state["why"] = "the model started repeating itself"
                elif len(text.split()) > 3 * words_per_paragraph + 40:
                    state["why"] = "a paragraph ran far past its length"

        def cancelled() -> bool:
            if state["why"] or self.user_cancelled():
                return True
            t = self.budget.clock()
            if t >= soft and (state["usable"] or t >= hard):
                state["why"] = "the time budget ran out"
                return True
            return False

        started = self.budget.clock()
        cut = ""
        try:
            raw = chat.chat(messages, max_tokens=max_tokens, temperature=self.funnel.params.temperature, on_token=watch,
                            cancelled=cancelled, json_schema=schema, timeout_s=self.funnel.params.synthesis_timeout_s)
        except Cancelled:
            if self.user_cancelled():
                raise
            raw, cut = "".join(tokens), state["why"] or "the time budget ran out"
        except ModelError as exc:
            raw, cut = "".join(tokens), exc.message
            if not raw.strip():
                raise SynthesisFailed(f"Drafting failed: {exc.message}", exc.hint or "Retry, or choose another model in Settings.") from exc
        if total is not None and self.budget.clock() > self.budget.start + total + 1.0:
            self._limit(f"time (the writer ran {self.budget.clock() - self.budget.start - total:.0f} s past the budget to finish a paragraph)")
        self.meter.record(chat.count_tokens(messages[-1]["content"]), chat.count_tokens(raw or " "), self.budget.clock() - started)
        return raw, cut

    def _evidence_block(self, e: Evidence) -> str:
        paper = self.library_papers[e.paper_id]
        label = f" (printed page {e.page_label})" if e.page_label and e.page_label != str(e.page) else ""
        head = f"[@{self.keys[e.paper_id]}] {author_year(paper)}, “{paper.title}”, page {e.page}{label}"
        summary = e.summary.strip() if e.summary and not e.summary.lower().startswith("not relevant") else ""
        passage = _clip_chars(e.text, self.draft_params.passage_chars)
        return head + ("\nSummary: " + summary[:400] if summary else "") + "\nPassage: " + passage

    # -- checking and the ledger -----------------------------------------------------------
    def _finish(self, result: DraftResult) -> None:
        """Check every citation with the support check, drop or flag the unsupported ones, build the ledger."""
        by_paper: dict[str, list[Evidence]] = {}
        for e in result.offered:
            by_paper.setdefault(e.paper_id, []).append(e)
        key_to_paper = {self.keys[pid]: pid for pid in by_paper}
        cites = self._citations(result.paragraphs, by_paper, key_to_paper)
        self._check(result, [pair for *_, pair in cites])
        verdicts = {(n, pair.claim, key): pair for n, _, _, key, pair in cites}  # the claim is the same with fewer keys
        if self._drop_unsupported(result, cites):
            cites = self._citations(result.paragraphs, by_paper, key_to_paper)
            for n, _, _, key, pair in cites:
                checked = verdicts[(n, pair.claim, key)]
                pair.quote, pair.verdict, pair.reason = checked.quote, checked.verdict, checked.reason

        body_offset = len(f"# {result.title}\n\n")
        offsets, offset = [], body_offset
        for paragraph in result.paragraphs:
            offsets.append(offset)
            offset += len(paragraph.text) + 2
        for n, start, end, key, pair in cites:
            pid = key_to_paper[key]
            paper = self.library_papers[pid]
            e = pair.evidence
            verdict, note, quote_text = pair.verdict, pair.reason, pair.quote
            status = STATUS_OF.get(verdict, CitationStatus.UNSUPPORTED.value)
            result.ledger.append(LedgerRow(
                paragraph=n, claim=pair.claim, key=key, paper_id=pid, title=paper.title,
                authors="; ".join(paper.authors), year=paper.year, page=e.page, page_label=e.page_label or str(e.page),
                quote=clip_words(quote_text or quote(e.text, pair.claim)), vector_score=vector_score(e, self.params),
                llm_score=e.llm_score, combined_score=e.score, support=verdict, status=status, query=e.query,
                support_note=note,
            ))
            result.citations.append(Citation(
                raw=f"[@{key}]", paper_id=pid, page=e.page, status=status,
                start=offsets[n - 1] + start, end=offsets[n - 1] + end,
                evidence_number=e.number, note=key, support=verdict, quote=quote_text,
            ))
        for n, paragraph in enumerate(result.paragraphs, 1):
            for e_key, e_page, words in copied_runs(paragraph.text, by_paper, self.keys):
                result.warnings.append(f"Paragraph {n} repeats {words}+ words verbatim from [@{e_key}] page {e_page}; rephrase it before use.")
        cited = result.cited_keys()
        result.keys = {key_to_paper[k]: k for k in cited}
        result.papers = {pid: self.library_papers[pid] for pid in result.keys}
        total = len(result.ledger)
        supported = sum(r.support == Support.SUPPORTED.value for r in result.ledger)
        partial = sum(r.support == Support.PARTIAL.value for r in result.ledger)
        unsupported = total - supported - partial
        if unsupported or partial:
            parts = [f"{supported} of {total} citations supported"]
            if partial:
                parts.append(f"{partial} only partly (marked ?)")
            if unsupported:
                parts.append(f"{unsupported} not supported by the passage they cite (marked ✗)")
            result.warnings.append("Support check: " + ", ".join(parts) + "; see the ledger's support column, and check or rewrite those sentences.")
        for r in result.ledger:
            if r.support == Support.UNSUPPORTED.value:
                result.warnings.append(f"Paragraph {r.paragraph}: [@{r.key}] (page {r.page}) does not support “{_clip_chars(r.claim, 140)}”"
                                       + (f" ({r.support_note})." if r.support_note else "."))

    def _citations(self, paragraphs: list[Paragraph], by_paper: dict[str, list[Evidence]],
                   key_to_paper: dict[str, str]) -> list[tuple[int, int, int, str, Pair]]:
        """(paragraph number, key start, key end, key, the pair to check) for every key in the text, in order."""
        out = []
        for n, paragraph in enumerate(paragraphs, 1):
            for m in _MARKER.finditer(paragraph.text):
                claim = claim_of(paragraph.text, m.start())
                for km in re.finditer(r"@([A-Za-z0-9_:\-]+)", m.group(0)):
                    key = km.group(1)
                    e, _ = best_passage(claim, by_paper[key_to_paper[key]])
                    out.append((n, m.start() + km.start(), m.start() + km.end(), key, Pair(claim, e)))
        return out

    def _check(self, result: DraftResult, pairs: list[Pair]) -> None:
        """The support check on all pairs in one call: fills each pair's verdict, reason and quote.

        The model's verdict is asked for when it can be had before the writer's grace
        period ends (and the check is on in Settings); otherwise the rules decide
        (numbers and names must occur in the passage), and a warning says so.
        """
        if not pairs:
            return
        chat = self._chat_model()
        left = self.budget.remaining()
        predicted = self.check_cost_s(len(pairs))
        use_model = self.funnel.params.check_support and (math.isinf(left) or predicted <= left + self._grace_s())
        # Names a sentence may take from the cited paper itself ("Zeileis (2004) shows …").
        papers = dict.fromkeys(p.evidence.paper_id for p in pairs)
        context = " ".join(f"{self.library_papers[pid].title} {author_names(self.library_papers[pid])} {self.library_papers[pid].year}"
                           for pid in papers)
        started = self.budget.clock()
        check_pairs(pairs, chat if use_model else None, context=context, cancelled=self.user_cancelled,
                    timeout_s=self.funnel.params.synthesis_timeout_s)
        result.timings["check_s"] = round(self.budget.clock() - started, 2)
        if not use_model:
            why = "the support check is off in Settings" if not self.funnel.params.check_support else (
                f"no time was left for the model's check (~{predicted:.0f} s)")
            result.warnings.append(f"Citations were checked by rules only (numbers and names must occur in the passage): {why}.")

    def _drop_unsupported(self, result: DraftResult, cites: list[tuple[int, int, int, str, Pair]]) -> int:
        """Remove an unsupported key from a citation group where another key of the group stands.

        A sentence whose only citations are unsupported keeps them, flagged: removing them
        would leave a claim with no source at all. Returns how many keys were removed.
        """
        removed = 0
        for n in sorted({c[0] for c in cites}):
            paragraph = result.paragraphs[n - 1]
            text = paragraph.text
            groups: dict[int, list[tuple[str, Pair]]] = {}
            markers = list(_MARKER.finditer(text))
            for pn, start, _, key, pair in cites:
                if pn == n:
                    group = next(m for m in markers if m.start() <= start < m.end())
                    groups.setdefault(group.start(), []).append((key, pair))
            for m in reversed(markers):
                members = groups.get(m.start(), [])
                good = [k for k, p in members if p.verdict != Support.UNSUPPORTED.value]
                bad = [(k, p) for k, p in members if p.verdict == Support.UNSUPPORTED.value]
                if not good or not bad:
                    continue
                text = text[: m.start()] + "[" + "; ".join("@" + k for k in dict.fromkeys(good)) + "]" + text[m.end():]
                for key, pair in bad:
                    removed += 1
                    result.warnings.append(
                        f"Paragraph {n}: removed [@{key}] from “{_clip_chars(pair.claim, 140)}”: the support check found that "
                        f"its passage (page {pair.evidence.page}) does not state this"
                        + (f" ({pair.reason})" if pair.reason else "") + "; the sentence keeps its other citation.")
            if text != paragraph.text:
                result.paragraphs[n - 1] = Paragraph(text=text, keys=citation_keys_in(text), complete=paragraph.complete)
        return removed

    # -- reporting helpers ---------------------------------------------------------------
    def _digest(self, limit: int = 8) -> str:
        best = sorted(self.pool, key=lambda e: -e.score)[:limit]
        if not best:
            return "(nothing yet)"
        return "\n".join(
            f"- [@{self.keys.get(e.paper_id, e.paper_id)}] page {e.page}: {_clip_chars(e.summary or e.text, 200)}" for e in best
        )

    def _papers_line(self) -> str:
        counts: dict[str, int] = {}
        for e in self.pool:
            counts[e.paper_id] = counts.get(e.paper_id, 0) + 1
        complete = sum(1 for p in self.library_papers.values() if p.complete)
        listed = ", ".join(f"{self.keys.get(pid, pid)} ({n} passages)" for pid, n in sorted(counts.items(), key=lambda t: -t[1]))
        return f"{len(counts)} of {complete} papers in the library" + (f": {listed}" if listed else "")

    def _progress(self, fraction: float, message: str) -> None:
        self.funnel.progress(fraction, message)
        self.funnel._emit("stage", (fraction, message))

    def _note_draft(self, message: str) -> None:
        self.notes.append(message)
        self.funnel.progress(-1, f"Deep: {message}")


def draft_section(
    desk,
    section: str,
    context: DraftContext,
    *,
    time_minutes: float | None = 5.0,
    params: DraftParams | None = None,
    progress=None,
    cancelled: IsCancelled | None = None,
    on_event=None,
    started_at: float | None = None,
) -> DraftResult:
    """Draft `section` for `context` from the desk's library (CLI and UI entry point).

    The time budget counts from `started_at` (a `time.monotonic()` reading, e.g.
    when the user pressed the button) or from now.
    """
    started_at = time.monotonic() if started_at is None else started_at
    funnel = desk.funnel(progress=progress, cancelled=cancelled, on_event=on_event)
    drafter = SectionDrafter(funnel, desk.settings.deep, section, context, time_minutes=time_minutes, params=params,
                             cancelled=cancelled, started_at=started_at)
    return drafter.run()


# -- evidence selection ------------------------------------------------------------------
def _ident(e: Evidence) -> tuple[str, int, int]:
    return (e.paper_id, e.page, e.char_start)


def select_evidence(pool: list[Evidence], limit: int, max_per_paper: int = 2) -> list[Evidence]:
    """Diversity first: each paper's best passage, then passages a search needs, then the rest.

    1. The best passage of every paper, best papers first.
    2. A further passage of a paper when it is the best remaining evidence for a
       search that no chosen passage answers yet (the paper is needed for it).
    3. With room left, further passages by score, at most `max_per_paper` per paper.
    The order is the priority: a small context drops the tail first.
    """
    ranked = sorted(pool, key=lambda e: -e.score)
    chosen: list[Evidence] = []
    taken: set[tuple[str, int, int]] = set()
    per_paper: dict[str, int] = {}

    def take(e: Evidence) -> None:
        chosen.append(e)
        taken.add(_ident(e))
        per_paper[e.paper_id] = per_paper.get(e.paper_id, 0) + 1

    for e in ranked:
        if len(chosen) >= limit:
            break
        if e.paper_id not in per_paper:
            take(e)
    answered = {e.query for e in chosen}
    for e in ranked:
        if len(chosen) >= limit:
            break
        if _ident(e) not in taken and e.query not in answered:
            take(e)
            answered.add(e.query)
    for e in ranked:
        if len(chosen) >= limit:
            break
        if _ident(e) not in taken and per_paper.get(e.paper_id, 0) < max_per_paper:
            take(e)
    return chosen


# -- the writer's reply ------------------------------------------------------------------
def section_schema(keys: list[str], max_paragraphs: int) -> dict[str, Any]:
    """Paragraphs whose `cites` can only be keys of the offered evidence, at least one each."""
    return {
        "type": "object",
        "properties": {
            "paragraphs": {
                "type": "array",
                "minItems": 1,
                "maxItems": max(1, max_paragraphs),
                "items": {
                    "type": "object",
                    "properties": {
                        "cites": {"type": "array", "items": {"type": "string", "enum": keys}, "minItems": 1, "maxItems": max(1, min(4, len(keys)))},
                        "text": {"type": "string", "minLength": 40},
                    },
                    "required": ["cites", "text"],
                },
            }
        },
        "required": ["paragraphs"],
    }


def parse_paragraphs(raw: str) -> list[tuple[dict[str, Any], bool]]:
    """The paragraphs in a reply, complete or not: (item, complete) pairs.

    A complete document parses as JSON. A reply cut off mid-way (time,
    tokens, a loop) keeps every finished paragraph object and, from the
    unfinished one, its `cites` (written first) and the text so far.
    """
    try:
        data = json.loads(raw)
        items = data.get("paragraphs", []) if isinstance(data, dict) else []
        return [(i, True) for i in items if isinstance(i, dict)]
    except ValueError:
        pass
    m = re.search(r'"paragraphs"\s*:\s*\[', raw)
    if not m:
        return []
    decoder = json.JSONDecoder()
    pos, out = m.end(), []
    while pos < len(raw):
        while pos < len(raw) and raw[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(raw) or raw[pos] == "]":
            break
        try:
            obj, pos = decoder.raw_decode(raw, pos)
        except ValueError:
            partial = _partial_object(raw[pos:])
            if partial:
                out.append((partial, False))
            break
        if isinstance(obj, dict):
            out.append((obj, True))
    return out


def _partial_object(fragment: str) -> dict[str, Any] | None:
    item: dict[str, Any] = {}
    cites = re.search(r'"cites"\s*:\s*(\[[^\]]*\])', fragment)
    if cites:
        try:
            item["cites"] = json.loads(cites.group(1))
        except ValueError:
            pass
    text = re.search(r'"text"\s*:\s*"', fragment)
    if text:
        rest = fragment[text.end():]
        closed = re.search(r'(?<!\\)(?:\\\\)*"', rest)
        if closed:
            rest = rest[: closed.end() - 1]
        for trim in range(0, 7):  # drop a half-written escape at the end
            try:
                item["text"] = json.loads('"' + rest[: len(rest) - trim] + '"')
                break
            except ValueError:
                continue
    return item if item.get("text") else None


# -- citations in the text ---------------------------------------------------------------
_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use marks around resolved keys while processing
_MARKER = re.compile(r"\[@[^\[\]]+\]")
_AT_BRACKET = re.compile(r"\[([^\[\]\n]*@[^\[\]\n]*)\]")
_LATEX_CITE = re.compile(r"\\(?:cite|citep|citet|parencite|textcite)\*?\{([^{}]*)\}")
_BARE_AT = re.compile(r"(?<![\w@.\ue000])@([A-Za-z][A-Za-z0-9_:\-]*)")
_AUTHOR_YEAR = re.compile(
    r"[\(\[]\s*(?P<name>[A-Z][A-Za-z'\-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][A-Za-z'\-]+)?,?\s+(?P<year>(?:19|20)\d{2})[a-z]?\s*[\)\]]"
)
_PLAIN_KEY = re.compile(r"\[([a-z][a-z]*(?:\d{4}|nd)[a-z0-9]*)\]")
# Narrative mentions, "Zeileis et al. (2004) show …": the text stays, the key is added to the sentence.
_NARRATIVE = re.compile(r"\b(?P<name>[A-Z][A-Za-z'\-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][A-Za-z'\-]+)?\s+\((?P<year>(?:19|20)\d{2})[a-z]?\)")


def citation_keys_in(text: str) -> list[str]:
    keys: list[str] = []
    for m in _MARKER.finditer(text):
        for k in re.findall(r"@([A-Za-z0-9_:\-]+)", m.group(0)):
            if k not in keys:
                keys.append(k)
    return keys


def _ascii_lower(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def finish_paragraph(
    number: int,
    text: str,
    cites: list[str],
    complete: bool,
    offered: list[Evidence],
    keys: dict[str, str],
    library: dict[str, Paper],
) -> tuple[Paragraph | None, list[str]]:
    """Clean one paragraph and make its citations resolvable. Returns (paragraph or None, warnings)."""
    warnings: list[str] = []
    offered_keys = {keys[e.paper_id]: e.paper_id for e in offered}
    lower_offered = {k.lower(): k for k in offered_keys}
    library_keys = {k.lower(): pid for pid, k in keys.items()}

    text = " ".join(re.sub(r"^\s*#+\s.*$", " ", text, flags=re.M).split())
    text, looped = trim_repetition(text)
    if looped:
        warnings.append(f"Paragraph {number}: the model repeated itself; the repetition was cut.")
    if not complete:
        text = to_sentence_end(text)

    def resolve(candidates: list[str], raw: str) -> str:
        kept = []
        for cand in candidates:
            key = lower_offered.get(cand.strip().lower())
            if key:
                if key not in kept:
                    kept.append(key)
            elif cand.strip().lower() in library_keys:
                warnings.append(f"Paragraph {number}: removed {raw!r}: that library paper is not in the evidence gathered for this section.")
            else:
                warnings.append(f"Paragraph {number}: removed {raw!r}: the key is not in the evidence (invented by the model).")
        return _OPEN + ";".join(kept) + _CLOSE if kept else " "

    text = _AT_BRACKET.sub(lambda m: resolve(re.findall(r"@([A-Za-z0-9_:\-]+)", m.group(1)), m.group(0)), text)
    text = _LATEX_CITE.sub(lambda m: resolve([k for k in m.group(1).split(",") if k.strip()], m.group(0)), text)
    text = _BARE_AT.sub(lambda m: resolve([m.group(1)], m.group(0)), text)

    def first_author_is(pid: str, name: str, year: str) -> bool:
        p = library[pid]
        return p.year == year and bool(p.authors) and _ascii_lower(family_name(p.authors[0])) == name

    def author_year(m: re.Match) -> str:
        name, year = _ascii_lower(m.group("name")), m.group("year")
        matches = [k for k, pid in offered_keys.items() if first_author_is(pid, name, year)]
        if len(matches) == 1:
            return _OPEN + matches[0] + _CLOSE
        if len(matches) > 1:
            warnings.append(f"Paragraph {number}: removed {m.group(0)!r}: it matches several papers in the evidence ({', '.join(matches)}).")
            return " "
        known = any(first_author_is(pid, name, year) for pid in library)
        why = "that library paper is not in the evidence gathered for this section" if known else "no paper in the evidence has that author and year (invented by the model)"
        warnings.append(f"Paragraph {number}: removed {m.group(0)!r}: {why}.")
        return " "

    text = _AUTHOR_YEAR.sub(author_year, text)
    text = _PLAIN_KEY.sub(lambda m: resolve([m.group(1)], m.group(0)) if m.group(1) in library_keys else m.group(0), text)
    text = _tidy(text)
    # A narrative mention of an offered paper gets its key in the same sentence; any other is flagged.
    for m in reversed(list(_NARRATIVE.finditer(text))):
        name, year = _ascii_lower(m.group("name")), m.group("year")
        matches = [k for k, pid in offered_keys.items() if first_author_is(pid, name, year)]
        if len(matches) == 1:
            span = next(((a, b) for a, b in _sentences(text) if a <= m.start() < b), None)
            if span and matches[0] not in _marked_keys(text[span[0]:span[1]]):
                text = _cite_sentence(text, span, matches[0])
        else:
            why = "several papers in the evidence match it" if matches else "no paper in the evidence matches it"
            warnings.append(f"Paragraph {number} mentions {m.group(0)!r}, but {why}; check or remove that mention.")

    declared: list[str] = []
    for k in cites:
        key = lower_offered.get(k.strip().lower())
        if key is None:
            warnings.append(f"Paragraph {number}: dropped the listed key {k!r}: it is not in the evidence.")
        elif key not in declared:
            declared.append(key)
    present = set(_marked_keys(text))
    by_key: dict[str, list[Evidence]] = {}
    for e in offered:
        by_key.setdefault(keys[e.paper_id], []).append(e)
    for key in declared:
        if key not in present:
            text = _place(text, key, by_key[key])
            present.add(key)
    if not present and len(text.split()) >= 5:
        # Only when the backend ignored the schema: cite the best-supporting offered passage.
        best = max(offered_keys, key=lambda k: max(support(text, e.text) for e in by_key[k]))
        text = _place(text, best, by_key[best])
        warnings.append(f"Paragraph {number}: the model cited nothing; [@{best}] was attached as the best-supporting evidence.")
    text = _render_markers(text)
    if len(re.sub(r"\[@[^\]]*\]", "", text).split()) < 5:
        warnings.append(f"Paragraph {number} was dropped: almost no text was left after cleaning.")
        return None, warnings
    if not complete:
        warnings.append(f"Paragraph {number} was cut off by the time or token limit and ends early.")
    return Paragraph(text=text, keys=citation_keys_in(text), complete=complete), warnings


def _marked_keys(text: str) -> list[str]:
    return [k for m in re.finditer(_OPEN + "([^" + _CLOSE + "]*)" + _CLOSE, text) for k in m.group(1).split(";") if k]


def _tidy(text: str) -> str:
    # A citation after the full stop moves before it ("claim. [@k]" → "claim [@k].").
    text = re.sub(r"([.!?])\s*(" + _OPEN + "[^" + _CLOSE + "]*" + _CLOSE + ")", r" \2\1", text)
    # Adjacent citations merge into one bracket.
    pattern = re.compile(_OPEN + "([^" + _CLOSE + "]*)" + _CLOSE + r"\s*[;,]?\s*" + _OPEN + "([^" + _CLOSE + "]*)" + _CLOSE)
    while pattern.search(text):
        text = pattern.sub(lambda m: _OPEN + ";".join(dict.fromkeys((m.group(1) + ";" + m.group(2)).split(";"))) + _CLOSE, text)
    text = re.sub(r"\(\s*\)|\[\s*\]", " ", text)  # brackets emptied by removals
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    text = re.sub(r"\s+(" + _OPEN + ")", r" \1", text)
    return " ".join(text.split())


_ABBREVIATION = re.compile(r"(?:\bet al|\be\.g|\bi\.e|\bcf|\bFigs?|\bEqs?|\bSecs?|\bvs|\bapprox|\bpp?|\bNo|\b[A-Z])\.$")


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z\"“(\[])", text):
        if _ABBREVIATION.search(text[max(0, m.start() - 8) : m.start()]):
            continue  # "et al. (2004)", "e.g. Smith", "A. Zeileis"
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _place(text: str, key: str, passages: list[Evidence]) -> str:
    """Put [@key] after the sentence its passages support best (the last one if none does)."""
    spans = _sentences(text)
    if not spans:
        return text + f" {_OPEN}{key}{_CLOSE}"
    scores = [max(support(_strip_marks(text[a:b]), e.text) for e in passages) for a, b in spans]
    best = max(range(len(spans)), key=lambda i: (scores[i], i)) if max(scores) > 0 else len(spans) - 1
    return _cite_sentence(text, spans[best], key)


def _cite_sentence(text: str, span: tuple[int, int], key: str) -> str:
    """Add [@key] at the end of the sentence at `span`, merged with a citation already there."""
    a, b = span
    sentence = text[a:b]
    m = re.search(_OPEN + "([^" + _CLOSE + "]*)" + _CLOSE + r"(\W*)$", sentence)
    if m:  # merge with a citation that already ends the sentence
        keys = ";".join(dict.fromkeys(m.group(1).split(";") + [key]))
        sentence = sentence[: m.start()] + _OPEN + keys + _CLOSE + m.group(2)
    else:
        m = re.search(r"([.!?]*)$", sentence)
        sentence = sentence[: m.start()].rstrip() + f" {_OPEN}{key}{_CLOSE}" + m.group(1)
    return text[:a] + sentence + text[b:]


def _strip_marks(text: str) -> str:
    return re.sub(_OPEN + "[^" + _CLOSE + "]*" + _CLOSE, " ", text)


def _render_markers(text: str) -> str:
    return re.sub(_OPEN + "([^" + _CLOSE + "]*)" + _CLOSE, lambda m: "[" + "; ".join("@" + k for k in m.group(1).split(";") if k) + "]", text)


# -- the ledger ------------------------------------------------------------------------------
def claim_of(text: str, position: int) -> str:
    """The sentence a citation at `position` belongs to, without citations."""
    for a, b in _sentences(text):
        if a <= position <= b:
            return " ".join(_MARKER.sub(" ", text[a:b]).split()).replace(" .", ".")
    return " ".join(_MARKER.sub(" ", text).split())


def best_passage(claim: str, passages: list[Evidence]) -> tuple[Evidence, float]:
    scored = sorted(((support(claim, e.text), e.score, i) for i, e in enumerate(passages)), reverse=True)
    s, _, i = scored[0]
    return passages[i], s


def quote(passage: str, claim: str, max_words: int = QUOTE_WORDS) -> str:
    """The passage's sentence closest to the claim, at most `max_words` words."""
    text = " ".join(passage.replace("#", " ").split())
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 3] or [text]
    best = max(sentences, key=lambda s: (support(claim, s), -sentences.index(s)))
    words = best.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


def clip_words(text: str, max_words: int = QUOTE_WORDS) -> str:
    words = " ".join(text.replace("#", " ").split()).split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


def vector_score(e: Evidence, params: DeepParams) -> float | None:
    """The passage's cosine similarity: stored, or recovered from the combined score."""
    stored = getattr(e, "vector_score", None)
    if stored is not None:
        return stored
    if e.llm_score is None:
        return e.score  # unscored passages rank by their vector score alone
    if not params.vector_weight:
        return None
    return round((e.score - params.llm_weight * e.llm_score) / params.vector_weight, 3)


def copied_runs(text: str, by_paper: dict[str, list[Evidence]], keys: dict[str, str]) -> list[tuple[str, int, int]]:
    """(key, page, words) for passages the paragraph copies COPY_WORDS+ words from."""
    words = re.findall(r"[a-z0-9]+", _MARKER.sub(" ", text).lower())
    grams = {tuple(words[i : i + COPY_WORDS]) for i in range(len(words) - COPY_WORDS + 1)}
    if not grams:
        return []
    hits = []
    for pid, passages in by_paper.items():
        for e in passages:
            pw = re.findall(r"[a-z0-9]+", e.text.lower())
            if any(tuple(pw[i : i + COPY_WORDS]) in grams for i in range(len(pw) - COPY_WORDS + 1)):
                hits.append((keys[pid], e.page, COPY_WORDS))
    return hits


# -- small helpers -------------------------------------------------------------------------
def author_names(paper: Paper) -> str:
    """'Zeileis', 'Zeileis and Hothorn', 'Berger et al.' (empty without authors)."""
    if not paper.authors:
        return ""
    first = family_name(paper.authors[0])
    if len(paper.authors) == 2:
        return f"{first} and {family_name(paper.authors[1])}"
    return f"{first}{' et al.' if len(paper.authors) > 2 else ''}"


def author_year(paper: Paper) -> str:
    """'Zeileis et al. (2022)' for reference lists."""
    return f"{author_names(paper) or 'Anonymous'} ({paper.year or 'n.d.'})"


def section_instructions(section: str) -> str:
    text = load_prompt("draft_instructions.md")
    parts = re.split(r"^## +(\S+)\s*$", text, flags=re.M)
    table = {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    return table[section]


def _validate_decision(d: Any) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise ValueError("the decision must be a JSON object")
    missing = [k for k in DECISION_SCHEMA["required"] if k not in d]
    if missing:
        raise ValueError(f"missing keys: {', '.join(missing)}")
    if not isinstance(d["missing"], list) or not isinstance(d["covered"], list):
        raise ValueError("covered and missing must be lists")
    d["sufficient"] = bool(d["sufficient"])
    return d


def _norm(query: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", query.lower()))


def _clip_chars(text: str, n: int) -> str:
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    return text[:n].rsplit(" ", 1)[0] + " …"
