"""The writer: one section from the selected evidence, in a reply held to a JSON schema.

The schema is a list of paragraphs, each `{"cites": [keys…], "text": "…"}` where
`cites` is an enum of the offered evidence's keys with at least one item: every
paragraph carries a citation that resolves, whatever the model's size. The
section is sized to the time left; the writer stops at the end of the budget as
soon as it has a usable paragraph, and streams each paragraph as it grows
(`events.ClaimWritten` with a `Paragraph`). The mixin is part of `SectionDrafter`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .. import events
from ..errors import Cancelled, ModelError, SynthesisFailed
from ..models.base import ChatModel
from ..paths import load_prompt
from ..records import Evidence
from ..research.deep.runner import CALL_OVERHEAD_S, CONSERVATIVE_RATE
from ..text.wording import trim_repetition
from .citations import _clip_chars, author_year, finish_paragraph
from .records import Paragraph

# Target size per section: paragraphs (upper bound in the schema) and words.
PARAGRAPHS = {"abstract": 1, "conclusion": 2, "introduction": 4, "related-work": 4, "methods": 3, "results": 3, "discussion": 4}
WORDS = {"abstract": 180, "conclusion": 220, "introduction": 450, "related-work": 450, "methods": 380, "results": 350, "discussion": 450}
LOOP_WORDS = 8  # a repeated run of this many words means the writer is looping
WRITER_SKELETON_TOKENS = 450  # system prompt, instructions and the study's description, before the prompt is built
TOKENS_PER_CITATION = 70  # section tokens per (sentence, cited paper) pair, to guess how many pairs the check reads


class WriterMixin:
    """Sizing, prompting and running the writer, for `SectionDrafter`."""

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
        self._streamed: list[Paragraph] = []
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
                self._stream_paragraphs(items)
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

    def _stream_paragraphs(self, items: list[tuple[dict[str, Any], bool]]) -> None:
        """Each paragraph that is new or has grown since the last look, as it stands (raw, uncleaned)."""
        for n, (item, complete) in enumerate(items):
            paragraph = Paragraph(text=str(item.get("text") or ""), keys=[str(k) for k in item.get("cites") or []], complete=complete)
            if n < len(self._streamed) and self._streamed[n] == paragraph:
                continue
            if n < len(self._streamed):
                self._streamed[n] = paragraph
            else:
                self._streamed.append(paragraph)
            self.task.emit(events.ClaimWritten(paragraph, n))

    def _evidence_block(self, e: Evidence) -> str:
        paper = self.library_papers[e.paper_id]
        label = f" (printed page {e.page_label})" if e.page_label and e.page_label != str(e.page) else ""
        head = f"[@{self.keys[e.paper_id]}] {author_year(paper)}, “{paper.title}”, page {e.page}{label}"
        summary = e.summary.strip() if e.summary and not e.summary.lower().startswith("not relevant") else ""
        passage = _clip_chars(e.text, self.draft_params.passage_chars)
        return head + ("\nSummary: " + summary[:400] if summary else "") + "\nPassage: " + passage


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



def section_instructions(section: str) -> str:
    text = load_prompt("draft_instructions.md")
    parts = re.split(r"^## +(\S+)\s*$", text, flags=re.M)
    table = {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    return table[section]


