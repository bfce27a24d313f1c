"""Stage 3–4 for claim-bound answers: focused evidence in, checked claims out.

1. The evidence is focused (focus.py) to the sentences that bear on the question,
   within a token budget sized for the chat model; the user already sees them.
2. The model writes claims through structured output (claims.py), each bound to
   the passage numbers it rests on; each claim is streamed as a rendered sentence
   the moment it is complete.
3. Every (claim, cited passage) pair is checked (support.py). The check continues
   the conversation that wrote the answer, so the evidence and the claims are
   already in the model's cache and only the short check list is read anew.

A reply that breaks the structure is retried once; then the free-text prompt and
parser of the older pipeline answer instead, with a notice. The funnel calls this
through `Funnel.synthesize_into`; deep research's final answer comes here too.
"""

from __future__ import annotations

import json
import logging
import time

from ...errors import Cancelled, ModelError, ModelTimeout, SynthesisFailed
from ...events import ClaimWritten, Notice, Token
from ...models.base import ChatMessage, ChatModel
from ...records import Citation, CitationStatus, Claim, Evidence, ResearchResult, Support
from ...text.wording import trim_repetition
from ..context import AnswerContext
from ..text.citations import support as key_term_support
from .claims import CLAIM_LOOP_WORDS, LOOP_TIMES, MAX_CLAIMS, ClaimStream, cite_tag, claim_separator, claim_sentence, claims_schema, parse_claims, split_stop
from ..evidence.focus import focus_evidence
from ..evidence.page_breaks import library_pages, mend_page_breaks
from .key_sentences import answer_quotes
from ..evidence.first_turn_size import fit_within, record_reading, split_first, tokens_read
from ..text.question_reading import missing_parts_note, open_parts
from .second_turn import more_claims
from .prompt import (answer_beginning, claims_prompt, first_turn_beginning, format_passage, passage_header,
                     printed_figures, prompt_cost)
from .recite import doubt_contradicted, doubt_off_topic, mark_quoted, prune, recite, withdraw_unstated, withdraw_unsupported
from .check import answer_note, answer_probability, beside_the_point, rate_off_point
from .rewrite import fault, rewrite_faulted, withdrawal_messages
from ..check.support import ORDER, Pair, check_pairs

log = logging.getLogger(__name__)

STATUS_OF = {
    Support.SUPPORTED.value: CitationStatus.VERIFIED.value,
    Support.PARTIAL.value: CitationStatus.PARTIAL.value,
    Support.UNSUPPORTED.value: CitationStatus.UNSUPPORTED.value,
}

# The second try after a reply that broke the structure samples: at temperature 0 (the default) the
# same prompt would bring the same reply again.
RETRY_TEMPERATURE = 0.3


class StructureBroken(Exception):
    """The model's reply did not hold to the claims schema."""


def focus_into(funnel: AnswerContext, result: ResearchResult, qvec=None) -> None:
    """Keep only the sentences of each passage that bear on the question (the prompt's evidence)."""
    if not result.evidence or any(e.sentences for e in result.evidence):
        return
    started = time.monotonic()
    result.evidence = mend_page_breaks(result.evidence, library_pages(funnel.library.local_text_path))
    if qvec is None:
        qvec = funnel.embedder.embed_one(result.query)
    budget = funnel.evidence_budget()
    # The model's tokenizer, where the model is loaded (by this run, or by the desk before it) and
    # else its vocabulary alone: the first turn is cut in its tokens, and 4 characters a token is far
    # off for a row of figures.
    chat = funnel.chat_loaded() or (funnel.loaded_chat() if funnel.loaded_chat else None)
    counter = chat.count_tokens if chat is not None else (funnel.chat_tokens() if funnel.chat_tokens else None)
    papers = funnel.papers()
    titles = " ".join({papers[e.paper_id].title for e in result.evidence if e.paper_id in papers})
    focused = focus_evidence(result.query, qvec, result.evidence, funnel.embedder, token_budget=budget,
                             first_tokens=funnel.params.first_claim_tokens, count_tokens=counter, titles=titles,
                             passage_header=passage_header)
    if focused:
        for n, e in enumerate(focused, 1):  # the prompt numbers passages 1..k in the order shown
            e.number = n
        dropped = len(result.evidence) - len(focused)
        if dropped:
            result.messages.append(f"Stage 3: {dropped} passages had no sentence on the question and were not sent to the model.")
        result.evidence = focused
    result.timings["focus_s"] = round(time.monotonic() - started, 3)


def synthesize_claims(funnel: AnswerContext, result: ResearchResult) -> bool:
    """Write and check a claim-bound answer into `result`; False if the caller should fall back to free text.

    The best passages (`first_claim_tokens`) go first and the model states the direct answer;
    then key passages are quoted (or,
    without them, the other passages follow in the same, cached conversation and it adds claims)."""
    started = time.monotonic()
    chat = funnel.load_chat()
    focus_into(funnel, result)
    template, fields, worked = first_turn_beginning(chat, funnel.params)
    budget = funnel.evidence_budget(chat, reserved=chat.count_message_tokens(worked))
    evidence = fit_within(result.evidence, budget, prompt_cost(chat, result.query))
    first = split_first(evidence, funnel.params.first_claim_tokens, prompt_cost(chat, result.query))[0]
    ratings: dict[str, float] = {}  # each rated key-sentence candidate's P(yes) (key_sentences.answer_quotes)
    rest = [e for e in evidence if all(e is not f for f in first)]
    if rest and funnel.params.key_sentences > 0:  # after the first turn passages are quoted from, not read: all stay
        evidence, rest = result.evidence, [e for e in result.evidence if all(e is not f for f in first)]
    if len(evidence) < len(result.evidence):
        result.messages.append(f"Stage 3: {len(result.evidence) - len(evidence)} lower-ranked passages did not fit the prompt and were not sent.")
    result.evidence = evidence
    writer = _Writer(funnel, result, {e.number: e for e in evidence})
    funnel.stage(3, "Stage 3: synthesizing…")

    template, fields, earlier = (template, fields, worked) if rest else ("synthesis_claims.md", {}, [])
    messages = claims_prompt(result.query, first, template=template, earlier=earlier, **fields)
    try:
        reply, claims = writer.ask(chat, messages, [e.number for e in first],
                                   max_claims=funnel.params.first_turn_claims if rest else MAX_CLAIMS)
        if claims is None:
            return False
        if rest and writer.first_token_s:  # how fast it read: the next answer's first turn is sized by it
            record_reading(chat, tokens_read(chat, messages, answer_beginning(template, fields, earlier=earlier)),
                           writer.first_token_s)
        conversation = [*messages, {"role": "assistant", "content": reply}]
        if rest and funnel.params.key_sentences > 0:
            # each candidate sentence's P(yes) that it states the answer (those rated first kept)
            rated = time.monotonic()
            quotes = answer_quotes(funnel, chat, result.query, claims, evidence, ratings)
            if funnel.params.answer_check and ratings and claims:  # the direct answer, asked the same question
                claims[0].answers = answer_probability(chat, result.query, claims[0].text, cancelled=funnel.cancelled)
                result.extra["best_answer_p"] = round(max(ratings.values()), 3)
            result.timings["key_passages_s"] = round(time.monotonic() - rated, 3)
            for q in quotes:
                writer.show(q)
            funnel.stage(3, f"Stage 3: {len(claims)} claim{'s' if len(claims) != 1 else ''} written, "
                            f"{len(quotes)} sentence{'s' if len(quotes) != 1 else ''} of the papers quoted")
            claims = claims + quotes
        elif rest:
            passages = "\n\n".join(format_passage(e, result.query) for e in rest)
            claims = claims + more_claims(writer.ask, chat, conversation, result.query, passages,
                                          [e.number for e in evidence], claims)
    except Cancelled:
        if writer.streamed:  # keep what is on screen
            result.claims = list(writer.streamed)
            _finish(funnel, result, chat, None, started, checked=False, stopped=True)
            result.messages.append("Stopped: the answer keeps the claims written before you cancelled (not checked).")
        raise
    # A first claim that found no answer in the best passages gives way to the model's sourced claims after it.
    if len(claims) > 1 and not claims[0].sources and any(c.sources for c in claims[1:] if not c.quoted):
        claims = claims[1:]
    result.timings["synthesis_s"] = round(time.monotonic() - started, 3)
    result.claims = claims
    _finish(funnel, result, chat, conversation, started, checked=True)
    return True


class _Writer:
    """Asks for claims, streams each as it completes, retries a broken structure once."""

    def __init__(self, funnel: AnswerContext, result: ResearchResult, by_number: dict[int, Evidence]) -> None:
        self.funnel, self.result, self.by_number = funnel, result, by_number
        self.streamed: list[Claim] = []
        self._shown = ""  # the text of the claim being written that is on screen already
        self.first_token_s: float | None = None  # the first call's wait for its first token: its reading

    def _on_text(self, text: str) -> None:
        """The claim being written grew: show its new words (its citations follow when it closes)."""
        if not text.startswith(self._shown) or text == self._shown or trim_repetition(text, CLAIM_LOOP_WORDS, LOOP_TIMES)[1]:
            return  # (a claim that loops stops growing on screen where the loop begins; it is cut there)
        if not self._shown:
            if "first_words_s" not in self.result.timings:
                self.result.timings["first_words_s"] = round(self.funnel.elapsed(), 3)
            self.funnel.emit(Token(claim_separator(self.streamed, len(self.streamed))))
        self.funnel.emit(Token(text[len(self._shown):]))
        self._shown = text

    def show(self, claim: Claim) -> None:
        """A claim not written by the model (a key sentence) goes on screen like one that was."""
        self._on_claim(claim)

    def _on_claim(self, claim: Claim) -> None:
        funnel = self.funnel
        if "first_claim_s" not in self.result.timings:
            self.result.timings["first_claim_s"] = round(funnel.elapsed(), 3)
        self.streamed.append(claim)
        n = len(self.streamed)
        funnel.emit(ClaimWritten(claim, n - 1))
        sentence = claim_sentence(claim, self.by_number)
        shown, self._shown = self._shown, ""
        if shown and sentence.startswith(shown):
            funnel.emit(Token(sentence[len(shown):]))  # the rest of it: citations and the stop
        else:
            funnel.emit(Token(("\n\n" if shown else "") + claim_separator(self.streamed, n - 1) + sentence))

    def broke_off(self) -> None:
        """A reply that broke mid-claim is asked again: its words on screen are not an answer."""
        if self._shown:
            self._shown = ""
            self.funnel.emit(Notice("The model's reply broke off; it is writing the answer again.", level="warning"))

    def ask(self, chat: ChatModel, messages: list[ChatMessage], numbers: list[int], *, max_claims: int,
            min_claims: int = 1, min_sources: int = 0, fallback_ok: bool = True,
            printed: str | None = None) -> tuple[str, list[Claim] | None]:
        """(reply, claims); claims None when the structure broke twice and free text should answer.
        `printed`: the text whose figures the claims may state (default: the last turn's)."""
        funnel, result = self.funnel, self.result
        allowed = set(numbers)
        held = printed_figures(chat, messages[-1]["content"] if printed is None else printed)
        for attempt in (1, 2):
            stream, asked = ClaimStream(allowed, self._on_claim, self._on_text), time.monotonic()

            def on_token(piece: str) -> None:
                if self.first_token_s is None:
                    self.first_token_s = time.monotonic() - asked
                stream.feed(piece)
            try:
                reply = chat.chat(
                    messages,
                    max_tokens=funnel.answer_tokens(chat, structured=True),
                    temperature=funnel.params.temperature if attempt == 1 else max(funnel.params.temperature, RETRY_TEMPERATURE),
                    on_token=on_token,
                    cancelled=funnel.cancelled,
                    json_schema=claims_schema(numbers, min_items=min_claims, max_items=max_claims, min_sources=min_sources),
                    timeout_s=funnel.params.synthesis_timeout_s,
                    **held,
                )
                claims = parse_claims(reply, allowed)
                if len(claims) < min_claims:
                    raise StructureBroken("no claims")
                return reply, claims
            except Cancelled:
                raise
            except ModelTimeout as exc:
                raise SynthesisFailed(f"Synthesis failed: the model timed out ({exc.message}).", "Retry, raise the timeout in Settings, or use a faster model.") from exc
            except (ModelError, ValueError, StructureBroken) as exc:
                log.warning("structured answer attempt %d failed: %s", attempt, exc)
                if stream.claims:  # cut off mid-claim (token limit): the complete claims stand
                    result.messages.append("Stage 3: the answer reached its length limit; the claims completed before it are kept.")
                    return json.dumps({"claims": [{"text": c.text, "sources": c.sources} for c in stream.claims]}), list(stream.claims)
                self.broke_off()
                if isinstance(exc, ModelError) and "json" not in exc.message.lower():
                    raise SynthesisFailed(f"Synthesis failed: model error — {exc.message}", exc.hint or "Retry, or choose another model in Settings.") from exc
                if attempt == 2:
                    if not fallback_ok:
                        result.messages.append("Stage 3: the model's supporting claims did not hold to the structure; the answer keeps its first claim.")
                        return "", []
                    result.messages.append("Stage 3: the model did not return its answer as structured claims (twice); it answered as free text instead, with citations read from the prose.")
                    return "", None
        return "", None


def render(result: ResearchResult) -> None:
    """Answer markdown and one Citation per (claim, source), spans in step with the text."""
    by_number = {e.number: e for e in result.evidence}
    pieces: list[str] = []
    citations: list[Citation] = []
    pos = 0
    for i, claim in enumerate(result.claims):
        sep = claim_separator(result.claims, i)
        pieces.append(sep)
        pos += len(sep)
        text, stop = split_stop(claim.text, claim.quoted)
        pieces.append(text)
        pos += len(text)
        for n in dict.fromkeys(claim.sources):
            e = by_number.get(n)
            if e is None:
                continue
            tag = cite_tag(e)
            pieces.append(" ")
            pos += 1
            printed = e.page_label if e.page_label and e.page_label != str(e.page) else ""
            citations.append(Citation(tag, e.paper_id, e.page, "", pos, pos + len(tag), evidence_number=n, printed_page=printed, claim=i))
            pieces.append(tag)
            pos += len(tag)
        pieces.append(stop)
        pos += len(stop)
    result.answer = "".join(pieces)
    result.citations = citations


def check_claims(funnel: AnswerContext, result: ResearchResult, chat: ChatModel, conversation=None) -> None:
    """Render, check and reference `result.claims` (deep research: claims kept at a deadline cut)."""
    _finish(funnel, result, chat, conversation, time.monotonic(), checked=True)


def _finish(funnel: AnswerContext, result: ResearchResult, chat: ChatModel, conversation, started: float, *,
            checked: bool, stopped: bool = False) -> None:
    """Render, check and reference the claims. `stopped`: the user cancelled; no stage is reported."""
    render(result)
    by_number = {e.number: e for e in result.evidence}
    t = time.monotonic()
    if not stopped:
        funnel.stage(4, "Stage 4: checking each claim against its sources…")
    pairs = [Pair(result.claims[c.claim].text, by_number[c.evidence_number]) for c in result.citations]
    checked = checked and funnel.params.check_support
    by_claim: dict[tuple[int, int], Pair] = {}
    if checked and pairs:
        papers = funnel.papers()
        context = " ".join({papers[c.paper_id].title for c in result.citations if c.paper_id in papers})
        context = f"{result.query} {context}"
        read = []
        for c, p in zip(result.citations, pairs):
            if result.claims[c.claim].quoted:  # the passage's own sentence: nothing to doubt
                mark_quoted(p)
            else:
                read.append(p)
        check_pairs(read, chat, conversation=conversation, context=context, cancelled=funnel.cancelled,
                    timeout_s=funnel.params.synthesis_timeout_s, per_claim=funnel.params.check_read_per_claim)
        result.timings["check_judge_s"] = round(time.monotonic() - t, 3)  # the check's parts: judge, re-cite, rewrite
        by_claim = {(c.claim, c.evidence_number): p for c, p in zip(result.citations, pairs)}
        part = time.monotonic()
        moved = recite(result.claims, result.evidence, by_claim, chat, context=context, cancelled=funnel.cancelled)
        result.timings["check_recite_s"] = round(time.monotonic() - part, 3)
        rewritten, unrewritten = [], frozenset[int]()
        best_answer = result.extra.get("best_answer_p")
        if funnel.params.rewrite_faulted and chat is not None and any(
                fault(result.claims, by_claim, i, result.query, best_answer) for i in range(len(result.claims))):
            funnel.stage(4, "Stage 4: writing a claim again from the sentences it rests on…")
            part = time.monotonic()
            rewritten, unrewritten = rewrite_faulted(result.claims, result.evidence, by_claim, chat, result.query,
                                                     context=context, best_answer=best_answer, cancelled=funnel.cancelled)
            result.timings["check_rewrite_s"] = round(time.monotonic() - part, 3)
        doubt_contradicted(result.claims, by_claim)
        off_topic = doubt_off_topic(result.claims, by_claim, result.unmentioned) if result.caution else 0
        dropped = prune(result.claims, by_claim)
        withdrawn = (withdraw_unstated(result.claims, result.evidence, by_claim, context, held_to_cited=unrewritten)
                     if funnel.params.withdraw_unstated else [])
        withdrawn += [(text, []) for text in withdraw_unsupported(result.claims, by_claim)] if funnel.params.withdraw_unsupported else []
        if moved or rewritten or dropped or withdrawn:
            render(result)  # moved and dropped citations, rewritten and withdrawn claims: the answer's text changes
            pairs = [by_claim[(c.claim, c.evidence_number)] for c in result.citations]
        if moved:
            them = "them" if moved != 1 else "it"
            result.messages.append(f"Support check: {moved} claim{'s' if moved != 1 else ''} cited a passage that does not "
                                   f"state {them}; the citation now points to the passage that does.")
        result.messages += [r.message() for r in rewritten]
        lead = next((c for c in result.claims if not c.quoted), None)
        if lead is not None and beside_the_point(lead.answers, best_answer):
            result.messages.append(answer_note(lead.answers, best_answer))
        result.withdrawn += [text for text, _ in withdrawn]
        result.messages += withdrawal_messages(withdrawn)
        if off_topic:
            result.messages.append(f"Support check: {off_topic} citation{'s' if off_topic != 1 else ''} of the model's claims "
                                   "marked partial at most: the passages are not about the question (see the caution above).")
        if dropped:
            result.messages.append(f"Support check: {dropped} citation{'s' if dropped != 1 else ''} that did not support "
                                   "their claim removed; each of those claims keeps a passage that supports it.")
    for c, p in zip(result.citations, pairs):
        c.quote = p.quote
        if checked:
            c.support = p.verdict
            c.status = STATUS_OF[p.verdict]
            c.note = p.reason
        else:
            # No verdict (the check is off in Settings, or the run was stopped): the old
            # key-term overlap marks the citation, and the note says it was not read.
            overlap = key_term_support(p.claim, p.evidence.text)
            c.status = CitationStatus.VERIFIED.value if overlap >= 0.2 else CitationStatus.UNSUPPORTED.value
            c.note = f"not checked by the support check; key-term overlap {overlap:.0%}"
    for i, claim in enumerate(result.claims):
        verdicts = [c.support for c in result.citations if c.claim == i and c.support]
        claim.support = max(verdicts, key=ORDER.__getitem__) if verdicts else (Support.UNSUPPORTED.value if checked else "")
    if checked and not stopped:
        part = time.monotonic()
        off = rate_off_point(chat, result, on=funnel.params.answer_check, cancelled=funnel.cancelled)
        result.timings["check_answers_s"] = round(time.monotonic() - part, 3)  # rating supported claims for answering
        if off:
            result.messages.append(f"Answer check: {off} supported claim{'s' if off != 1 else ''} of the model's "
                                   f"do{'' if off != 1 else 'es'} not answer what was asked (marked apart from the answer).")
    result.timings["check_s"] = round(time.monotonic() - t, 3)
    if checked:  # what the check cost each claim it read (the key passages' quotes are not read)
        read_claims = len({c.claim for c in result.citations if not result.claims[c.claim].quoted})
        # the judge's P(yes) reads: one a pair, or one a claim (check_read_per_claim: its pairs share it)
        result.timings["check_reads"] = float(len({(i, p.confidence) if funnel.params.check_read_per_claim else (i, n)
                                                   for (i, n), p in by_claim.items() if p.confidence is not None}))
        if read_claims:
            result.timings["check_per_claim_s"] = round(result.timings["check_s"] / read_claims, 3)
    funnel.finish_references(result)
    mine = result.model_citations()
    total = len(mine)
    supported = sum(c.support == Support.SUPPORTED.value for c in mine)
    partial = sum(c.support == Support.PARTIAL.value for c in mine)
    bare = sum(1 for c in result.model_claims() if not c.sources)
    if not checked:
        if total:
            result.messages.append(f"Support check: not run ({'stopped' if stopped else 'off in Settings'}); "
                                   "the citations are marked by key-term overlap only.")
    elif total - supported:
        result.messages.append(f"Support check: {supported} of the model's {total} citations supported, {partial} partly; "
                               "the others are marked in the answer.")
    if bare:
        result.messages.append(f"Support check: {bare} of the model's {len(result.model_claims())} claims cite no passage (marked).")
    result.open_parts = [] if stopped else open_parts(result.query, result.claims)
    if result.open_parts:
        result.messages.append(missing_parts_note(result.open_parts))
    if not stopped:
        n = result.claim_counts()  # the model's claims: the key passages are supported by construction
        funnel.stage(4, f"Stage 4: {n['claims']} claim{'s' if n['claims'] != 1 else ''}, {n['supported']} supported")
