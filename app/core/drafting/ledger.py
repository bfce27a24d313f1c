"""The draft's citations checked and recorded: the support check, drops, and the ledger.

Every (sentence, cited passage) pair gets the support check's verdict (the same
check as answers, research/check/support.py). A citation its passage does not support
is dropped where the sentence keeps a supported one, and flagged otherwise. The
ledger has one row per citation: claim, paper, page, a quote of at most 30
words, the vector / LLM / combined scores and the verdict. The mixin is part of
`SectionDrafter` (draft.py).
"""

from __future__ import annotations

import math
import re

from ..records import Citation, CitationStatus, Evidence, Support
from ..research.text.citations import support
from ..research.check.support import Pair, check_pairs
from ..settings import DeepParams
from ..text.wording import lower_words
from .citations import _clip_chars, _sentences, author_names
from .records import _MARKER, CITE_KEY, DraftResult, LedgerRow, Paragraph, citation_keys_in

QUOTE_WORDS = 30  # longest quote in the ledger
COPY_WORDS = 12  # a run of this many words copied from a passage is flagged
STATUS_OF = {
    Support.SUPPORTED.value: CitationStatus.VERIFIED.value,
    Support.PARTIAL.value: CitationStatus.PARTIAL.value,
    Support.UNSUPPORTED.value: CitationStatus.UNSUPPORTED.value,
}



class LedgerMixin:
    """Checking the written section's citations and building its ledger, for `SectionDrafter`."""

    def _finish(self, result: DraftResult) -> None:
        """Check every citation with the support check, drop or flag the unsupported ones, build the ledger."""
        by_paper: dict[str, list[Evidence]] = {}
        for e in result.offered:
            by_paper.setdefault(e.paper_id, []).append(e)
        key_to_paper = {self.keys[pid]: pid for pid in by_paper}
        cites = self._citations(result.paragraphs, by_paper, key_to_paper)
        self._check(result, [pair for *_, pair in cites])
        verdicts = {(n, pair.claim, key): pair for n, _, _, key, pair in cites}  # the claim is the same with fewer keys
        if self._drop_unsupported(result, cites):
            cites = self._citations(result.paragraphs, by_paper, key_to_paper)
            for n, _, _, key, pair in cites:
                checked = verdicts[(n, pair.claim, key)]
                pair.quote, pair.verdict, pair.reason = checked.quote, checked.verdict, checked.reason

        body_offset = len(f"# {result.title}\n\n")
        offsets, offset = [], body_offset
        for paragraph in result.paragraphs:
            offsets.append(offset)
            offset += len(paragraph.text) + 2
        for n, start, end, key, pair in cites:
            pid = key_to_paper[key]
            paper = self.library_papers[pid]
            e = pair.evidence
            verdict, note, quote_text = pair.verdict, pair.reason, pair.quote
            status = STATUS_OF.get(verdict, CitationStatus.UNSUPPORTED.value)
            result.ledger.append(LedgerRow(
                paragraph=n, claim=pair.claim, key=key, paper_id=pid, title=paper.title,
                authors="; ".join(paper.authors), year=paper.year, page=e.page, page_label=e.page_label or str(e.page),
                quote=clip_words(quote_text or quote(e.text, pair.claim)), vector_score=vector_score(e, self.params),
                llm_score=e.llm_score, combined_score=e.score, support=verdict, status=status, query=e.query,
                support_note=note,
            ))
            result.citations.append(Citation(
                raw=f"[@{key}]", paper_id=pid, page=e.page, status=status,
                start=offsets[n - 1] + start, end=offsets[n - 1] + end,
                evidence_number=e.number, note=key, support=verdict, quote=quote_text,
            ))
        for n, paragraph in enumerate(result.paragraphs, 1):
            for e_key, e_page, words in copied_runs(paragraph.text, by_paper, self.keys):
                result.warnings.append(f"Paragraph {n} repeats {words}+ words verbatim from [@{e_key}] page {e_page}; rephrase it before use.")
        cited = result.cited_keys()
        result.keys = {key_to_paper[k]: k for k in cited}
        result.papers = {pid: self.library_papers[pid] for pid in result.keys}
        total = len(result.ledger)
        supported = sum(r.support == Support.SUPPORTED.value for r in result.ledger)
        partial = sum(r.support == Support.PARTIAL.value for r in result.ledger)
        unsupported = total - supported - partial
        if unsupported or partial:
            parts = [f"{supported} of {total} citations supported"]
            if partial:
                parts.append(f"{partial} only partly (marked ?)")
            if unsupported:
                parts.append(f"{unsupported} not supported by the passage they cite (marked ✗)")
            result.warnings.append("Support check: " + ", ".join(parts) + "; see the ledger's support column, and check or rewrite those sentences.")
        for r in result.ledger:
            if r.support == Support.UNSUPPORTED.value:
                result.warnings.append(f"Paragraph {r.paragraph}: [@{r.key}] (page {r.page}) does not support “{_clip_chars(r.claim, 140)}”"
                                       + (f" ({r.support_note})." if r.support_note else "."))

    def _citations(self, paragraphs: list[Paragraph], by_paper: dict[str, list[Evidence]],
                   key_to_paper: dict[str, str]) -> list[tuple[int, int, int, str, Pair]]:
        """(paragraph number, key start, key end, key, the pair to check) for every key in the text, in order."""
        out = []
        for n, paragraph in enumerate(paragraphs, 1):
            for m in _MARKER.finditer(paragraph.text):
                claim = claim_of(paragraph.text, m.start())
                for km in CITE_KEY.finditer(m.group(0)):
                    key = km.group(1)
                    e, _ = best_passage(claim, by_paper[key_to_paper[key]])
                    out.append((n, m.start() + km.start(), m.start() + km.end(), key, Pair(claim, e)))
        return out

    def _check(self, result: DraftResult, pairs: list[Pair]) -> None:
        """The support check on all pairs in one call: fills each pair's verdict, reason and quote.

        The model's verdict is asked for when it can be had before the writer's grace
        period ends (and the check is on in Settings); otherwise the rules decide
        (numbers and names must occur in the passage), and a warning says so.
        """
        if not pairs:
            return
        chat = self._chat_model()
        left = self.budget.remaining()
        predicted = self.check_cost_s(len(pairs))
        use_model = self.funnel.params.check_support and (math.isinf(left) or predicted <= left + self._grace_s())
        # Names a sentence may take from the cited paper itself ("Zeileis (2004) shows …").
        papers = dict.fromkeys(p.evidence.paper_id for p in pairs)
        context = " ".join(f"{self.library_papers[pid].title} {author_names(self.library_papers[pid])} {self.library_papers[pid].year}"
                           for pid in papers)
        started = self.budget.clock()
        check_pairs(pairs, chat if use_model else None, context=context, cancelled=self.user_cancelled,
                    timeout_s=self.funnel.params.synthesis_timeout_s)
        result.timings["check_s"] = round(self.budget.clock() - started, 2)
        if not use_model:
            why = "the support check is off in Settings" if not self.funnel.params.check_support else (
                f"no time was left for the model's check (~{predicted:.0f} s)")
            result.warnings.append(f"Citations were checked by rules only (numbers and names must occur in the passage): {why}.")

    def _drop_unsupported(self, result: DraftResult, cites: list[tuple[int, int, int, str, Pair]]) -> int:
        """Remove an unsupported key from a citation group where another key of the group stands.

        A sentence whose only citations are unsupported keeps them, flagged: removing them
        would leave a claim with no source at all. Returns how many keys were removed.
        """
        removed = 0
        for n in sorted({c[0] for c in cites}):
            paragraph = result.paragraphs[n - 1]
            text = paragraph.text
            groups: dict[int, list[tuple[str, Pair]]] = {}
            markers = list(_MARKER.finditer(text))
            for pn, start, _, key, pair in cites:
                if pn == n:
                    group = next(m for m in markers if m.start() <= start < m.end())
                    groups.setdefault(group.start(), []).append((key, pair))
            for m in reversed(markers):
                members = groups.get(m.start(), [])
                good = [k for k, p in members if p.verdict != Support.UNSUPPORTED.value]
                bad = [(k, p) for k, p in members if p.verdict == Support.UNSUPPORTED.value]
                if not good or not bad:
                    continue
                text = text[: m.start()] + "[" + "; ".join("@" + k for k in dict.fromkeys(good)) + "]" + text[m.end():]
                for key, pair in bad:
                    removed += 1
                    result.warnings.append(
                        f"Paragraph {n}: removed [@{key}] from “{_clip_chars(pair.claim, 140)}”: the support check found that "
                        f"its passage (page {pair.evidence.page}) does not state this"
                        + (f" ({pair.reason})" if pair.reason else "") + "; the sentence keeps its other citation.")
            if text != paragraph.text:
                result.paragraphs[n - 1] = Paragraph(text=text, keys=citation_keys_in(text), complete=paragraph.complete)
        return removed


def claim_of(text: str, position: int) -> str:
    """The sentence a citation at `position` belongs to, without citations."""
    for a, b in _sentences(text):
        if a <= position <= b:
            return " ".join(_MARKER.sub(" ", text[a:b]).split()).replace(" .", ".")
    return " ".join(_MARKER.sub(" ", text).split())


def best_passage(claim: str, passages: list[Evidence]) -> tuple[Evidence, float]:
    scored = sorted(((support(claim, e.text), e.score, i) for i, e in enumerate(passages)), reverse=True)
    s, _, i = scored[0]
    return passages[i], s


def quote(passage: str, claim: str, max_words: int = QUOTE_WORDS) -> str:
    """The passage's sentence closest to the claim, at most `max_words` words."""
    text = " ".join(passage.replace("#", " ").split())
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 3] or [text]
    best = max(sentences, key=lambda s: (support(claim, s), -sentences.index(s)))
    words = best.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


def clip_words(text: str, max_words: int = QUOTE_WORDS) -> str:
    words = " ".join(text.replace("#", " ").split()).split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


def vector_score(e: Evidence, params: DeepParams) -> float | None:
    """The passage's cosine similarity: stored, or recovered from the combined score."""
    stored = getattr(e, "vector_score", None)
    if stored is not None:
        return stored
    if e.llm_score is None:
        return e.score  # unscored passages rank by their vector score alone
    if not params.vector_weight:
        return None
    return round((e.score - params.llm_weight * e.llm_score) / params.vector_weight, 3)


def copied_runs(text: str, by_paper: dict[str, list[Evidence]], keys: dict[str, str]) -> list[tuple[str, int, int]]:
    """(key, page, words) for passages the paragraph copies COPY_WORDS+ words from."""
    words = lower_words(_MARKER.sub(" ", text))
    grams = {tuple(words[i : i + COPY_WORDS]) for i in range(len(words) - COPY_WORDS + 1)}
    if not grams:
        return []
    hits = []
    for pid, passages in by_paper.items():
        for e in passages:
            pw = lower_words(e.text)
            if any(tuple(pw[i : i + COPY_WORDS]) in grams for i in range(len(pw) - COPY_WORDS + 1)):
                hits.append((keys[pid], e.page, COPY_WORDS))
    return hits

