"""Focused evidence: the sentences of each passage that bear on the question.

A small local model reads 30–50 tokens a second on a laptop, so every sentence in
the prompt costs time before the first word of the answer. Stage 2 finds passages
(~400 tokens each); this step keeps, within a token budget, only the sentences that
answer the question, plus a neighbour where a sentence leans on the one before it
("This estimator…", "In contrast, …"). Each kept sentence keeps its exact span on
the page, so the viewer highlights the sentences a claim rests on.

Scoring is cheap on purpose (it runs while the user waits for the first screen):
the question's terms, weighted by how rare they are among the candidate sentences,
pick a shortlist; the embedder scores that shortlist against the question; the
passage's own retrieval rank breaks ties. Tables, equations and code are units of
their own (chunking.text_units) and are kept whole or not at all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from ..chunking import text_units
from ..models.base import EmbeddingModel
from ..records import Evidence, Sentence
from .citations import key_terms, stem

# Sentences embedded per question: the best by terms and retrieval rank. Embedding one
# sentence takes ~5-12 ms on a 2-core laptop, so ~64 keeps focusing well under a second.
EMBED_CANDIDATES = 64
MAX_PER_PASSAGE = 4  # sentences kept from one passage, so several papers get a say
BREADTH_SHARE = 0.8  # share of the budget for the first pass: each passage's best sentence
NEIGHBOUR_SHARE = 0.8  # the sentence before joins when it scores this share of the chosen one
HEADER_TOKENS = 16  # a passage's header in the prompt: "[3] (paper, page 5; section)"
# A sentence opening with one of these needs the sentence before it to be understood.
_LEANS_BACK = re.compile(
    r"^(?:this|these|that|those|it|its|they|their|such|here|there|thus|hence|therefore|however|"
    r"in contrast|in addition|moreover|furthermore|similarly|consequently|accordingly|likewise|"
    r"also|then|finally|second|third|both|the latter|the former|as a result|for example|for instance)\b",
    re.I,
)
_SHORT_WORDS = 7  # a sentence this short rarely stands alone ("See Table 2.")
_MIN_CHARS = 12  # fragments (page numbers, stray symbols) are never kept


@dataclass
class _Candidate:
    evidence: int  # index into the passage list
    order: int  # position of the unit within its passage
    start: int  # span within the passage text
    end: int
    text: str
    kind: str
    lexical: float = 0.0
    semantic: float = 0.0
    score: float = 0.0


def split_sentences(e: Evidence) -> list[_Candidate]:
    """The passage's sentences and blocks (headings left out: the section is in the passage header)."""
    out = []
    for start, end, kind in text_units(e.text):
        if kind == "heading":
            continue
        text = e.text[start:end].strip()
        if len(text) < _MIN_CHARS:
            continue
        out.append(_Candidate(0, len(out), start, end, text, kind))
    return out


def _matches(term: str, bag: set[str]) -> bool:
    """The term, or a word sharing its first 5+ letters as a whole prefix ("depart" ~ "departure")."""
    if term in bag:
        return True
    if len(term) < 5:
        return False
    return any(len(w) >= 5 and (w.startswith(term) or term.startswith(w)) for w in bag)


def _lexical_scores(query: str, candidates: list[_Candidate]) -> None:
    """Share of the question's terms in each sentence, rarer terms weighing more (IDF over the candidates)."""
    q_terms = {stem(t) for t in key_terms(query)}
    if not q_terms or not candidates:
        return
    bags = [{stem(t) for t in key_terms(c.text)} for c in candidates]
    hits = [{t for t in q_terms if _matches(t, bag)} for bag in bags]
    n = len(bags)
    idf = {t: math.log(1 + n / (1 + sum(t in h for h in hits))) for t in q_terms}
    total = sum(idf.values()) or 1.0
    for c, h in zip(candidates, hits):
        c.lexical = sum(idf[t] for t in h) / total


def focus_evidence(
    query: str,
    qvec: np.ndarray,
    evidence: list[Evidence],
    embedder: EmbeddingModel | None,
    *,
    token_budget: int,
    count_tokens=None,
) -> list[Evidence]:
    """The passages with their focused sentences, best passage first, within `token_budget`.

    Passages none of whose sentences were kept are left out. Numbers are kept (they are
    what the user sees and what the model cites). `count_tokens` measures the prompt
    cost of a sentence (the chat model's tokenizer); the default is ~4 characters a token.
    """
    count = count_tokens or (lambda s: max(1, len(s) // 4))
    candidates: list[_Candidate] = []
    per_passage: list[list[_Candidate]] = []
    for i, e in enumerate(evidence):
        units = split_sentences(e)
        for c in units:
            c.evidence = i
        per_passage.append(units)
        candidates.extend(units)
    if not candidates:
        return []
    _lexical_scores(query, candidates)
    # The passage as a prior: a sentence inherits some of its passage's relevance (rank in
    # stage 2's order and cosine to the question), because a short answer sentence ("The
    # median date was 14 September.") often resembles the question less than its passage does.
    cos = [e.score for e in evidence]
    lo, hi = min(cos), max(cos)
    prior = {
        i: 0.5 * (1.0 - i / max(1, len(evidence))) + 0.5 * ((cos[i] - lo) / (hi - lo) if hi > lo else 1.0)
        for i in range(len(evidence))
    }
    rough = sorted(candidates, key=lambda c: -(c.lexical + 0.3 * prior[c.evidence]))
    to_embed = rough[:EMBED_CANDIDATES]
    if embedder is not None and to_embed:
        vecs = embedder.embed([c.text[:1200] for c in to_embed])
        for c, v in zip(to_embed, vecs):
            c.semantic = float(np.dot(v, qvec))
    for c in candidates:
        # Cosine carries the meaning; terms catch names and numbers MiniLM blurs.
        c.score = 0.45 * c.semantic + 0.30 * c.lexical + 0.25 * prior[c.evidence]

    kept: dict[int, set[int]] = {}
    spent = 0
    headers = set()
    order = sorted(candidates, key=lambda c: -c.score)
    # Two passes: first each passage's best sentence (so a passage whose answer sentence
    # scores modestly is not crowded out by a few passages that say a lot), within
    # BREADTH_SHARE of the budget; then the best of the rest.
    best_of = {}
    for c in order:
        best_of.setdefault(c.evidence, c)
    passes = [(list(best_of.values()), BREADTH_SHARE * token_budget), (order, token_budget)]
    for pool, limit in passes:
        for c in pool:
            if c.semantic <= 0.0 and c.lexical == 0.0 and c.score < 0.1:
                break  # the rest share nothing with the question
            picked = kept.setdefault(c.evidence, set())
            if len(picked) >= MAX_PER_PASSAGE or c.order in picked:
                continue
            group = [c]
            units = per_passage[c.evidence]
            if c.order > 0:
                prev = units[c.order - 1]
                # The sentence before comes along when this one leans on it, or when it bears on
                # the question nearly as well (answers often span two sentences).
                leans = _LEANS_BACK.match(c.text) or len(c.text.split()) < _SHORT_WORDS
                if prev.order not in picked and (leans or prev.score >= NEIGHBOUR_SHARE * c.score):
                    group.insert(0, prev)
            cost = sum(count(g.text) + 1 for g in group) + (0 if c.evidence in headers else HEADER_TOKENS)
            if spent + cost > limit:
                continue  # a shorter sentence may still fit
            spent += cost
            headers.add(c.evidence)
            picked.update(g.order for g in group)

    ranked = sorted(
        (i for i, picked in kept.items() if picked),
        key=lambda i: -max(per_passage[i][o].score for o in kept[i]),
    )
    out = []
    for i in ranked:
        e = evidence[i]
        sentences = [
            Sentence(u.text, e.char_start + u.start, e.char_start + u.end, round(u.score, 4))
            for u in per_passage[i]
            if u.order in kept[i]
        ]
        out.append(replace(e, sentences=sentences))
    return out
