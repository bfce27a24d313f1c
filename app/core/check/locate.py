"""Find the sentences of a cited paper that a manuscript sentence rests on (or contradicts).

A citation check needs the one passage that would support the sentence — or state the
opposite, or another number. A nearest-chunk search finds a passage on the same topic,
which is not the same thing: a sentence whose direction was flipped is closest to the
paper's many sentences that agree with the rest of it. So the check reads the whole
cited paper (its indexed chunks, read once per check: a paper is 5–100 chunks) and
scores every window of one or two consecutive sentences:

- lexically: the sentence's key terms, each weighted by how rare it is within the paper
  (a paper's topic words are everywhere; the words that pick out one statement are not),
  with the sentence's numbers and specific names counting double;
- semantically: the chunk's stored vector against the sentence's embedding, and, given
  an `embedder`, the `PRESELECT` best windows by their own embeddings (a paraphrase shares
  the statement's meaning, not its rare words).

A two-sentence window must add a term of the sentence to beat its better single sentence
(so the quote stays as short as the statement).

The best windows come back best first, each with its chunk (page, printed page, span) and
its place among the chunk's sentences, so that the check can read on around it (`around`)
and look for a number the claim states a sentence or two away, or anywhere in the paper,
before it says the paper does not state it (`stating`).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..models.base import EmbeddingModel
from ..records import Evidence
from ..text.acronyms import definitions
from ..research.text.citations import key_terms, stem
from ..research.evidence.focus import split_sentences
from ..research.evidence.not_evidence import is_reference_list
from ..research.check.support_rules import specific_names
from ..research.text.citations import numbers_in, numbers_stated
from ..library.sql_filter import sql_str
from ..library.table_reader import snapshot

log = logging.getLogger(__name__)

PRESELECT = 12  # windows re-ranked by their own embedding when an embedder is given
NEAR = 2  # a number the claim states may be this many sentences from where the paper says the rest
TWO_SENTENCE_COST = 0.05  # lexical share a second sentence must add (one ordinary term weighs ~0.07-0.1)
SPECIFIC_WEIGHT = 2.0  # a number or a name of the sentence weighs this many ordinary terms
# Final score: the window's meaning, its terms, and its chunk's closeness to the sentence.
W_SEMANTIC, W_LEXICAL, W_CHUNK = 0.45, 0.40, 0.15
# Marks of a reference list that a chunker left under an ordinary heading: "332:1330-5",
# "1995, 332", "Lubenow N, Hinz P,". Such text matches any sentence's names and numbers.
_REFERENCE_MARKS = re.compile(r"\b\d+\s*:\s*\d+\s*[-–]\s*\d+|\b(?:19|20)\d\d[a-z]?\s*[;,]\s*\d+|\b[A-Z][a-z]+ [A-Z]{1,2}[,.:]")
_COLUMNS = ["paper_id", "page", "page_label", "section", "text", "char_start", "char_end", "vector"]


@dataclass
class Window:
    """One or two consecutive sentences of a chunk."""

    evidence: Evidence  # the chunk it lies in
    text: str  # exact text of the chunk from the first sentence's start to the last one's end
    start: int  # span within the chunk text
    end: int
    terms: frozenset[str]
    numbers: frozenset[str]
    prefixes: dict[str, list[str]] = field(default_factory=dict)  # 5-letter prefix -> the terms with it
    chunk: int = 0  # index of its passage in PaperText.passages
    first: int = 0  # its first and last sentence in PaperText.units[chunk]
    last: int = 0
    lexical: float = 0.0
    coverage: float = 0.0  # share of the sentence's terms (unweighted) the window holds
    semantic: float = 0.0
    chunk_cosine: float = 0.0  # the chunk's stored vector against the sentence
    score: float = 0.0


@dataclass
class PaperText:
    """All indexed passages of one paper and their sentence windows (bibliography left out)."""

    paper_id: str
    passages: list[Evidence]
    vectors: np.ndarray  # one row per passage, unit length
    windows: list[Window] = field(default_factory=list)
    window_chunk: list[int] = field(default_factory=list)  # passage index of each window
    window_size: list[int] = field(default_factory=list)  # sentences in each window (1 or 2)
    units: list[list[tuple[int, int]]] = field(default_factory=list)  # each passage's sentence spans
    unit_numbers: list[list[frozenset[str]]] = field(default_factory=list)  # numbers each sentence states
    df: dict[str, int] = field(default_factory=dict)  # in how many windows each term occurs
    squashed: str = ""  # the whole text, lower case, letters and digits only
    acronyms: dict[str, str] = field(default_factory=dict)  # the acronyms it defines: {"SS": "surgeon-scrub"}
    # Windows' own embeddings, by text, once embedded: a draft cites one paper from several sentences,
    # whose best windows are often the same ones.
    window_vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def mentions(self, name: str) -> bool:
        key = "".join(ch for ch in name.lower() if ch.isalnum())
        return bool(key) and (key in self.squashed or (key.endswith("s") and key[:-1] in self.squashed))


def looks_like_references(text: str) -> bool:
    return len(_REFERENCE_MARKS.findall(text)) >= 3


def terms_of(text: str) -> set[str]:
    """Stemmed key terms and specific names of a text (what windows are matched on)."""
    return {stem(t) for t in key_terms(text)} | set(specific_names(text))


def read_paper(table, paper_id: str) -> PaperText:
    """The paper's chunks from the content table (LanceDB filter on paper_id), split into windows."""
    data = snapshot(table).dataset.to_table(columns=_COLUMNS, filter=f"paper_id = {sql_str(paper_id)}")
    return paper_from_rows(paper_id, data.to_pylist())


def paper_from_rows(paper_id: str, rows: list[dict]) -> PaperText:
    """The paper's windows from its content rows (columns as `_COLUMNS`), in page order."""
    rows = sorted(rows, key=lambda r: (r["page"], r["char_start"]))
    passages, vectors = [], []
    for r in rows:
        if not (r["text"] or "").strip() or is_reference_list(r["text"], r["section"] or ""):
            continue
        passages.append(Evidence(number=len(passages) + 1, paper_id=paper_id, page=r["page"], page_label=r["page_label"] or "",
                                 section=r["section"] or "", text=r["text"], score=0.0, stage="check",
                                 char_start=r["char_start"], char_end=r["char_end"]))
        vectors.append(np.asarray(r["vector"], dtype=np.float32))
    matrix = np.vstack(vectors) if vectors else np.zeros((0, 1), dtype=np.float32)
    if len(matrix):
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    paper = PaperText(paper_id, passages, matrix)
    squashed = []
    for i, e in enumerate(passages):
        units = split_sentences(e)
        squashed.append("".join(ch for ch in e.text.lower() if ch.isalnum()))
        paper.units.append([(u.start, u.end) for u in units])
        paper.unit_numbers.append([frozenset(numbers_stated(e.text[u.start : u.end])) for u in units])
        for k, u in enumerate(units):
            # A window of one sentence, and of it with the next: claims often join two.
            for j, last in enumerate(units[k : k + 2]):
                text = e.text[u.start : last.end]
                if looks_like_references(text):
                    continue
                paper.windows.append(_window(e, text, u.start, last.end, i, k, k + j))
                paper.window_chunk.append(i)
                paper.window_size.append(1 if last is u else 2)
    paper.squashed = " ".join(squashed)
    paper.acronyms = definitions("\n".join(e.text for e in passages))
    for w in paper.windows:
        for t in w.terms:
            paper.df[t] = paper.df.get(t, 0) + 1
    return paper


def _window(e: Evidence, text: str, start: int, end: int, chunk: int, first: int, last: int) -> Window:
    terms = frozenset(terms_of(text))
    prefixes: dict[str, list[str]] = {}
    for t in terms:
        if len(t) >= 5:
            prefixes.setdefault(t[:5], []).append(t)
    return Window(e, text, start, end, terms, frozenset(numbers_stated(text)), prefixes, chunk=chunk, first=first, last=last)


def around(paper: PaperText, w: Window, before: int = 1, after: int = 1) -> Window:
    """The window grown by up to `before`/`after` sentences of its passage (a claim often rests
    on a sentence and the one that names what it is about, or joins two a sentence apart)."""
    units = paper.units[w.chunk] if w.chunk < len(paper.units) else []
    if not units:
        return w
    first, last = max(0, w.first - before), min(len(units) - 1, w.last + after)
    if (first, last) == (w.first, w.last):
        return w
    start, end = units[first][0], units[last][1]
    grown = _window(w.evidence, w.evidence.text[start:end], start, end, w.chunk, first, last)
    return replace(grown, chunk_cosine=w.chunk_cosine, score=w.score, lexical=w.lexical, coverage=w.coverage)


def numbers_near(paper: PaperText, w: Window, reach: int) -> frozenset[str]:
    """The numbers stated within `reach` sentences of the window, in its passage."""
    if w.chunk >= len(paper.unit_numbers):
        return w.numbers
    nums = paper.unit_numbers[w.chunk]
    out = set(w.numbers)
    for k in range(max(0, w.first - reach), min(len(nums), w.last + reach + 1)):
        out |= nums[k]
    return frozenset(out)


def coverage_of(claim: str, w: Window) -> float:
    """Share of the claim's terms that the window holds."""
    terms = terms_of(claim)
    return sum(_has(t, w) for t in terms) / max(1, len(terms))


def stating(claim: str, numbers: set[str], windows: list[Window], paper: PaperText, floor: float) -> Window | None:
    """Where the paper states all of the claim's `numbers` about what the claim says, looked for
    before the check says it does not: first within `NEAR` sentences of the best windows (the
    smallest run of sentences that holds them: a claim joining "… ~400 Hz peak." and, two
    sentences on, "… budget … is just 30 Hz"), then in every window of the paper that holds
    the numbers and at least `floor` of the claim's terms (the best by that share)."""
    for w in windows:
        if not numbers <= numbers_near(paper, w, NEAR):
            continue
        nums = paper.unit_numbers[w.chunk]
        need, first, last = set(numbers) - w.numbers, w.first, w.last
        for step in range(1, NEAR + 1):  # grow toward the nearer sentence that states a missing number
            for k in (w.first - step, w.last + step):
                if 0 <= k < len(nums) and nums[k] & need:
                    need -= nums[k]
                    first, last = min(first, k), max(last, k)
        if not need:
            return around(paper, w, w.first - first, last - w.last)
    found, found_cov = None, floor
    for w in paper.windows:
        if numbers <= w.numbers:
            cov = coverage_of(claim, w)
            if cov >= found_cov:
                found, found_cov = w, cov
    return replace(found, coverage=found_cov) if found is not None else None


def _has(term: str, w: Window) -> bool:
    """The term, or a word of the window of which it is a prefix or that is a prefix of it, 5+ letters
    ("estimat" ~ "estimator")."""
    if term in w.terms:
        return True
    return len(term) >= 5 and any(x.startswith(term) or term.startswith(x) for x in w.prefixes.get(term[:5], ()))


def best_windows(claim: str, qvec: np.ndarray, paper: PaperText, embedder: EmbeddingModel | None, n: int = 4) -> list[Window]:
    """The paper's `n` windows closest to the claim, best first (scores filled in; copies)."""
    if not paper.windows:
        return []
    claim_terms = terms_of(claim)
    numbers = numbers_in(claim)
    special = set(specific_names(claim))
    total_windows = len(paper.windows)
    weight = {}
    for t in claim_terms:
        idf = math.log(1 + total_windows / (1 + paper.df.get(t, 0)))
        weight[t] = idf * (SPECIFIC_WEIGHT if t in special else 1.0)
    num_weight = SPECIFIC_WEIGHT * math.log(1 + total_windows)  # a number the claim states is rare evidence
    denominator = sum(weight.values()) + num_weight * len(numbers) or 1.0
    chunk_cos = paper.vectors @ np.asarray(qvec, dtype=np.float32) if len(paper.vectors) else np.zeros(0)
    scored = []
    for w, ci, size in zip(paper.windows, paper.window_chunk, paper.window_size):
        hit = [t for t in claim_terms if _has(t, w)]
        lexical = (sum(weight[t] for t in hit) + num_weight * len(numbers & w.numbers)) / denominator
        coverage = len(hit) / max(1, len(claim_terms))
        rank = lexical + 0.3 * float(chunk_cos[ci]) - (TWO_SENTENCE_COST if size == 2 else 0.0)
        scored.append((rank, lexical, coverage, w, float(chunk_cos[ci])))
    scored.sort(key=lambda s: -s[0])
    shortlist, scored_kept = [], []
    seen = set()
    for entry in scored:
        _, lexical, coverage, w, cos = entry
        key = " ".join(w.text.split())
        if key in seen:  # chunks overlap: the same sentences twice
            continue
        seen.add(key)
        shortlist.append(replace(w, lexical=lexical, coverage=coverage, chunk_cosine=cos))
        scored_kept.append(entry)
        if len(shortlist) >= (PRESELECT if embedder is not None else n):
            break
    if embedder is None:
        for w, (rank, *_) in zip(shortlist, scored_kept):
            w.score = rank
        return shortlist[:n]
    texts = [w.text[:1200] for w in shortlist]
    missing = list(dict.fromkeys(x for x in texts if x not in paper.window_vectors))
    if missing:
        paper.window_vectors.update(zip(missing, embedder.embed(missing)))
    vecs = [paper.window_vectors[x] for x in texts]
    for w, v in zip(shortlist, vecs):
        w.semantic = float(np.dot(v, qvec))
        w.score = W_SEMANTIC * w.semantic + W_LEXICAL * w.lexical + W_CHUNK * w.chunk_cosine
    shortlist.sort(key=lambda w: -w.score)
    return shortlist[:n]
