"""The research funnel (standard mode): scope → evidence → synthesis → formatting.

Stage 1 searches the summary side of the index (abstracts, headings, LLM
summaries, notes) to shortlist papers; stage 2 searches the full text of the
shortlisted papers only (LanceDB prefilter); stage 3 asks the chat model for a
cited answer from that evidence alone; stage 4 checks every citation against
the evidence and builds the references.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..callbacks import IsCancelled, OnToken, Progress, check_cancelled, no_progress
from ..errors import (
    Cancelled,
    ModelError,
    ModelTimeout,
    NoIndexedContent,
    NoRelevantPapers,
    ResearchDeskError,
    SynthesisFailed,
)
from ..library import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library
from ..models.base import ChatMessage, ChatModel, EmbeddingModel
from ..paths import load_prompt
from ..wording import plural, trim_repetition
from ..records import CitationStatus, Evidence, Paper, ResearchResult
from ..settings import ResearchParams
from . import retrieval
from .citations import ATTRIBUTED_NOTE, attribute_citations, check_citations, normalise_answer, parse_citations
from .mmr import mmr, scale01
from .references import build_references, references_markdown

CITATION_FORMAT = "[PAPER_ID, page N]"
LOOP_WORDS = 20  # a repeated run of this many words (tags included) means the answer is looping
EventSink = Callable[[str, Any], None]  # ("shortlist" | "evidence" | "stage", payload)

# Prompt templates with a numbered-citation variant (ResearchParams.citation_style).
NUMBERED_TEMPLATES = {"synthesis.md": "synthesis_numbered.md"}

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
    progress: Progress = no_progress
    cancelled: IsCancelled | None = None
    on_token: OnToken | None = None
    on_event: EventSink | None = None
    # Deep research sizes the final synthesis to the time left (tokens); None: by context only.
    answer_tokens_override: int | None = None
    evidence_tokens_override: int | None = None
    _papers: dict[str, Paper] = field(default_factory=dict)

    # -- the whole run ---------------------------------------------------------
    def run(self, query: str, *, evidence_only: bool = False) -> ResearchResult:
        query = " ".join(query.split())
        result = ResearchResult(query=query)
        started = self._started = time.monotonic()
        self._papers = self.library.papers_by_id()

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
        result.timings["stage2_s"] = time.monotonic() - t
        if evidence_only:
            result.timings["total_s"] = time.monotonic() - started
            return result
        check_cancelled(self.cancelled)

        if self.params.structured_answers:
            # The focused sentences are the first useful screen: shown before any model time is spent.
            from .synthesis import focus_into

            focus_into(self, result, qvec)
            result.timings["evidence_s"] = round(self.elapsed(), 3)
            self._emit("evidence", result.evidence)
        self.synthesize_into(result)
        result.timings["total_s"] = time.monotonic() - started
        return result

    # -- stage 1 ------------------------------------------------------------------
    def scope(self, query: str, qvec: np.ndarray) -> tuple[list[str], list[str]]:
        """The shortlist of papers for the query (and notes on what the cutoff removed)."""
        complete, searches = self._start_scoping(query)
        return self._shortlist(complete, *searches.finish(qvec))

    def embed_and_scope(self, query: str) -> tuple[np.ndarray, list[str], list[str]]:
        """Embed the query while stage 1's full-text searches run; then `scope`."""
        complete, searches = self._start_scoping(query)
        qvec = self.embedder.embed_one(query)
        return (qvec, *self._shortlist(complete, *searches.finish(qvec)))

    def _start_scoping(self, query: str) -> tuple[frozenset[str], retrieval.Searches]:
        p = self.params
        self._stage(1, "Stage 1: searching summaries…")
        # The paper map was read at the start of the run; an import finishing since then
        # may have added ids to the library's newer list that the map lacks.
        complete = self.library.complete_paper_ids() & self._papers.keys()
        if not complete:
            raise NoRelevantPapers(
                "The library has no indexed papers yet.",
                "Add PDFs first (`research-desk add PATH` or drag them onto the window).",
            )
        # The summary search and the full-text probe (below) are independent, so they
        # run side by side (Lance releases the GIL). Stage 1 needs papers, not passages.
        return complete, retrieval.start([
            retrieval.Request(self.library.chunks_table(SUMMARY_CHUNKS), None, query, max(4 * p.k_summaries, 32), hybrid=p.hybrid, details=False),
            retrieval.Request(self.library.chunks_table(CONTENT_CHUNKS), None, query, 24, hybrid=p.hybrid, details=False),
        ])

    def _shortlist(self, complete: frozenset[str], candidates: list[retrieval.Candidate], probe: list[retrieval.Candidate]) -> tuple[list[str], list[str]]:
        p = self.params
        candidates = [c for c in candidates if c.paper_id in complete]
        # Keyword matches alone never make a shortlist (BM25 matches common words in any
        # question): if nothing clears the cosine cutoff, nothing in the library matches.
        if not any(c.cosine >= self.cutoffs.summaries for c in candidates) and not any(
            c.cosine >= self.cutoffs.evidence for c in probe if c.paper_id in complete
        ):
            candidates, probe = [], []
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

        if not shortlist:
            raise NoRelevantPapers(
                "No paper in the library matches this question closely enough.",
                "Rephrase the question with the terms the papers use, lower the similarity cutoff in Settings, or add papers on this topic.",
            )
        self._stage(1, f"Stage 1: searching summaries… found {plural(len(shortlist), 'paper')}")
        self._emit("shortlist", [self._papers[pid] for pid in shortlist])
        return shortlist, notes

    # -- stage 2 ------------------------------------------------------------------
    def gather(self, query: str, qvec: np.ndarray, shortlist: list[str]) -> tuple[list[Evidence], list[str]]:
        p = self.params
        self._stage(2, f"Stage 2: gathering evidence from {plural(len(shortlist), 'paper')}…")
        table = self.library.chunks_table(CONTENT_CHUNKS)
        candidates = retrieval.search(table, qvec, query, limit=p.k_evidence * EVIDENCE_POOL, papers=shortlist, hybrid=p.hybrid)
        if not candidates:  # only a shortlist with no indexed text can give nothing at all
            raise NoIndexedContent(
                "The shortlisted papers have no indexed full text.",
                "Re-index them (`research-desk rebuild-index`, or Re-index in the library's context menu).",
            )
        # Reference lists match many keywords (BM25 loves them) but are never evidence for a claim.
        candidates = [c for c in candidates if not is_bibliography(c.section)]
        # Within papers stage 1 judged relevant, a top keyword match is kept even below the
        # cosine cutoff (stage 1 applies the cutoff strictly: it decides "nothing matches").
        passing = [c for c in candidates if c.passes(self.cutoffs.evidence)]
        notes = []
        if len(passing) < len(candidates):
            notes.append(f"Stage 2: the similarity cutoff {self.cutoffs.evidence:.2f} removed {len(candidates) - len(passing)} of {len(candidates)} passages.")
        if not passing and candidates:
            # Never leave the model with nothing: keep the few best and say so.
            passing = candidates[:3]
            notes.append("Stage 2: no passage reached the similarity cutoff; the 3 best matches are used, so the answer may be weak.")
        order = mmr(scale01([c.relevance for c in passing]), np.stack([c.vector for c in passing]), p.k_evidence, p.mmr_lambda_evidence) if passing else []
        evidence = [
            Evidence(
                number=n,
                paper_id=c.paper_id,
                page=c.page,
                page_label=c.page_label,
                section=c.section,
                text=c.text,
                score=round(c.cosine, 4),
                stage="stage2",
                query=query,
                char_start=c.char_start,
                char_end=c.char_end,
            )
            for n, c in enumerate((passing[i] for i in order), 1)
        ]
        self._stage(2, f"Stage 2: gathering evidence from {plural(len(shortlist), 'paper')}… {plural(len(evidence), 'passage')}")
        self._emit("evidence", evidence)
        return evidence, notes

    # -- stage 3 + 4 -------------------------------------------------------------------
    def synthesize_into(self, result: ResearchResult, *, template: str = "synthesis.md", extra: dict[str, str] | None = None) -> None:
        """Write the answer for `result.evidence` and check its citations (stages 3–4).

        The standard answer is claim-bound (synthesis.py); `improve` and models whose
        structured output fails twice use the free-text prompt and the citation parser.
        """
        if template == "synthesis.md" and self.params.structured_answers:
            from .synthesis import synthesize_claims

            if synthesize_claims(self, result):
                return
        t = time.monotonic()
        self._stage(3, "Stage 3: synthesizing…")
        chat = self.load_chat()  # kept on the funnel: the support check of the parsed citations uses it too
        messages, used, dropped = self.build_prompt(chat, result.query, result.evidence, template, extra or {})
        if dropped:
            result.messages.append(f"Stage 3: {dropped} lower-ranked passages did not fit the model's context window (or, in deep mode, the time left) and were not sent.")
        result.evidence = used
        # Small models can fall into a loop, restating the same sentences until the token
        # limit: watch the stream, stop it at the first long repeated run, keep what came before.
        tokens: list[str] = []
        looping = {"now": False}

        def on_token(token: str) -> None:
            tokens.append(token)
            if len(tokens) % 16 == 0 and trim_repetition("".join(tokens), LOOP_WORDS)[1]:
                looping["now"] = True
            if self.on_token is not None:
                self.on_token(token)

        def cancelled() -> bool:
            return looping["now"] or (self.cancelled is not None and self.cancelled())

        try:
            answer = chat.chat(
                messages,
                max_tokens=self._answer_tokens(chat),
                temperature=self.params.temperature,
                on_token=on_token,
                cancelled=cancelled,
                timeout_s=self.params.synthesis_timeout_s,
            )
        except Cancelled:
            if not looping["now"] or (self.cancelled is not None and self.cancelled()):
                raise
            answer = "".join(tokens)
        except SynthesisFailed:
            raise
        except ModelTimeout as exc:
            raise SynthesisFailed(f"Synthesis failed: the model timed out ({exc.message}).", "Retry, raise the timeout in Settings, or use a faster model.") from exc
        except ModelError as exc:
            raise SynthesisFailed(f"Synthesis failed: model error — {exc.message}", exc.hint or "Retry, or choose another model in Settings.") from exc
        answer, looped = trim_repetition(answer, LOOP_WORDS)
        if looped:
            result.messages.append("Stage 3: the model started repeating itself; the answer was cut before the repetition.")
        if not answer.strip():
            raise SynthesisFailed("Synthesis failed: the model returned an empty answer.", "Retry, or choose a larger model in Settings.")
        result.timings["synthesis_s"] = time.monotonic() - t

        t = time.monotonic()
        self._stage(4, "Stage 4: checking citations…")
        self.format_into(result, answer)
        result.timings["formatting_s"] = time.monotonic() - t

    def format_into(self, result: ResearchResult, answer: str) -> None:
        papers = self.papers()
        citations = parse_citations(answer, result.evidence, list(papers))
        if not citations and result.evidence:
            tagged, added = attribute_citations(answer, result.evidence)
            if added:
                answer = tagged
                citations = parse_citations(answer, result.evidence, list(papers))
                for c in citations:
                    c.note = ATTRIBUTED_NOTE
                result.messages.append(
                    f"Citations: the model wrote none, so {added} were added by matching each sentence to the passage "
                    "that holds most of its key terms; check them against the passages.")
        check_citations(answer, citations, result.evidence)
        answer, citations = normalise_answer(answer.strip(), citations)
        if self.params.check_support:
            self._check_free_text(answer, citations, result)
        result.answer = answer
        result.citations = citations
        result.references = build_references(citations, papers)
        if not citations:
            result.messages.append("Citations: the answer cites no evidence; treat it with care.")
        flagged = [c for c in citations if c.status != CitationStatus.VERIFIED.value]
        if flagged:
            result.messages.append(f"Citations: {len(flagged)} of {len(citations)} could not be verified against the evidence (marked in the answer).")
        self._stage(4, f"Stage 4: {len(citations)} citations, {len(citations) - len(flagged)} verified")

    def _check_free_text(self, answer: str, citations, result: ResearchResult) -> None:
        """The support check for citations parsed from prose (improve, fallback): the same judges as claims."""
        from .citations import claim_before
        from .support import Pair, check_pairs
        from .synthesis import STATUS_OF

        by_number = {e.number: e for e in result.evidence}
        checkable = [c for c in citations if c.status == CitationStatus.VERIFIED.value and c.evidence_number in by_number]
        pairs = [Pair(claim_before(answer, c.start), by_number[c.evidence_number]) for c in checkable]
        if not pairs:
            return
        check_pairs(pairs, self.chat_loaded(), context=result.query, cancelled=self.cancelled,
                    timeout_s=self.params.synthesis_timeout_s)
        for c, p in zip(checkable, pairs):
            c.support, c.quote = p.verdict, p.quote
            c.status = STATUS_OF[p.verdict]
            if p.reason:
                c.note = f"{p.reason}; {c.note}" if c.note else p.reason

    # -- what synthesis.py and deep research share with the funnel ----------------------
    def load_chat(self) -> ChatModel:
        self._chat = self._load_chat()
        return self._chat

    def chat_loaded(self) -> ChatModel | None:
        return getattr(self, "_chat", None)

    def papers(self) -> dict[str, Paper]:
        if not self._papers:
            self._papers = self.library.papers_by_id()
        return self._papers

    def evidence_budget(self, chat: ChatModel | None = None) -> int:
        """Tokens of evidence the prompt carries: the setting, within the context (and deep's time left)."""
        budget = self.params.focus_tokens
        if chat is not None:
            room = chat.context_length - self.answer_tokens(chat, structured=True) - 320
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

    def emit(self, kind: str, payload: Any) -> None:
        self._emit(kind, payload)

    def build_prompt(self, chat: ChatModel, query: str, evidence: list[Evidence], template: str, extra: dict[str, str]):
        """Fit whole evidence passages, best first, into the context window."""
        system = load_prompt("synthesis_system.md").strip()
        numbered = self.params.citation_style == "numbers" and template in NUMBERED_TEMPLATES
        body = load_prompt(NUMBERED_TEMPLATES[template] if numbered else template)
        if numbered:
            example = f"[{evidence[0].number}]" if evidence else "[1]"
        else:
            example = f"[{evidence[0].paper_id}, page {evidence[0].page}]" if evidence else "[smith2020, page 4]"
        fields = dict(query=query, citation_format=CITATION_FORMAT, citation_example=example, **extra)
        skeleton = body.format(evidence="", **fields)
        budget = chat.context_length - chat.count_tokens(system + skeleton) - self._answer_tokens(chat) - 48
        if self.evidence_tokens_override is not None:
            budget = min(budget, self.evidence_tokens_override)
        used: list[Evidence] = []
        blocks: list[str] = []
        spent = 0
        for e in evidence:
            block = format_evidence(e, numbered=numbered)
            cost = chat.count_tokens(block) + 2
            if spent + cost > budget:
                continue  # a shorter, lower-ranked passage may still fit
            used.append(e)
            blocks.append(block)
            spent += cost
        prompt = body.format(evidence="\n\n".join(blocks), **fields)
        messages: list[ChatMessage] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        return messages, used, len(evidence) - len(used)

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

    def _stage(self, stage: int, message: str) -> None:
        self.progress(stage / 4.0, message)
        self._emit("stage", (stage, message))

    def _emit(self, kind: str, payload: Any) -> None:
        if self.on_event is not None:
            self.on_event(kind, payload)


_BIBLIOGRAPHY = {"references", "bibliography", "literature cited", "works cited", "literature"}


def is_bibliography(section: str) -> bool:
    return section.strip().strip("#").strip().lower() in _BIBLIOGRAPHY


def format_evidence(e: Evidence, *, numbered: bool = False) -> str:
    """One passage for the prompt, headed by what to cite it with.

    Tags: the exact `[ID, page N]` to copy (small models cite far more often when the
    tag is written out than when they must assemble it from an id and a page).
    Numbered: `[N]` first, then where it comes from; the model cites `[N]` and the
    answer is rewritten to `[ID, page N]` (citations.normalise_answer).
    """
    where = [f"section: {e.section}"] if e.section else []
    if e.page_label and e.page_label != str(e.page):
        where.append(f"printed page {e.page_label}")
    if numbered:
        source = "; ".join([f"{e.paper_id}, page {e.page}", *where])
        return f"[{e.number}] ({source})\n{e.text.strip()}"
    context = f" ({'; '.join(where)})" if where else ""
    return f"Passage {e.number}{context} — cite it as [{e.paper_id}, page {e.page}]\n{e.text.strip()}"


def answer_with_references(result: ResearchResult) -> str:
    refs = references_markdown(result.references)
    return result.answer.rstrip() + ("\n\n" + refs if refs else "\n")
