"""Focused evidence: the sentences of each passage that bear on the question.

Every sentence in the prompt costs a small local model time before the answer's first word. Within
a token budget this keeps a window of each of the `WINDOWS` best passages (the contiguous run of
sentences around its best one, grown toward the better neighbour; the best passage's window as large
as the answer's first turn) and, with the tokens left, the best sentence of each other passage.
Windows, not the best sentences from anywhere: a fact rarely stands whole in one sentence, and stage
2's ranking of whole passages is a stronger signal than one sentence's cosine (bench/focus.py;
docs/lab/). Each kept sentence keeps its span on the page, for the viewer's highlight.

Scoring is cheap (the user is waiting): the question's terms, weighted by rarity, pick a shortlist;
the embedder scores it; the passage's retrieval rank weighs in. Tables, equations and code are
units of their own (units.text_units), kept whole or not at all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ...models.base import EmbeddingModel
from ...records import Evidence, Sentence
from ...units import is_table_unit, text_units
from .sentence_runs import leans_back, run_on_into, through_displays
from ..text.question_reading import asks, question_ask, states_figure
from ..text.citations import key_stems
from ..text import row_columns
from ..text.row_columns import named_columns_first, named_rows, row_label, table_window
from .not_evidence import entry_marks, is_axis_ticks, is_back_matter_section, is_paper_matter, opens_availability

# Sentences embedded per question (~5-12 ms each on 2 cores): focusing stays well under a second.
EMBED_CANDIDATES = 64
WINDOWS = 3  # passages that get a window; the others get their best sentence
PASSAGE_TOKENS = 180  # the window of the second and third passage
MIN_WINDOW_TOKENS = 24  # a window smaller than this is not worth a passage header
HEADER_TOKENS = 16  # a passage's header in the prompt: "[3] (paper, page 5; section)"
# A figure's caption echoes the question's words, but the figure's numbers are not in the text:
# anchored on it, a window fills with axis labels. Table captions keep their weight (cells follow).
FIGURE_CAPTION_WEIGHT = 0.6
FIGURE_CAPTION = re.compile(
    r"^(?:(?:supplementary|extended data)\s+)?(?:figure|fig\.?)\s*S?\d+[A-Za-z]?\s*[:.|]", re.I)
# The question's words that are in its papers' titles found the paper; within it they are on every
# sentence and do not tell which one answers.
TITLE_TERM_WEIGHT = 0.3
# A topic named once in a heading and reported under it without repeating: a question's term in a
# sentence's section heading counts for the sentence, at this weight.
HEADING_TERM_WEIGHT = 0.5
_MIN_CHARS = 12  # fragments (page numbers, stray symbols) are never kept
# A table row (names and numbers) scores below sentences that name the same things, though the
# asked figure is often in a row only: the best row, scoring at least this share of the best
# sentence, follows the best passage in the first turn.
ROW_SHARE = 0.6
# A question that asks for an amount (question_reading.asks): a sentence stating a figure scores this
# much more, since the result sentence often shares no word with the question ("mH = 125.09 GeV").
ASKED_FIGURE_BONUS = 0.1
# "In the analysis of care at … Hospital in Malawi, how many outpatients …?": the frame's words are
# on many sentences, the answer shares the ask's; each sentence also scores by the ask alone
# (question_reading.question_ask) and keeps the better score.
ASK_SCORING = True
# The measurements behind each value: docs/lab/ (by the constant's name).


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
    heading: str = ""  # the section it is in (the latest heading before it)


def split_sentences(e: Evidence) -> list[_Candidate]:
    """The passage's sentences and blocks. Left out: headings (the section is in the passage
    header) and what is not evidence (not_evidence.py): the entries of a reference list the passage
    runs into, a figure's axis ticks, the paper's front matter and its back matter (a unit under
    such a heading, or opening with one run in)."""
    if is_table_unit(e.text):  # a table's row, or its caption and rows (tables.py): a line is a sentence, whole
        lines, at = [], 0
        for line in e.text.split("\n"):
            if line.strip():
                kind = "text" if not lines and "\n" in e.text.strip() else "block"  # the caption line runs on into the rows
                lines.append(_Candidate(0, len(lines), at, at + len(line), line.strip(), kind, heading=e.section))
            at += len(line) + 1
        return lines
    out = []
    units = text_units(e.text)
    heading = e.section
    for (start, end, kind), entry in zip(units, entry_marks(e.text, units)):
        text = e.text[start:end].strip()
        # A back-matter heading the extractor read as a line of text ("AUTHOR CONTRIBUTION" in the
        # body font) still opens its section: the acknowledgements under it are not evidence.
        if kind == "heading" or (kind == "text" and (is_back_matter_section(text) or opens_availability(text))):
            heading = text
        if kind == "heading" or entry or is_back_matter_section(heading):
            continue
        if len(text) < _MIN_CHARS or is_axis_ticks(text) or is_paper_matter(text, kind):
            continue
        out.append(_Candidate(0, len(out), start, end, text, kind, heading=heading.lstrip("#").strip()))
    return through_displays(out, e.text)


def _matches(term: str, bag: set[str]) -> bool:
    """The term, or a word sharing its first 5+ letters as a whole prefix ("depart" ~ "departure")."""
    if term in bag:
        return True
    if len(term) < 5:
        return False
    return any(len(w) >= 5 and (w.startswith(term) or term.startswith(w)) for w in bag)


def _lexical_scores(query: str, candidates: list[_Candidate], titles: str = "", ask: str = "") -> None:
    """Share of the question's terms in each sentence, rarer terms weighing more (IDF over the
    candidates), and those of the papers' `titles` less (TITLE_TERM_WEIGHT). With `ask` (the
    question without its frame, ASK_SCORING), the better of the two shares."""
    if not candidates:
        return
    asked = [terms for terms in (key_stems(query), key_stems(ask) if ask else set()) if terms]
    if not asked:
        return
    q_terms = set().union(*asked)
    bags = [key_stems(c.text) for c in candidates]
    hits = [{t for t in q_terms if _matches(t, bag)} for bag in bags]
    n = len(bags)
    idf = {t: math.log(1 + n / (1 + sum(t in h for h in hits))) for t in q_terms}
    title_bag = key_stems(titles)
    for t in q_terms:
        if _matches(t, title_bag):
            idf[t] *= TITLE_TERM_WEIGHT
    totals = [sum(idf[t] for t in terms) or 1.0 for terms in asked]
    in_heading: dict[str, set[str]] = {}
    for c, h in zip(candidates, hits):
        if c.heading not in in_heading:
            bag = key_stems(c.heading)
            in_heading[c.heading] = {t for t in q_terms if _matches(t, bag)}
        heading_only = in_heading[c.heading] - h
        c.lexical = max((sum(idf[t] for t in h & terms) + HEADING_TERM_WEIGHT * sum(idf[t] for t in heading_only & terms)) / total
                        for terms, total in zip(asked, totals))


def focus_evidence(
    query: str,
    qvec: np.ndarray,
    evidence: list[Evidence],
    embedder: EmbeddingModel | None,
    *,
    token_budget: int,
    first_tokens: int | None = None,
    count_tokens=None,
    titles: str = "",
    passage_header: Callable[[Evidence], str] | None = None,
) -> list[Evidence]:
    """The passages with their focused sentences, best passage first, within `token_budget`.

    The best passage's window may be as large as `first_tokens` (with its header): the
    answer's first turn reads that passage alone, and its claim is only as good as it.

    Passages none of whose sentences were kept are left out. Numbers are kept (they are
    what the user sees and what the model cites). `count_tokens` measures the prompt
    cost of a sentence (the chat model's tokenizer); the default is ~4 characters a token.
    `titles`: the titles of the passages' papers (their words weigh less, TITLE_TERM_WEIGHT).
    The best table row follows the best passage, within the first turn (`_first_turn_row`);
    `passage_header`: the line a passage opens with in the prompt, so that the two fit it.
    """
    count = count_tokens or (lambda s: max(1, len(s) // 4))
    candidates: list[_Candidate] = []
    per_passage: list[list[_Candidate]] = []
    for i, e in enumerate(evidence):
        units = split_sentences(e)
        for k, c in enumerate(units):
            c.evidence, c.order = i, k
        per_passage.append(units)
        candidates.extend(units)
    if not candidates:
        return []
    ask = question_ask(query) if ASK_SCORING else ""  # the answer shares the ask's words, not the frame's
    _lexical_scores(query, candidates, titles, ask)
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
        qvecs = [qvec, embedder.embed_one(ask)] if ask else [qvec]
        for c, v in zip(to_embed, vecs):
            c.semantic = max(float(np.dot(v, q)) for q in qvecs)
    for c in candidates:
        # Cosine carries the meaning; terms catch names and numbers MiniLM blurs.
        c.score = 0.45 * c.semantic + 0.30 * c.lexical + 0.25 * prior[c.evidence]
        if FIGURE_CAPTION.match(c.text):
            c.score *= FIGURE_CAPTION_WEIGHT
    if asks(query).figure:  # "what mass did they obtain?": the sentence that states one
        for c in candidates:
            if states_figure(c.text):
                c.score += ASKED_FIGURE_BONUS

    # Passages in order of their best sentence and their stage-2 rank, half each.
    best = {i: max((u.score for u in units), default=0.0) for i, units in enumerate(per_passage)}
    order = [i for i in sorted(range(len(evidence)), key=lambda i: -(0.5 * best[i] + 0.5 * prior[i])) if per_passage[i]]
    kept: dict[int, list[int]] = {}
    spent = 0
    # The best WINDOWS passages: a window each, the first as large as the answer's first turn.
    first_cap = max(PASSAGE_TOKENS, (first_tokens or 0) - HEADER_TOKENS)
    row = _first_turn_row(query, evidence, per_passage, order, titles) if first_tokens else None
    if row is not None:  # second, alone, and the best passage's window smaller by what it costs
        order.remove(row.evidence)
        order.insert(1, row.evidence)
        kept[row.evidence] = [row.order]
        # as the prompt shows it: with the columns the question names (prompt.format_passage)
        spent = count(named_columns_first(row.text, query, only=row_columns.NAMED_ONLY)) + 1 + HEADER_TOKENS
        # Headers with long paper ids cost more than HEADER_TOKENS (27-32 tokens measured): the
        # window gives up the difference too, or the row falls out of the first turn. A header
        # costs its line, its line break and the 2 tokens answer_prompt.prompt_cost adds a passage.
        extra = sum(count(passage_header(evidence[i])) + 3 - HEADER_TOKENS for i in order[:2]) if passage_header else 0
        first_cap = max(PASSAGE_TOKENS, first_cap - spent - max(0, extra))
    windows = WINDOWS + (row is not None)  # the row is not one of the windows
    for i in order[:windows]:
        if row is not None and i == row.evidence:
            continue
        room = min(PASSAGE_TOKENS if len(kept) > (row is not None) else first_cap, token_budget - spent - HEADER_TOKENS)
        top = max(per_passage[i], key=lambda u: u.score)
        if room < MIN_WINDOW_TOKENS or _off_topic(top):
            continue
        if is_table_unit(evidence[i].text):  # a caption and rows: the rows asked about, not the run by the caption
            window, cost = table_window(per_passage[i], room, count, _named_lines(query, per_passage[i], titles))
        else:
            window, cost = _window(per_passage[i], top, room, count)
        if window:
            kept[i] = window
            spent += cost + HEADER_TOKENS
    # The other passages: their best sentence (with the one before where it leans on it), best
    # first, so a paper whose answer sentence ranks modestly still gets a say.
    for u in sorted((u for i in order[windows:] for u in per_passage[i]), key=lambda u: -u.score):
        if _off_topic(u) or token_budget - spent < MIN_WINDOW_TOKENS:
            break
        if kept.get(u.evidence):
            continue
        units = per_passage[u.evidence]
        group = [u.order - 1, u.order] if u.order > 0 and leans_back(u.text) else [u.order]
        # With what it runs on into (a listing, an equation) where that fits a window, else alone.
        for option in (group + run_on_into(units, u.order), group):
            cost = sum(count(units[k].text) + 1 for k in option) + HEADER_TOKENS
            if spent + cost <= token_budget and (option is group or cost <= PASSAGE_TOKENS + HEADER_TOKENS):
                kept[u.evidence] = option
                spent += cost
                break

    out: list[Evidence] = []
    for i in order:
        if kept.get(i):
            e, units = evidence[i], per_passage[i]
            out.append(replace(e, sentences=[
                Sentence(u.text, e.char_start + u.start, e.char_start + u.end, round(u.score, 4))
                for u in (units[k] for k in kept[i])
            ]))
    return out


def _first_turn_row(query: str, evidence: list[Evidence], per_passage: list[list[_Candidate]],
                    order: list[int], titles: str = "") -> _Candidate | None:
    """The table row the answer's first turn reads beside the best passage: the best-scoring row
    of those the question names ("…for the YR/FE double mutant", a row named "YR/FE"), else of
    any table, where it scores at least ROW_SHARE of the best sentence. Where the best passage is
    a table already, only the row the question names most fully, where it lacks it (a long table is
    stored in parts: DPR's Table 4 led with the part of DPR's rows, REALMNews's was in another)."""
    if not order:
        return None
    lead = [u for u in per_passage[order[0]] if u.kind == "block"] if is_table_unit(evidence[order[0]].text) else []
    rows = [u for i in order[1:] if is_table_unit(evidence[i].text) for u in per_passage[i] if u.kind == "block"]
    named = [([*lead, *rows])[i] for i in named_rows(query, [row_label(u.text) for u in [*lead, *rows]], titles)]
    if not rows or (lead and (not named or named[0] in lead)):  # (named[0]: by the most words)
        return None
    row = named[0] if lead else max(named or rows, key=lambda u: u.score)
    shared = row.score >= ROW_SHARE * max(u.score for u in per_passage[order[0]])
    return row if (named or shared) and not _off_topic(row) else None


def _named_lines(query: str, units: list[_Candidate], titles: str = "") -> list[int]:
    """The positions of a table unit's rows that the question names (`titles`: its papers')."""
    rows = [u for u in units if u.kind == "block"]
    return [rows[k].order for k in named_rows(query, [row_label(u.text) for u in rows], titles)]


def _off_topic(u: _Candidate) -> bool:
    return u.semantic <= 0.0 and u.lexical == 0.0 and u.score < 0.1


def _window(units: list[_Candidate], top: _Candidate, room: int, count) -> tuple[list[int], int]:
    """The contiguous run of sentences around `top` within `room` tokens: (positions, cost).

    The run grows one sentence at a time toward the better-scoring neighbour; the sentence
    before comes first when the run's first sentence leans on it ("This estimator…") or is
    too short to stand alone. Nothing if `top` alone does not fit.
    """
    cost = count(top.text) + 1
    if cost > room:
        return [], 0
    a = b = top.order
    while True:
        options = []
        if a > 0:
            options.append((2.0 if leans_back(units[a].text) else units[a - 1].score, a - 1))
        if b + 1 < len(units):
            options.append((2.0 if run_on_into(units, b) else units[b + 1].score, b + 1))
        for _, k in sorted(options, reverse=True):
            extra = count(units[k].text) + 1
            if cost + extra <= room:
                cost += extra
                a, b = min(a, k), max(b, k)
                break
        else:
            return list(range(a, b + 1)), cost
