"""The research funnel (standard mode): scope → evidence → synthesis → formatting.

Stage 1 searches the summary side of the index (abstracts, headings, LLM
summaries, notes) to shortlist papers; stage 2 searches the full text of the
shortlisted papers only (LanceDB prefilter); stage 3 asks the chat model for a
cited answer from that evidence alone; stage 4 checks every citation against
the evidence and builds the references.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..library import table_reader
from ..callbacks import check_cancelled
from ..events import CancelToken, EvidenceFound, Shortlisted, Task
from ..errors import (
    NoIndexedContent,
    NoRelevantPapers,
    ResearchDeskError,
    SynthesisFailed,
)
from ..library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library
from ..models.base import ChatModel, EmbeddingModel
from ..text.wording import plural
from ..records import Evidence, Paper, ResearchResult
from ..settings import ResearchParams
from .evidence import retrieval
from .evidence.mmr import mmr, scale01
from .evidence.size import candidates_to_fetch, within_tokens
from .evidence.not_evidence import is_back_matter_passage, is_reference_list
from .answer.references import build_references, references_markdown
from .answer.unmentioned import caution, named, unmentioned

log = logging.getLogger(__name__)

# The funnel's stages, as Stage events name them (index = position + 1).
STAGES = ("scope", "evidence", "synthesis", "check")


# Cutoffs used when the embedding model has no calibrated values in the catalog.
FALLBACK_CUTOFFS = (0.2, 0.2)
EVIDENCE_POOL = 2  # candidates fetched per evidence passage kept, for the cutoff and MMR to choose from


@dataclass
class Cutoffs:
    summaries: float
    evidence: float
    source: str = "catalog"


def resolve_cutoffs(params: ResearchParams, embedding_model: str) -> Cutoffs:
    """User setting if set, else the embedding model's calibrated defaults.

    `embedding_model` is a catalog id, a GGUF path, or a server model name.
    """
    from ..models import catalog

    calibrated = catalog.cutoffs(embedding_model.split(":", 1)[-1])
    source = "catalog" if calibrated else "fallback"
    s, e = (calibrated.summaries, calibrated.evidence) if calibrated else FALLBACK_CUTOFFS
    if params.cutoff_summaries is not None:
        s, source = params.cutoff_summaries, "settings"
    if params.cutoff_evidence is not None:
        e, source = params.cutoff_evidence, "settings"
    return Cutoffs(s, e, source)


@dataclass
class Funnel:
    library: Library
    embedder: EmbeddingModel
    params: ResearchParams
    cutoffs: Cutoffs
    chat_model: Callable[[], ChatModel] | None = None  # loaded only when synthesis needs it
    # Focusing counts in the chat model's tokens: the model where loaded (never loads it), else its vocabulary.
    loaded_chat: Callable[[], ChatModel | None] | None = None
    chat_tokens: Callable[[], Callable[[str], int] | None] | None = None
    task: Task = field(default_factory=Task)  # events out (stages, evidence, tokens, claims), cancel in
    # Deep research sizes the final synthesis to the time left (tokens); None: by context only.
    answer_tokens_override: int | None = None
    evidence_tokens_override: int | None = None
    # The ids a scoped question may read (scope.py); None: the whole library.
    scope: frozenset[str] | None = None
    _papers: dict[str, Paper] = field(default_factory=dict)

    @property
    def cancelled(self) -> CancelToken:
        """The task's cancel token (callable: True once the user asked to stop)."""
        return self.task.token

    # -- the whole run ---------------------------------------------------------
    def run(self, query: str, *, evidence_only: bool = False) -> ResearchResult:
        query = " ".join(query.split())
        result = ResearchResult(query=query)
        started = self._started = time.monotonic()
        self.load_papers()

        t = time.monotonic()
        qvec, shortlist, notes = self.embed_and_scope(query)
        result.papers = shortlist
        result.messages += notes
        result.timings["stage1_s"] = time.monotonic() - t
        check_cancelled(self.cancelled)

        t = time.monotonic()
        evidence, notes = self.gather(query, qvec, shortlist)
        result.evidence = evidence
        result.messages += notes
        self.mark_unmentioned(result, query, evidence)
        result.timings["stage2_s"] = time.monotonic() - t
        if evidence_only:
            result.timings["total_s"] = time.monotonic() - started
            return result
        check_cancelled(self.cancelled)

        if self.params.structured_answers or self.params.focus_prose:
            # The focused sentences are the first useful screen: shown before any model time is spent.
            from .answer.synthesis import focus_into

            focus_into(self, result, qvec)
            result.timings["evidence_s"] = round(self.elapsed(), 3)
            self.emit(EvidenceFound(result.evidence))
        self.synthesize_into(result)
        result.timings["total_s"] = time.monotonic() - started
        return result

    # -- stage 1 ------------------------------------------------------------------
    def embed_and_scope(self, query: str) -> tuple[np.ndarray, list[str], list[str]]:
        """Embed the query while stage 1's full-text searches run; then the shortlist of papers
        for the query (and notes on what the cutoff removed)."""
        complete, searches = self._start_scoping(query)
        qvec = self.embedder.embed_one(query)
        return (qvec, *self._shortlist(complete, *searches.finish(qvec)))

    def _start_scoping(self, query: str) -> tuple[frozenset[str], retrieval.Searches]:
        p = self.params
        self._stage(1, "Stage 1: searching summaries…")
        # The paper map was read at the start of the run; an import finishing since then
        # may have added ids to the library's newer list that the map lacks.
        complete = self.library.complete_paper_ids() & self._papers.keys()
        if not complete and self.scope is not None:
            raise NoRelevantPapers("No paper within the question's scope is indexed yet.", "Clear the scope or re-index those papers.")
        if not complete:
            raise NoRelevantPapers(
                "The library has no indexed papers yet.",
                "Add PDFs first (`research-desk add PATH` or drag them onto the window).",
            )
        # The summary search and the full-text probe (below) are independent, so they
        # run side by side (Lance releases the GIL). Stage 1 needs papers, not passages.
        return complete, retrieval.start([
            retrieval.Request(self.library.chunks_table(SUMMARY_CHUNKS), None, query, max(4 * p.k_summaries, 32), self.within(None),
                              hybrid=p.hybrid, details=False),
            retrieval.Request(self.library.chunks_table(CONTENT_CHUNKS), None, query, 24, self.within(None), hybrid=p.hybrid, details=False),
        ])

    def _shortlist(self, complete: frozenset[str], candidates: list[retrieval.Candidate], probe: list[retrieval.Candidate]) -> tuple[list[str], list[str]]:
        p = self.params
        candidates = [c for c in candidates if c.paper_id in complete]
        # Keyword matches alone never make a shortlist (BM25 matches common words in any
        # question): if nothing clears the cosine cutoff, nothing in the library matches.
        # Papers whose vectors are still being computed have only their words: those stay.
        if not any(c.cosine >= self.cutoffs.summaries for c in candidates) and not any(
            c.cosine >= self.cutoffs.evidence for c in probe if c.paper_id in complete
        ):
            candidates, probe = [c for c in candidates if c.vector_pending], [c for c in probe if c.vector_pending]
        passing = [c for c in candidates if c.passes(self.cutoffs.summaries)]
        notes = []
        if len(passing) < len(candidates):
            notes.append(f"Stage 1: the similarity cutoff {self.cutoffs.summaries:.2f} removed {len(candidates) - len(passing)} of {len(candidates)} summary passages.")

        shortlist: list[str] = []
        if passing:
            order = mmr(scale01([c.relevance for c in passing]), np.stack([c.vector for c in passing]), p.k_summaries, p.mmr_lambda_summaries)
            for i in order:
                if passing[i].paper_id not in shortlist:
                    shortlist.append(passing[i].paper_id)
            # Top up to the minimum with the next-best papers by relevance.
            for c in passing:
                if len(shortlist) >= p.min_shortlist:
                    break
                if c.paper_id not in shortlist:
                    shortlist.append(c.paper_id)

        # Summaries are short and a question about a detail may match no summary well,
        # so the shortlist is widened with the papers whose full text matches best.
        probe_papers = [c.paper_id for c in probe if c.passes(self.cutoffs.evidence) and c.paper_id in complete]
        reserve = max(2, p.max_shortlist - p.min_shortlist)
        shortlist = shortlist[: p.max_shortlist - min(reserve, len(set(probe_papers) - set(shortlist)))]
        for pid in probe_papers:
            if len(shortlist) >= p.max_shortlist:
                break
            if pid not in shortlist:
                shortlist.append(pid)

        if not shortlist and self.scope is not None:
            raise NoRelevantPapers("No paper within the question's scope matches it closely enough.",
                                   "Clear the scope to ask the whole library, or rephrase the question.")
        if not shortlist:
            raise NoRelevantPapers(
                "No paper in the library matches this question closely enough.",
                "Rephrase the question with the terms the papers use, lower the similarity cutoff in Settings, or add papers on this topic.",
            )
        self._stage(1, f"Stage 1: searching summaries… found {plural(len(shortlist), 'paper')}")
        self.emit(Shortlisted([self._papers[pid] for pid in shortlist]))
        return shortlist, notes

    # -- stage 2 ------------------------------------------------------------------
    def gather(self, query: str, qvec: np.ndarray, shortlist: list[str]) -> tuple[list[Evidence], list[str]]:
        p = self.params
        self._stage(2, f"Stage 2: gathering evidence from {plural(len(shortlist), 'paper')}…")
        table = self.library.chunks_table(CONTENT_CHUNKS)
        candidates = retrieval.search(table, qvec, query, limit=candidates_to_fetch(p.k_evidence, p.evidence_tokens, EVIDENCE_POOL),
                                      papers=self.within(shortlist), hybrid=p.hybrid)
        if not candidates:  # only a shortlist with no indexed text can give nothing at all
            raise NoIndexedContent(
                "The shortlisted papers have no indexed full text.",
                "Re-index them (`research-desk rebuild-index`, or Re-index in the library's context menu).",
            )
        # Reference lists match many keywords (BM25 loves them) but are never evidence for a claim:
        # by their heading, or by their text where the layout gave them none; nor is the back matter:
        # acknowledgements, contributions, funding (not_evidence.py). Dropped here, not only in focusing,
        # because stage 2's passages are what the evidence pane and --evidence-only show the reader.
        candidates = [c for c in candidates if not is_reference_list(c.text, c.section) and not is_back_matter_passage(c.section, c.text)]
        # Within papers stage 1 judged relevant, a top keyword match is kept even below the
        # cosine cutoff (stage 1 applies the cutoff strictly: it decides "nothing matches").
        passing = [c for c in candidates if c.passes(self.cutoffs.evidence)]
        notes = []
        if words_only := [pid for pid in shortlist if pid in self._papers and self._papers[pid].vectors_pending]:
            notes.append(retrieval.words_only_note(len(words_only)))
        if len(passing) < len(candidates):
            notes.append(f"Stage 2: the similarity cutoff {self.cutoffs.evidence:.2f} removed {len(candidates) - len(passing)} of {len(candidates)} passages.")
        if not passing and candidates:
            # Never leave the model with nothing: keep the few best and say so.
            passing = candidates[:3]
            notes.append("Stage 2: no passage reached the similarity cutoff; the 3 best matches are used, so the answer may be weak.")
        # Evidence counted in tokens: at least k_evidence passages, more while they fit evidence_tokens (evidence_size.py);
        # a page's second text chunk after the other pages' best (same_page_similarity, docs/lab/).
        order = mmr(scale01([c.relevance for c in passing]), np.stack([c.vector for c in passing]), len(passing), p.mmr_lambda_evidence,
                    retrieval.page_groups(passing), p.same_page_similarity) if passing else []
        order = within_tokens([passing[i].text for i in order], p.k_evidence, p.evidence_tokens, order)
        evidence = [Evidence(number=n, paper_id=c.paper_id, page=c.page, page_label=c.page_label, section=c.section,
                             text=c.text, score=round(c.cosine, 4), stage="stage2", query=query,
                             char_start=c.char_start, char_end=c.char_end)
                    for n, c in enumerate((passing[i] for i in order), 1)]
        self._stage(2, f"Stage 2: gathering evidence from {plural(len(shortlist), 'paper')}… {plural(len(evidence), 'passage')}")
        self.emit(EvidenceFound(evidence))
        return evidence, notes

    def mark_unmentioned(self, result: ResearchResult, query: str, evidence: list[Evidence]) -> None:
        """The question's words no paper contains, and the caution where no passage comes close."""
        result.unmentioned = self.unmentioned_words(query)
        result.caution = caution(result.unmentioned, max((e.score for e in evidence), default=0.0), self.cutoffs.evidence)
        if result.caution:  # on screen with the evidence, before any model time
            self._stage(2, f"Stage 2: {plural(len(evidence), 'passage')}, none close to the question; "
                           f"no paper mentions {named(result.unmentioned)}")

    def unmentioned_words(self, query: str) -> list[str]:
        """The question's words that no paper of the library contains (research/answer/unmentioned.py)."""
        reader = table_reader.snapshot(self.library.chunks_table(CONTENT_CHUNKS))

        def mentioned(word: str) -> bool:
            try:
                return reader.full_text(word, 1).num_rows > 0
            except Exception as exc:  # noqa: BLE001 - no full-text index yet (or a word it cannot parse): claim nothing
                log.debug("full-text lookup of %r unavailable (%s); not named as unmentioned", word, exc)
                return True

        return unmentioned(query, mentioned)

    # -- stage 3 + 4 -------------------------------------------------------------------
    def synthesize_into(self, result: ResearchResult, *, template: str = "synthesis.md", extra: dict[str, str] | None = None) -> None:
        """Write the answer for `result.evidence` and check its citations (stages 3–4).

        The standard answer is claim-bound (synthesis.py); `improve` and models whose
        structured output fails twice use the free-text prompt and the citation parser.
        """
        from .check.support import uncalibrated_note

        written = False
        if template == "synthesis.md" and self.params.structured_answers:
            from .answer.synthesis import synthesize_claims

            written = synthesize_claims(self, result)
        if not written:
            from .answer.free_text import write_free_text

            write_free_text(self, result, template, extra or {})
        if self.params.check_support and result.citations and (note := uncalibrated_note(self.chat_loaded())):
            result.messages.append(note)

    def format_into(self, result: ResearchResult, answer: str) -> None:
        """Parse, check and number the citations of a free-text answer (stage 4)."""
        from .answer.free_text import format_into

        format_into(self, result, answer)

    # -- what synthesis.py and deep research share with the funnel ----------------------
    def load_chat(self) -> ChatModel:
        from .answer.prompt import read_answer_beginning

        self._chat = self._load_chat()
        read_answer_beginning(self._chat, self.params)  # read once per model; later answers restore it
        return self._chat

    def chat_loaded(self) -> ChatModel | None:
        return getattr(self, "_chat", None)

    def papers(self) -> dict[str, Paper]:
        return self._papers or self.load_papers()

    def load_papers(self) -> dict[str, Paper]:
        """The papers this run may read: the library's, narrowed to the scope (so a paper outside
        it is never shortlisted nor listed in the references, even if the model names it)."""
        papers = self.library.papers_by_id()
        self._papers = papers if self.scope is None else {pid: p for pid, p in papers.items() if pid in self.scope}
        return self._papers

    def within(self, papers: list[str] | None) -> list[str] | None:
        """A search's paper filter (None: the whole library) narrowed to the scope (a prefilter)."""
        if self.scope is None:
            return papers
        return sorted(self.scope if papers is None else self.scope.intersection(papers))

    def evidence_budget(self, chat: ChatModel | None = None, reserved: int = 0) -> int:
        """Tokens of evidence the prompt carries: the setting, within the context less `reserved`
        tokens of earlier turns (and deep's time left)."""
        budget = self.params.focus_tokens
        if chat is not None:
            room = chat.context_length - self.answer_tokens(chat, structured=True) - 320 - reserved
            budget = min(budget, room)
        if self.evidence_tokens_override is not None:
            budget = min(budget, self.evidence_tokens_override)
        return max(120, budget)

    def answer_tokens(self, chat: ChatModel, *, structured: bool = False) -> int:
        if structured:
            wanted = min(self.answer_tokens_override or self.params.claims_max_tokens, self.params.claims_max_tokens)
            return max(64, min(wanted, chat.context_length // 3))
        return self._answer_tokens(chat)

    def finish_references(self, result: ResearchResult) -> None:
        result.references = build_references(result.citations, self.papers())  # numbers the citations too

    def elapsed(self) -> float:
        return time.monotonic() - getattr(self, "_started", time.monotonic())

    def stage(self, stage: int, message: str) -> None:
        self._stage(stage, message)

    def emit(self, event) -> None:
        self.task.emit(event)

    def build_prompt(self, chat: ChatModel, query: str, evidence: list[Evidence], template: str, extra: dict[str, str]):
        """(messages, passages used, passages dropped): whole passages, best first, fitted to the context."""
        from .answer.free_text import build_prompt

        return build_prompt(self, chat, query, evidence, template, extra)

    def _answer_tokens(self, chat: ChatModel) -> int:
        wanted = self.answer_tokens_override or self.params.answer_max_tokens
        return max(64, min(wanted, chat.context_length // 3))

    def _load_chat(self) -> ChatModel:
        if self.chat_model is None:
            raise SynthesisFailed("No chat model is available.", "Configure a chat model in Settings or run `research-desk models setup`.")
        try:
            return self.chat_model()
        except ResearchDeskError as exc:
            raise SynthesisFailed(f"Synthesis failed: could not load the chat model — {exc.message}", exc.hint) from exc

    def _stage(self, stage: int, detail: str) -> None:
        self.task.stage(STAGES[stage - 1], stage, len(STAGES), detail)


def answer_with_references(result: ResearchResult) -> str:
    refs = references_markdown(result.references)
    warning = f"> {result.caution}\n\n" if result.caution and result.answer else ""
    return warning + result.answer.rstrip() + ("\n\n" + refs if refs else "\n")
