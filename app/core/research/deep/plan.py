"""Deep research's plan: what the final answer and a research round cost on this machine.

The mixin below is part of `DeepResearch` (deep.py). It loads and times the
chat model, predicts each call's seconds from the measured speed, refuses a
call that cannot finish before the research deadline (llama.cpp cannot be
interrupted while it reads a prompt), and sizes the final answer to the time
left. Drafting (drafting/) overrides the answer's cost with a section's.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Callable

from ...errors import Cancelled, ModelError, ModelTimeout
from ...models.base import ChatModel
from .budget import (
    CALL_OVERHEAD_S,
    CLAIM_TOKENS,
    CONSERVATIVE_RATE,
    EXPECTED_FIRST_TURN_CLAIMS,
    JUDGE_PROMPT_TOKENS,
    JUDGE_TOKENS_PER_PAIR,
    MIN_ANSWER_TOKENS,
    MIN_EVIDENCE_TOKENS,
    PROBABILITY_CALL_S,
    PROBABILITY_JUDGE_TOKENS_PER_PAIR,
    PROMPT_OVERHEAD_TOKENS,
    REWRITE_READ_TOKENS,
    REWRITE_SHARE,
    REWRITE_WRITE_TOKENS,
    QUESTION_TOKENS,
    QUOTE_RATING_TOKENS,
    SECOND_TURN_TOKENS,
    SOURCES_PER_CLAIM,
    VERDICT_TOKENS,
)
from .search import SCORE_PASSAGE_CHARS, SCORE_SCHEMA, SCORE_TOKENS_PER_PASSAGE, kind_of

log = logging.getLogger(__name__)


class PlanMixin:
    """Model loading, timing and the cost predictions of `DeepResearch` (its state lives there)."""

    def _chat_model(self) -> ChatModel:
        if self._chat is None:
            self._chat = self.funnel._load_chat()
            self._calibrate(self._chat)
        return self._chat

    def _calibrate(self, chat: ChatModel) -> None:
        """Time two short calls, so the first real call (and the final answer) can be predicted.

        llama.cpp cannot be interrupted while it reads a prompt, so a call that cannot
        finish before the deadline must not be started at all; and the synthesis reserve
        is the predicted cost of the answer. One call mostly reads, one mostly writes, so
        the cost of writing a token relative to reading one is fitted from the start.
        """
        prompt = "Reply with the word ok. " + "context " * 150
        count = "Count from 1 to 40, separated by spaces."
        try:
            # A model's first call pays one-off costs (buffers, caches): seconds, on a laptop,
            # that would make every later call look that slow. It is not measured.
            chat.chat([{"role": "user", "content": "ok"}], max_tokens=1, temperature=0.0)
            for text, max_tokens in ((prompt, 4), (count, 16)):
                started = self.budget.clock()
                out = chat.chat([{"role": "user", "content": text}], max_tokens=max_tokens, temperature=0.0)
                self.meter.record(chat.count_tokens(text), max(1, chat.count_tokens(out)), self.budget.clock() - started)
        except (ModelError, Cancelled) as exc:
            # Not fatal: the planner falls back to the conservative speed (a larger reserve).
            log.warning("could not time the chat model (%s); planning with the conservative speed", exc)

    def _predict_call(self, prompt: str, max_tokens: int, json_schema: dict[str, Any]) -> float:
        """Predicted seconds of a research call with this prompt."""
        chat = self._chat_model()
        prompt_tokens = chat.count_tokens(prompt)
        max_tokens = min(max_tokens, max(64, chat.context_length - prompt_tokens - 16))
        return self.meter.predict_s(prompt_tokens, self.meter.expected_output(kind_of(json_schema), max_tokens), CONSERVATIVE_RATE)

    def _call(self, messages, *, max_tokens: int, json_schema: dict[str, Any]) -> str:
        chat = self._chat_model()
        prompt_tokens = chat.count_tokens("\n".join(m["content"] for m in messages))
        max_tokens = min(max_tokens, max(64, chat.context_length - prompt_tokens - 16))
        kind = kind_of(json_schema)  # decisions, scores…: each writes its own length
        predicted = self._predict_call("\n".join(m["content"] for m in messages), max_tokens, json_schema)
        if predicted > self.budget.research_remaining():
            raise ModelTimeout(f"not enough research time left for another model call (needs ~{predicted:.0f} s)")
        started = self.budget.clock()
        out = chat.chat(messages, max_tokens=max_tokens, temperature=0.0, json_schema=json_schema,
                        cancelled=self._deadline_cancel(stop_at_total=False))
        self.meter.record(prompt_tokens, chat.count_tokens(out), self.budget.clock() - started, kind=kind, max_tokens=max_tokens)
        return out

    # -- the plan: what the answer and a round cost on this machine -----------------------
    def standard_sizes(self, chat: ChatModel | None = None) -> tuple[int, int]:
        """(evidence tokens, answer tokens) of a standard answer (Funnel.evidence_budget / answer_tokens, no overrides)."""
        p = self.funnel.params
        context = (chat or self._chat).context_length if (chat or self._chat) is not None else 4096
        if not p.structured_answers:
            answer = max(64, min(p.answer_max_tokens, context // 3))
            evidence = p.focus_tokens if p.focus_prose else 2 * p.focus_tokens
            return max(120, min(evidence, context - answer - PROMPT_OVERHEAD_TOKENS)), answer
        answer = max(64, min(p.claims_max_tokens, context // 3))
        return max(120, min(p.focus_tokens, context - answer - PROMPT_OVERHEAD_TOKENS)), answer

    def answer_cost_s(self, evidence_tokens: int | None = None, answer_tokens: int | None = None) -> float:
        """Predicted seconds to write and check an answer (standard mode's size by default).

        Reading the focused evidence and the prompt; writing the claims as synthesis.py
        asks for them (the direct answer and a claim per part of the question from the best
        passages; then key sentences, whose best candidates the model rates, or the model's second turn
        over the rest; each turn capped at `answer_tokens`); then the support check of the
        model's claims.
        """
        standard_evidence, standard_answer = self.standard_sizes()
        evidence = standard_evidence if evidence_tokens is None else evidence_tokens
        answer = standard_answer if answer_tokens is None else answer_tokens
        p = self.funnel.params
        if not p.structured_answers:  # free text: the answer's token limit is what it writes
            read, written, claims, calls = evidence + PROMPT_OVERHEAD_TOKENS, answer, answer / CLAIM_TOKENS, 1
        else:
            from ..answer.claims import MAX_CLAIMS
            from ..answer.second_turn import MORE_CLAIMS

            split = 0 < p.first_claim_tokens < evidence
            first = min(p.first_turn_claims * CLAIM_TOKENS, answer)
            if split and p.key_sentences > 0:  # the best passages only, then the quotes' candidates rated
                # The claims the model writes in practice, and only those are judged (not the quotes).
                claims = min(p.first_turn_claims, EXPECTED_FIRST_TURN_CLAIMS)
                written = min(math.ceil(claims * CLAIM_TOKENS), answer)
                read, calls = p.first_claim_tokens + self._answer_prompt_tokens(), 1
                if p.quote_candidates > 0 and (self._chat is None or self._chat.gives_probabilities):
                    read += JUDGE_PROMPT_TOKENS + QUOTE_RATING_TOKENS * p.quote_candidates
                    calls += 1
            elif split:
                read = evidence + PROMPT_OVERHEAD_TOKENS + SECOND_TURN_TOKENS
                written, calls = first + min(MORE_CLAIMS * CLAIM_TOKENS, answer), 2
                claims = written / CLAIM_TOKENS
            else:
                read, written, calls = evidence + PROMPT_OVERHEAD_TOKENS, min(MAX_CLAIMS * CLAIM_TOKENS, answer), 1
                claims = written / CLAIM_TOKENS
        cost = self.meter.predict_s(read, written, CONSERVATIVE_RATE) + CALL_OVERHEAD_S * calls
        if p.check_support:
            cost += self.check_cost_s(max(1, math.ceil(claims * SOURCES_PER_CLAIM)))
            if p.rewrite_faulted:  # one answer in four: one short call, two pairs checked
                rewrite = (CALL_OVERHEAD_S + self.meter.predict_s(REWRITE_READ_TOKENS, REWRITE_WRITE_TOKENS, CONSERVATIVE_RATE)
                           + self.check_cost_s(2))
                cost += REWRITE_SHARE * rewrite
        return cost

    def _answer_prompt_tokens(self) -> int:
        """What the first turn reads besides its passages: the whole fixed prompt, or only its
        question part where the model kept the beginning it read when it was loaded (funnel.py)."""
        chat = self._chat
        if chat is None:
            return PROMPT_OVERHEAD_TOKENS
        from ..answer.prompt import answer_beginning, claims_prompt, first_turn_beginning

        # Counted, not assumed, so that an edit of the prompt files is priced by itself.
        template, fields, earlier = first_turn_beginning(chat, self.funnel.params)
        fixed = chat.count_message_tokens(claims_prompt("", [], template=template, earlier=earlier, **fields))
        kept = chat.count_message_tokens(answer_beginning(template, fields, earlier=earlier)) if chat.keeps_prefixes else 0
        return max(fixed - kept, 0) + 2 * QUESTION_TOKENS

    def check_cost_s(self, pairs: int) -> float:
        """Predicted seconds of the support check for `pairs` (claim, passage) pairs.

        A backend with choice probabilities reads each pair after the kept instructions and
        writes nothing (support.probability_verdicts); the others read the instructions and
        every pair in one prompt and write a verdict for each.
        """
        if not pairs or not self.funnel.params.check_support:
            return 0.0
        if self._chat is not None and self._chat.gives_probabilities:
            return PROBABILITY_CALL_S * pairs + self.meter.predict_s(PROBABILITY_JUDGE_TOKENS_PER_PAIR * pairs, 0, CONSERVATIVE_RATE)
        return CALL_OVERHEAD_S + self.meter.predict_s(JUDGE_PROMPT_TOKENS + JUDGE_TOKENS_PER_PAIR * pairs,
                                                      10 + VERDICT_TOKENS * pairs, CONSERVATIVE_RATE)

    def round_cost_s(self) -> float:
        """Predicted seconds of the smallest round that can change the evidence: scoring one passage
        (scoring batches shrink to what fits the research time left, `_score`)."""
        prompt = 160 + SCORE_PASSAGE_CHARS // 4
        output = self.meter.expected_output(kind_of(SCORE_SCHEMA), SCORE_TOKENS_PER_PASSAGE)
        return CALL_OVERHEAD_S + self.meter.predict_s(prompt, output, CONSERVATIVE_RATE)

    def _deadline_cancel(self, *, stop_at_total: bool) -> Callable[[], bool]:
        """Cancel in-flight work at the research deadline (or at the very end, for synthesis)."""

        def cancelled() -> bool:
            if self.user_cancelled():
                return True
            left = self.budget.remaining() if stop_at_total else self.budget.research_remaining()
            return left <= 0

        return cancelled

    def _synthesis_size(self, chat: ChatModel, remaining_s: float) -> tuple[int, int]:
        """(answer tokens, evidence tokens): standard mode's sizes, smaller only if they cannot fit the time left.

        Research stops with the predicted cost of a standard answer in hand, so the sizes
        shrink only when a call overran; answer first (to half), then evidence, then answer.
        """
        evidence0, answer0 = self.standard_sizes(chat)
        evidence, answer = evidence0, answer0
        if math.isinf(remaining_s):
            return answer, evidence
        while self.answer_cost_s(evidence, answer) > remaining_s:
            if answer > max(MIN_ANSWER_TOKENS, answer0 // 2):
                answer = max(MIN_ANSWER_TOKENS, answer0 // 2, answer - 32)
            elif evidence > MIN_EVIDENCE_TOKENS:
                evidence = max(MIN_EVIDENCE_TOKENS, evidence - 64)
            elif answer > MIN_ANSWER_TOKENS:
                answer = max(MIN_ANSWER_TOKENS, answer - 32)
            else:
                break
        return answer, evidence

