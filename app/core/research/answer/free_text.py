"""The free-text answer: prose with citation tags, parsed and checked afterwards.

The standard answer is claim-bound (synthesis.py). This path serves `improve`,
the numbered-citation style and models whose structured output fails twice;
it shares the support check with claims (support.check_pairs).
"""

from __future__ import annotations

import time

from ...errors import Cancelled, ModelError, ModelTimeout, SynthesisFailed
from ...events import Token
from ...models.base import ChatMessage, ChatModel
from ...paths import load_prompt
from ...records import CitationStatus, Evidence, ResearchResult
from ...text.wording import trim_repetition
from ..context import AnswerContext
from ..text.citations import ATTRIBUTED_NOTE, attribute_citations, check_citations, claim_before, normalise_answer, parse_citations
from .references import build_references
from ..check.support import Pair, check_pairs



LOOP_WORDS = 20  # a repeated run of this many words (tags included) means the answer is looping
CITATION_FORMAT = "[PAPER_ID, page N]"
# Prompt templates with a numbered-citation variant (ResearchParams.citation_style).
NUMBERED_TEMPLATES = {"synthesis.md": "synthesis_numbered.md"}


def write_free_text(self: AnswerContext, result: ResearchResult, template: str, extra: dict[str, str]) -> None:
    """Stage 3 as prose: the free-text prompt, a loop guard on the stream, then stage 4."""
    t = time.monotonic()
    self.stage(3, "Stage 3: synthesizing…")
    chat = self.load_chat()  # kept on the funnel: the support check of the parsed citations uses it too
    if template == "synthesis.md" and self.params.focus_prose:
        from .synthesis import focus_into

        focus_into(self, result)  # a no-op where run() focused them already (and shows them)
    messages, used, dropped = build_prompt(self, chat, result.query, result.evidence, template, extra)
    if dropped:
        result.messages.append(f"Stage 3: {dropped} lower-ranked passages did not fit the model's context window (or, in deep mode, the time left) and were not sent.")
    result.evidence = used
    # Small models can fall into a loop, restating the same sentences until the token
    # limit: watch the stream, stop it at the first long repeated run, keep what came before.
    tokens: list[str] = []
    looping = {"now": False}
    
    def on_token(token: str) -> None:
        tokens.append(token)
        _time_first_claim(self, result, tokens)
        if len(tokens) % 16 == 0 and trim_repetition("".join(tokens), LOOP_WORDS)[1]:
            looping["now"] = True
        self.task.emit(Token(token))
    
    def cancelled() -> bool:
        return looping["now"] or self.cancelled()
    
    try:
        answer = chat.chat(
            messages,
            max_tokens=self.answer_tokens(chat),
            temperature=self.params.temperature,
            on_token=on_token,
            cancelled=cancelled,
            timeout_s=self.params.synthesis_timeout_s,
        )
    except Cancelled:
        if not looping["now"] or self.cancelled():
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
    self.stage(4, "Stage 4: checking citations…")
    self.format_into(result, answer)
    result.timings["formatting_s"] = time.monotonic() - t


def _time_first_claim(self: AnswerContext, result: ResearchResult, tokens: list[str]) -> None:
    """The first words on screen, and the first claim: the first sentence closed by a citation."""
    timings = result.timings
    if "first_words_s" not in timings:
        if "".join(tokens).strip():
            timings["first_words_s"] = round(self.elapsed(), 3)
        return
    closes = "]" in tokens[-1] or ")" in tokens[-1]  # the answer's own parser runs only where a citation may have closed
    if "first_claim_s" not in timings and closes and parse_citations("".join(tokens), result.evidence, []):
        timings["first_claim_s"] = round(self.elapsed(), 3)


def format_into(self: AnswerContext, result: ResearchResult, answer: str) -> None:
    """Parse the citations of a prose answer, check them, number the references."""
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
        _check_free_text(self, answer, citations, result)
    result.answer = answer
    result.citations = citations
    result.references = build_references(citations, papers)
    if not citations:
        result.messages.append("Citations: the answer cites no evidence; treat it with care.")
    flagged = [c for c in citations if c.status != CitationStatus.VERIFIED.value]
    if flagged:
        result.messages.append(f"Citations: {len(flagged)} of {len(citations)} could not be verified against the evidence (marked in the answer).")
    self.stage(4, f"Stage 4: {len(citations)} citations, {len(citations) - len(flagged)} verified")


def _check_free_text(self: AnswerContext, answer: str, citations, result: ResearchResult) -> None:
    """The support check for citations parsed from prose (improve, fallback): the same judges as claims."""
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


def build_prompt(self: AnswerContext, chat: ChatModel, query: str, evidence: list[Evidence], template: str, extra: dict[str, str]):
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
    budget = chat.context_length - chat.count_tokens(system + skeleton) - self.answer_tokens(chat) - 48
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
        return f"[{e.number}] ({source})\n{e.focus_text}"
    context = f" ({'; '.join(where)})" if where else ""
    return f"Passage {e.number}{context} — cite it as [{e.paper_id}, page {e.page}]\n{e.focus_text}"
