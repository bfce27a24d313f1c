"""A claim of the model that the check faults is written again once, from the sentences it rests on.

A claim the check faults (no cited passage supports it even in part, it states a figure none of
its passages states, it only says the question back, or it is beside the point) gets one more try:
the model reads the question, the answer's key passages and the sentences of the passages the
claim cited (~300 tokens in all), and writes the claim again in one sentence, or says the
sentences do not state the answer and names the closest finding they do state.

The new claim goes through the same check (the model reading its passages most alike first, up to
the first that supports it: judged_until_supported) and takes the old one's place where it is better
supported (supported over partial over unsupported; an echo gives way to any claim a passage
supports at least in part). The answer's notes keep the old text. A quote never takes the place
of a claim: the answer is the model's, with the key passages beneath it as evidence. A failed call
leaves the answer as it was.
"""

from __future__ import annotations

import json
import logging
from typing import NamedTuple

from ...callbacks import IsCancelled
from ...errors import Cancelled, ModelError
from ...models.base import ChatMessage, ChatModel
from ...paths import load_prompt
from ...records import Claim, Evidence, Support
from ...units import is_caption_line, is_table_unit
from .check import answer_probability, beside_the_point
from .prompt import printed_figures
from .key_sentences import unquoted
from ..text.question_reading import says_nothing
from .recite import keep_claims
from .second_turn import repeats
from ..text.citations import key_stems
from ..check.support import ORDER, Pair, check_pairs
from ..text.citations import numbers_in, support as key_term_support

log = logging.getLogger(__name__)

MAX_REWRITES = 2  # claims written again per answer: each is one short call (~300 tokens read, one sentence written)
REWRITE_CHARS = 1200  # the sentences it reads, ~300 tokens: the key passages first, then the cited ones best first
REWRITE_TOKENS = 120  # one sentence in its JSON
CAPTION_KEY = 40  # characters of a quoted caption that find its table among the passages
REWRITE_SCHEMA = {"type": "object", "properties": {"claim": {"type": "string"}}, "required": ["claim"]}

ECHO, FIGURE, UNSUPPORTED, OFF_POINT = "echo", "figure", "unsupported", "off point"  # why a claim is written again


def rewrite_messages(query: str, sentences: list[str]) -> list[ChatMessage]:
    system = load_prompt("synthesis_system.md").strip()
    listed = "\n".join(f"- “{s}”" for s in sentences)
    user = load_prompt("rewrite.md").strip().format(query=query, sentences=listed)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class Rewritten(NamedTuple):
    """A claim of the model written again after the check faulted it."""

    old: str  # the claim as the model first wrote it
    new: str  # the claim now in the answer
    why: str  # ECHO, FIGURE or UNSUPPORTED

    def message(self) -> str:
        said = f"the claim “{self.old.rstrip('. ')}”"
        because = {ECHO: "only repeated the question", FIGURE: "stated a figure no cited passage states",
                   UNSUPPORTED: "was not supported by the passages it cited",
                   OFF_POINT: "did not state what was asked"}[self.why]
        return f"Support check: {said} {because}; it was written again from the sentences it rests on."


def fault(claims: list[Claim], checked: dict[tuple[int, int], Pair], i: int, query: str = "",
          best_answer: float | None = None) -> str | None:
    """Why the check faults claim `i` of the model (ECHO, FIGURE, UNSUPPORTED, OFF_POINT), or None.

    A figure is faulted by the rules, not the judge alone: a figure no passage states is wrong for
    certain (125.3 GeV where the paper gives 125.09 GeV), while the judge agrees with people on
    4 pairs in 5 at best; a claim the judge finds only partly supported stays as written, unless
    it is beside the point: a sentence of the papers (P(yes) `best_answer`) is rated clearly
    better than it for answering the question (answer_check.py)."""
    claim = claims[i]
    if claim.quoted:
        return None
    if says_nothing(claim.text, query):
        return ECHO
    pairs = [checked[(i, n)] for n in claim.sources if (i, n) in checked]
    verdicts = {p.verdict for p in pairs}
    if Support.SUPPORTED.value in verdicts:
        return OFF_POINT if beside_the_point(claim.answers, best_answer) else None
    if any(p.rule == Support.UNSUPPORTED.value and any(numbers_in(m) for m in p.missing) for p in pairs):
        return FIGURE
    if Support.PARTIAL.value not in verdicts:
        return UNSUPPORTED
    return OFF_POINT if beside_the_point(claim.answers, best_answer) else None


def sentences_for(claim: Claim, claims: list[Claim], evidence: list[Evidence], *,
                  cited_first: bool = False) -> list[tuple[str, int]]:
    """(sentence, passage number) the claim is written again from: the answer's key passages
    first, then the sentences of the passages it cited, best first, up to `REWRITE_CHARS`. The
    best sentence of each cited passage is always among them: long key passages had crowded out
    the table row a claim cited and misread ("−0.85" for the row's 0.66), so the rewrite never
    saw the figure it was to correct. `cited_first` (a claim faulted for its figure): those best
    sentences lead, since the claim read them and only misread the figure."""
    by_number = {e.number: e for e in evidence}
    picked: list[tuple[str, int]] = []
    for q in claims:
        if q.quoted and q.sources and q.sources[0] in by_number:
            picked.append((unquoted(q.text), q.sources[0]))
            picked += table_rows(unquoted(q.text), evidence)
    must: set[str] = set()  # each cited passage's best sentence
    for n in dict.fromkeys(claim.sources):
        e = by_number.get(n)
        if e is None:
            continue
        ranked = sorted(e.sentences, key=lambda s: -s.score) if e.sentences else []
        cited = [(s.text, n) for s in ranked] or [(e.focus_text, n)]
        must.add(_key(cited[0][0]))
        picked += cited
    room = REWRITE_CHARS - sum(len(t) for t in {_key(t): t for t, _ in picked if _key(t) in must}.values())
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for text, n in picked:
        key = _key(text)
        if key in seen:
            continue
        if key not in must:
            if out and len(text) > room:
                continue
            room -= len(text)
        seen.add(key)
        out.append((text, n))
    if cited_first:
        out.sort(key=lambda item: _key(item[0]) not in must)  # stable: each group keeps its order
    return out


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def table_rows(caption: str, evidence: list[Evidence]) -> list[tuple[str, int]]:
    """(row, passage number) of the table whose caption `caption` is, as far as the evidence holds
    it; none if `caption` is not a table's. A key passage is often the caption, which says in the
    question's words what the table holds ("Fold change results for the top 12 metabolites showing
    the greatest increase…"), and not the row that answers: the claim is written again with both."""
    key = _plain(caption)[:CAPTION_KEY]
    if len(key) < CAPTION_KEY:
        return []
    for e in evidence:
        lines = [s.text for s in e.sentences] if is_table_unit(e.text) else []
        if any(is_caption_line(line) and key in _plain(line) for line in lines):
            return [(line, e.number) for line in lines if not is_caption_line(line)]
    return []


def _best(pairs: list[Pair]) -> str:
    return max((p.verdict for p in pairs if p.verdict), key=ORDER.__getitem__, default=Support.UNSUPPORTED.value)


def rewrite_faulted(claims: list[Claim], evidence: list[Evidence], checked: dict[tuple[int, int], Pair],
                    chat: ChatModel, query: str, *, context: str = "", best_answer: float | None = None,
                    cancelled: IsCancelled | None = None) -> tuple[list[Rewritten], frozenset[int]]:
    """Write each faulted claim of the model again (at most `MAX_REWRITES`), in place.

    Returns the claims written again, and the indices of claims faulted for a figure that could
    not be written better (they are held to the passages they cite: recite.withdraw_unstated).
    `checked` receives the new claims' pairs in place of the old ones'."""
    by_number = {e.number: e for e in evidence}
    done: list[Rewritten] = []
    unchanged: set[int] = set()
    tries = 0
    for i in range(len(claims)):
        why = fault(claims, checked, i, query, best_answer)
        if why is None:
            continue
        new = None
        if tries < MAX_REWRITES:
            tries += 1
            new = _rewrite(claims, i, evidence, by_number, checked, chat, query, why, context, cancelled)
        if new is None:
            if why == FIGURE:
                unchanged.add(i)
            continue
        done.append(Rewritten(claims[i].text, new.text, why))
        claims[i] = new
    return done, _drop_repeats(claims, checked, unchanged) if done else frozenset(unchanged)


def _drop_repeats(claims: list[Claim], checked: dict[tuple[int, int], Pair], unchanged: set[int]) -> frozenset[int]:
    """Two faulted claims written again from the same sentences can come back as one sentence
    (seen on development answers: the zero part's and the link's defaults of hurdle(), each
    faulted, both rewritten as the whole default; a rewritten first claim that now also states the
    second one's tuning range). The answer says it once: a model claim whose key terms and figures
    an earlier one all states goes, with its citations. Returns `unchanged` re-indexed."""
    said: list[Claim] = []
    keep: list[int] = []
    for i, claim in enumerate(claims):
        if claim.quoted or not key_stems(claim.text) or not repeats(claim, said, share=1.0):
            keep.append(i)
        if not claim.quoted:
            said.append(claim)
    if len(keep) < len(claims):
        keep_claims(claims, checked, keep)
    return frozenset(keep.index(i) for i in unchanged if i in keep)


def _rewrite(claims: list[Claim], i: int, evidence: list[Evidence], by_number: dict[int, Evidence],
             checked: dict[tuple[int, int], Pair], chat: ChatModel, query: str, why: str, context: str,
             cancelled: IsCancelled | None) -> Claim | None:
    """Claim `i` written again and checked, its pairs put in `checked`; None where it came back no better."""
    old = claims[i]
    sentences = sentences_for(old, claims, evidence, cited_first=why == FIGURE)
    if not sentences:
        return None
    try:
        messages = rewrite_messages(query, [s for s, _ in sentences])
        reply = chat.chat(messages, max_tokens=REWRITE_TOKENS, temperature=0.0, json_schema=REWRITE_SCHEMA,
                          cancelled=cancelled, **printed_figures(chat, messages[-1]["content"]))
        text = " ".join(str(json.loads(reply).get("claim", "")).split())
    except Cancelled:  # the user stopped: the checked answer stands as it was
        return None
    except (ModelError, ValueError, AttributeError) as exc:
        log.warning("writing a claim again failed (%s); it stays as the model wrote it", exc)
        return None
    if not text or _plain(text) == _plain(old.text) or says_nothing(text, query):
        return None
    pairs = judged_until_supported([Pair(text, by_number[n]) for n in dict.fromkeys(n for _, n in sentences)],
                                   chat, context=context, cancelled=cancelled)
    best = _best(pairs)
    before = _best([checked[(i, n)] for n in old.sources if (i, n) in checked])
    answers = None
    if why == OFF_POINT:  # as well supported, at least in part, and rated higher for answering the question
        answers = answer_probability(chat, query, text, cancelled=cancelled)
        better = (ORDER[best] >= ORDER[Support.PARTIAL.value] and answers is not None
                  and old.answers is not None and answers > old.answers)
    elif why == ECHO:
        better = ORDER[best] >= ORDER[Support.PARTIAL.value]
    else:
        better = ORDER[best] > ORDER[before]
    if not better or any(p.contradicts for p in pairs):
        return None
    kept, pages = [], set()
    for p in pairs:  # one citation a page: two key passages of one page would cite it twice
        page = (p.evidence.paper_id, p.evidence.page)
        if p.verdict == best and page not in pages:
            pages.add(page)
            kept.append(p)
    for key in [k for k in checked if k[0] == i]:
        del checked[key]
    checked.update(((i, p.evidence.number), p) for p in kept)
    return Claim(text=text, sources=[p.evidence.number for p in kept], answers=answers)


def judged_until_supported(pairs: list[Pair], chat: ChatModel, *, context: str = "",
                           cancelled: IsCancelled | None = None) -> list[Pair]:
    """The new claim's pairs, each passage it was written from: the rules read them all, the
    model the most alike first (by the claim's key terms in the pair's quote), stopping at the
    first it finds supported. Returns the pairs the model read or the rules decided; a pair left
    unread is not cited. A rewritten claim rests on one or two of the sentences it read, and
    each judge read is ~200 tokens: reading all 3-5 passages cost 3-9 s an answer
    (docs/lab/2026-12-07-rewrite-cost.md). A passage the rules find stating otherwise is kept in
    the result, unread or not, so that it still turns the claim down."""
    check_pairs(pairs, None, context=context)  # the rules alone: quotes, caps, contradictions
    order = sorted(pairs, key=lambda p: -key_term_support(p.claim, p.quote or p.evidence.text))
    out: list[Pair] = []
    for n, p in enumerate(order):
        check_pairs([p], chat, context=context, cancelled=cancelled)  # no read where the rules decided
        out.append(p)
        if p.verdict == Support.SUPPORTED.value:
            out += [q for q in order[n + 1:] if q.contradicts]
            break
    return out


def _plain(text: str) -> str:
    return " ".join(text.lower().strip().strip("“”\"'").rstrip(". ").split())


def withdrawal_messages(withdrawn: list[tuple[str, list[str]]]) -> list[str]:
    """What the answer says of each claim withdrawn: its text, and the figures no cited passage states."""
    out = []
    for text, figures in withdrawn:
        why = f"no passage it cites states {', '.join(figures)}" if figures else "no cited passage supports it"
        out.append(f"Support check: withdrew the claim “{text.rstrip('. ')}”: {why}.")
    return out
