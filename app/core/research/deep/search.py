"""Deep research's `search_evidence`: PaperQA2-style scoring of retrieved passages.

Hybrid top N (as standard mode retrieves) → a query-aware summary and an LLM
relevance score per candidate, in batches sized to the research time left →
combined = vector weight × cosine + LLM weight × score → the top K join the
pool, deduplicated across searches, each remembering the query that found it.
The mixin is part of `DeepResearch` (deep.py), whose state it uses.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ... import events
from ...errors import Cancelled, ModelError, ModelTimeout
from ...library.store import CONTENT_CHUNKS
from ...paths import load_prompt
from ...records import Evidence
from ..evidence import retrieval
from ..evidence.not_evidence import is_back_matter_passage, is_reference_list

log = logging.getLogger(__name__)

SCORE_BATCH = 4  # passages per scoring call: fits a 2k-token context with room to answer
SCORE_PASSAGE_CHARS = 1200  # each passage is clipped to this in a scoring prompt
SCORE_TOKENS_PER_PASSAGE = 90  # a scoring reply's token limit per passage (summary and score)

SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "integer"},
                    "summary": {"type": "string"},
                    "score": {"type": "number"},
                },
                "required": ["source", "summary", "score"],
            },
        }
    },
    "required": ["items"],
}


class SearchMixin:
    """`search_evidence` and its scoring calls, for `DeepResearch`."""

    def search_evidence(self, query: str, papers: list[str] | None = None, *, keep: int | None = None, label: str = "",
                        score: bool = True) -> list[Evidence]:
        """Hybrid top N → query-aware summary and LLM score per candidate → top K kept.

        `keep` above the usual 5–8 widens the search (round 0 keeps as many passages as
        standard mode, so deep research never starts from less evidence than it).
        `label` names the search in the methodology where the query alone would not
        (the question again, within one paper). `score=False` ranks by retrieval alone.
        """
        self.queries.append(label or query)
        f = self.funnel
        keep = keep or self.params.keep_per_search
        qvec = f.embedder.embed_one(query)
        table = f.library.chunks_table(CONTENT_CHUNKS)
        # Candidates as standard mode finds them (hybrid, which measured best).
        candidates = retrieval.search(table, qvec, query, limit=max(self.params.candidates, 2 * keep), papers=f.within(papers or None), hybrid=f.params.hybrid)
        candidates = [c for c in candidates if not is_reference_list(c.text, c.section) and not is_back_matter_passage(c.section, c.text)
                      and c.passes(f.cutoffs.evidence)
                      and (c.paper_id, c.page, c.char_start) not in self._seen]
        scores = self._score(query, candidates[: self.params.candidates]) if score else self._score_cache
        scored, unscored = [], []
        for c in candidates:
            llm = scores.get((query, key_of(c)))
            if llm is None:  # past the scoring window or out of time: keeps the retrieval's fused order
                unscored.append((c.cosine, c, None))
            else:
                scored.append((self.params.vector_weight * c.cosine + self.params.llm_weight * llm[0], c, llm))
        scored.sort(key=lambda t: -t[0])
        # Drop what the model called unrelated, unless that would leave (almost) nothing:
        # a weak model scoring everything 0 must not empty the evidence.
        related = [t for t in scored if t[2][0] > 0.05]
        if len(related) + len(unscored) >= 2:
            scored = related
        ranked = scored + unscored
        kept: list[Evidence] = []
        for combined, c, llm in ranked[:keep]:
            self._seen.add((c.paper_id, c.page, c.char_start))
            e = Evidence(
                number=len(self.pool) + 1, paper_id=c.paper_id, page=c.page, page_label=c.page_label,
                section=c.section, text=c.text, score=round(combined, 4), stage=f"deep:{len(self.queries)}",
                query=query, char_start=c.char_start, char_end=c.char_end,
                llm_score=None if llm is None else round(llm[0], 3), summary="" if llm is None else llm[1],
            )
            self.pool.append(e)
            kept.append(e)
        self.task.emit(events.EvidenceFound(list(self.pool)))
        return kept

    def _score(self, query: str, candidates: list[retrieval.Candidate]) -> dict[tuple[str, str], tuple[float, str]]:
        todo = [c for c in candidates if (query, key_of(c)) not in self._score_cache]
        started = self.budget.clock()
        try:
            i = 0
            while i < len(todo):
                self._check_user_cancel()
                if self.budget.research_over():
                    break  # unscored candidates fall back to their vector score
                # The largest batch (up to SCORE_BATCH) whose call can finish before the deadline.
                size = min(SCORE_BATCH, len(todo) - i)
                prompt = self._score_prompt(query, todo[i : i + size])
                while size > 1 and self._predict_call(prompt, SCORE_TOKENS_PER_PASSAGE * size, SCORE_SCHEMA) > self.budget.research_remaining():
                    size -= 1
                    prompt = self._score_prompt(query, todo[i : i + size])
                batch = todo[i : i + size]
                i += size
                try:
                    raw = self._call([{"role": "user", "content": prompt}], max_tokens=SCORE_TOKENS_PER_PASSAGE * len(batch), json_schema=SCORE_SCHEMA)
                    items = json.loads(raw).get("items", [])
                except Cancelled:
                    if self.user_cancelled():
                        raise
                    break  # the research deadline cut this call: the candidates keep their retrieval order
                except (ValueError, ModelError) as exc:
                    if isinstance(exc, ModelTimeout):
                        break
                    log.info("a scoring call failed (%s); its %d passages keep their vector scores", exc, len(batch))
                    continue
                for item in items:
                    try:
                        n = int(item["source"])
                        score = min(1.0, max(0.0, float(item["score"])))
                    except (KeyError, TypeError, ValueError):
                        continue
                    if 1 <= n <= len(batch):
                        self._score_cache[(query, key_of(batch[n - 1]))] = (score, str(item.get("summary", ""))[:400])
        finally:
            self.scoring_s += self.budget.clock() - started
        return self._score_cache

    @staticmethod
    def _score_prompt(query: str, batch: list[retrieval.Candidate]) -> str:
        passages = "\n\n".join(f"[Source {n}] {c.paper_id}, page {c.page}\n{c.text.strip()[:SCORE_PASSAGE_CHARS]}" for n, c in enumerate(batch, 1))
        return load_prompt("evidence_score.md").format(query=query, passages=passages)


def kind_of(json_schema: dict[str, Any]) -> str:
    """A model call's kind, by the keys of its reply: the speed meter learns each kind's reply length."""
    return ",".join(sorted(json_schema.get("properties", {})))


def key_of(c: retrieval.Candidate) -> str:
    return f"{c.paper_id}:{c.chunk_index}"

