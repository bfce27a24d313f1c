"""Re-citing: a claim whose cited passages do not state it, bound to the passage that does;
and a claim with a supporting citation rid of the ones that do not support it.

A small model often writes a right claim and cites the wrong number. After the support check, a
claim with no supported citation gets one more try: the passage not cited yet that shares most of
its key terms goes through the same check (rules, then the judge), and replaces the unsupported
citations if it supports the claim. A claim with a supported citation drops its unsupported ones
(`prune`); partial ones stay, marked. The judge reads at most `MAX_TRIES` extra pairs an answer.

Withdrawn, where another claim of the model is supported (its text kept in the answer's notes):
a claim stating a figure no passage states that could not be written better (`withdraw_unstated`,
rewrite.py), and one no cited passage supports even in part (`withdraw_unsupported`). The cases
that earned these: docs/lab/.
"""

from __future__ import annotations

import logging

from ...callbacks import IsCancelled
from ...models.base import ChatModel
from ...records import Claim, Evidence, Support
from ..text.citations import key_stems
from .key_sentences import unquoted
from ..check.support import Pair, check_pairs
from ..text.citations import numbers_in, numbers_stated, two_digits_or_more
from .unmentioned import named

log = logging.getLogger(__name__)

MAX_TRIES = 3  # extra pairs the judge reads per answer
MIN_SHARED = 0.5  # share of the claim's key terms a passage must hold to be tried
# ...or this share, where it states every figure of the claim: a figure tells where a claim came
# from better than its words, and a table row holds few words.
FIGURE_SHARED = 0.3


def best_other_passage(claim: Claim, evidence: list[Evidence]) -> Evidence | None:
    """The evidence passage (not cited by the claim) that states all of its figures, where its
    cited passages do not, and shares `FIGURE_SHARED` of its key terms; or else the one holding most
    of its key terms, if enough."""
    wanted = key_stems(claim.text)
    if not wanted:
        return None
    figures = {n for n in numbers_in(claim.text) if two_digits_or_more(n)}
    cited = [e for e in evidence if e.number in claim.sources]
    if cited and figures <= set().union(*(numbers_stated(e.focus_text or e.text) for e in cited)):
        figures = set()  # its figures are where it cites them: its words decide, as before
    scored = []
    for e in evidence:
        if e.number in claim.sources:
            continue
        text = e.focus_text or e.text
        shared = len(wanted & key_stems(text)) / len(wanted)
        states = bool(figures) and figures <= numbers_stated(text) and shared >= FIGURE_SHARED
        scored.append((states, shared, -e.number, e))
    if not scored:
        return None
    states, shared, _, best = max(scored, key=lambda s: s[:3])
    return best if states or shared >= MIN_SHARED else None


def recite(claims: list[Claim], evidence: list[Evidence], checked: dict[tuple[int, int], Pair], chat: ChatModel | None, *,
           context: str = "", cancelled: IsCancelled | None = None) -> int:
    """Move unsupported citations to a passage that supports the claim; the number of claims re-cited.

    `checked` maps (claim index, evidence number) to its checked pair; the new pairs are added
    to it, so the caller renders the answer again and reads every verdict from there.
    """
    tries: list[tuple[int, Pair]] = []
    for i, claim in enumerate(claims):
        if not claim.sources or len(tries) >= MAX_TRIES:
            continue
        verdicts = [checked[(i, n)].verdict for n in claim.sources if (i, n) in checked]
        if Support.SUPPORTED.value in verdicts:
            continue
        other = best_other_passage(claim, evidence)
        if other is not None:
            tries.append((i, Pair(claim.text, other)))
    if not tries:
        return 0
    check_pairs([p for _, p in tries], chat, context=context, cancelled=cancelled)
    moved = 0
    for i, pair in tries:
        checked[(i, pair.evidence.number)] = pair
        if pair.verdict != Support.SUPPORTED.value:
            continue
        claim = claims[i]
        log.debug("re-cited claim %d: passage %s -> %d", i, claim.sources, pair.evidence.number)
        claim.sources = [pair.evidence.number]
        moved += 1
    return moved


def doubt_contradicted(claims: list[Claim], checked: dict[tuple[int, int], Pair]) -> int:
    """A claim one of whose passages states otherwise (the rules found the opposite direction,
    a comparison's sides swapped, a figure of another name) is not supported by its others:
    they share its words, that one decides. Its supported citations become partial, with the
    contradiction as their reason, so no later step treats the claim as supported. The number
    of claims doubted."""
    doubted = 0
    for i, claim in enumerate(claims):
        pairs = [checked[(i, n)] for n in claim.sources if (i, n) in checked]
        against = next((p for p in pairs if p.contradicts), None)
        if against is None:
            continue
        for p in pairs:
            if p.verdict == Support.SUPPORTED.value:
                p.verdict = Support.PARTIAL.value
                p.reason = f"another cited passage says otherwise: {against.rule_reason}"
                doubted += 1
    return doubted


def doubt_off_topic(claims: list[Claim], checked: dict[tuple[int, int], Pair], words: list[str]) -> int:
    """Where the answer carries the caution (unmentioned.py: no paper contains `words`, and no
    passage comes close to the question), a claim of the model answers a question its passages
    are not about: the judge may pass claim and passage, but as an answer it is partial at best.
    Its supported citations become partial, with that reason; quotes keep theirs (they say only
    what the page says). The number of citations doubted."""
    doubted = 0
    for (i, _), p in checked.items():
        if i < len(claims) and not claims[i].quoted and p.verdict == Support.SUPPORTED.value:
            p.verdict = Support.PARTIAL.value
            p.reason = f"the passage is not about the question: no paper in the library mentions {named(words)}"
            doubted += 1
    return doubted


def prune(claims: list[Claim], checked: dict[tuple[int, int], Pair]) -> int:
    """Drop the unsupported citations of claims that have a supported one; the number dropped."""
    dropped = 0
    for i, claim in enumerate(claims):
        verdicts = {n: checked[(i, n)].verdict for n in claim.sources if (i, n) in checked}
        if Support.SUPPORTED.value not in verdicts.values():
            continue
        keep = [n for n in claim.sources if verdicts.get(n) != Support.UNSUPPORTED.value]
        dropped += len(claim.sources) - len(keep)
        claim.sources = keep
    return dropped


def withdraw_unstated(claims: list[Claim], evidence: list[Evidence], checked: dict[tuple[int, int], Pair],
                      context: str = "", held_to_cited: frozenset[int] = frozenset()) -> list[tuple[str, list[str]]]:
    """Remove the model's unsupported claims that state a figure no passage states, if a supported
    claim remains; (claim text, the figures) of each one removed. `checked` is re-keyed to match.

    Claims in `held_to_cited` are held to the passages they cite instead: a claim whose figure
    its passages lack, and that could not be written again (rewrite.py: a passage states
    otherwise, or the new claim was no better supported), is wrong for certain even if another
    passage of the answer happens to hold the same number ("100" in a method)."""
    if not _any_supported(claims, checked):
        return []
    stated = numbers_stated(context)
    for e in evidence:
        stated |= numbers_stated(e.text)
    out: list[tuple[str, list[str]]] = []
    keep: list[int] = []
    for i, claim in enumerate(claims):
        have = stated
        if i in held_to_cited:
            cited = [checked[(i, n)].evidence.text for n in claim.sources if (i, n) in checked]
            have = numbers_stated(" \n".join([context, *cited]))
        unstated = sorted(n for n in numbers_in(claim.text) - have if two_digits_or_more(n))
        if not claim.quoted and unstated and Support.SUPPORTED.value not in _verdicts(claims, checked, i):
            out.append((claim.text, unstated))
        else:
            keep.append(i)
    if out:
        keep_claims(claims, checked, keep)
    return out


def withdraw_unsupported(claims: list[Claim], checked: dict[tuple[int, int], Pair]) -> list[str]:
    """Remove the model's claims that no cited passage supports even in part (every citation
    unsupported, or none), if a supported claim remains; the text of each one removed.
    `checked` is re-keyed to match. A partial citation keeps its claim, marked: the passage says
    some of it. Quotes are the passages' own sentences and always stay."""
    if not _any_supported(claims, checked):
        return []  # nothing better to show: the claims stay, marked
    out: list[str] = []
    keep: list[int] = []
    for i, claim in enumerate(claims):
        if not claim.quoted and not _verdicts(claims, checked, i) & {Support.SUPPORTED.value, Support.PARTIAL.value}:
            out.append(claim.text)
        else:
            keep.append(i)
    if out:
        keep_claims(claims, checked, keep)
    return out


def _verdicts(claims: list[Claim], checked: dict[tuple[int, int], Pair], i: int) -> set[str]:
    """The check's verdicts on claim `i`'s citations."""
    return {checked[(i, n)].verdict for n in claims[i].sources if (i, n) in checked}


def _any_supported(claims: list[Claim], checked: dict[tuple[int, int], Pair]) -> bool:
    """Some claim of the model has a supported citation: the answer keeps a sentence of the
    model's own to stand on if others are withdrawn. Quotes do not count: they are evidence, and
    an answer of quotes alone leaves the reader without the model's answer."""
    return any(not claims[i].quoted and Support.SUPPORTED.value in _verdicts(claims, checked, i) for i in range(len(claims)))


def keep_claims(claims: list[Claim], checked: dict[tuple[int, int], Pair], keep: list[int]) -> None:
    """Keep only the claims at the indices `keep`, in order; `checked` is re-keyed to match."""
    renumber = {old: new for new, old in enumerate(keep)}
    moved = {(renumber[i], n): p for (i, n), p in checked.items() if i in renumber}
    checked.clear()
    checked.update(moved)
    claims[:] = [claims[i] for i in keep]


def mark_quoted(p: Pair) -> None:
    """A quote's citation: the passage's own sentence, supported with nothing to doubt."""
    p.quote, p.verdict, p.reason = unquoted(p.claim), Support.SUPPORTED.value, "quoted from the passage"

