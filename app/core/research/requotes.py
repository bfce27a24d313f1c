"""Quotes in place of the claims the support check withdrew.

The answer's quotes were chosen to add to the claims, so what a withdrawn claim said was left out
of them: "lme4 uses the Nelder-Mead simplex algorithm and Powell's BOBYQA algorithm" failed the
check (P(yes) 0.44), and the sentence that names both had not been quoted because the claim had.

A withdrawn claim is the model's reading of a sentence it was shown. Where one sentence holds
most of the claim's key terms, that is the sentence it read, and quoted it says in the paper's
words what the claim tried to: "A permutation test can exploit the ordinal structure … by
assigning numeric scores to the allele length categories in the transformation g rather than the
dummy codings used above" was withdrawn at P(yes) 0.47, and the best-ranked sentence left in its
place was the paper's "ignoring the ordinal structure of the allele length is suboptimal", not
"An intuitive idea for capturing the ordinal information would be to assign numeric scores to
the allele length categories …", the answer. A wrong claim's sentence is quoted as it stands,
so the quote corrects it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..records import Claim, Evidence
from .citations import key_stems
from .key_sentences import key_sentences, quotable, quoted, unquoted
from .question_asks import Asks

RESEMBLES = 0.5  # the share of a withdrawn claim's key terms a sentence holds where it is the one the claim read
READ_BONUS = 1.0  # ranks the sentence a withdrawn claim read above the others (focus score and P(yes) are each 0-1)


def requote(claims: list[Claim], evidence: list[Evidence], limit: int, ratings: dict[str, float], *,
            withdrawn: Iterable[str] = (), per_passage: int = 2, asked: Asks = Asks()) -> list[Claim]:
    """Up to `limit` quotes in place of the claims the support check withdrew (their texts:
    `withdrawn`), without asking the model again. First the sentence each withdrawn claim read
    (`read_sentence`), even from a passage quoted twice already (it stands for the claim, not
    for one more quote of its passage); then the candidates ranked as the answer's quotes were:
    focus score plus the P(yes) each was rated with (`ratings`, `key_sentences.answer_quotes`;
    unrated adds nothing), from passages with fewer than `per_passage` quotes."""
    candidates = quotable(claims, evidence, asked)
    focus = {c.text: c.score for c in candidates}
    read = {read_sentence(text, focus) for text in withdrawn} - {None}

    def ranked(texts: list[str]) -> list[float]:
        return [focus.get(t, 0.0) + ratings.get(t, 0.0) + (READ_BONUS if t in read else 0.0) for t in texts]

    # The read sentences rank first; a quote holds one (alone, or joined with a neighbour) or is
    # not a read one (a read sentence the claims already say is no candidate).
    found = [q for q in key_sentences(claims, evidence, min(limit, len(read)), prior=ranked, per_passage=per_passage, asked=asked)
             if any(unquoted(quoted(t)) in q.text for t in read)]
    cited = [n for c in claims + found if c.quoted for n in c.sources]
    full = frozenset(n for n in cited if cited.count(n) >= per_passage)
    return found + key_sentences(claims + found, evidence, limit - len(found), prior=ranked, skip=full,
                                 per_passage=per_passage, asked=asked)


def read_sentence(claim: str, candidates: Iterable[str]) -> str | None:
    """The candidate that holds most of the claim's key terms, if it holds at least `RESEMBLES` of them."""
    terms = key_stems(claim)
    best, shared = None, 0
    for text in candidates:
        n = len(terms & key_stems(text))
        if n > shared:
            best, shared = text, n
    return best if terms and shared >= RESEMBLES * len(terms) else None


def withdrawal_messages(withdrawn: list[tuple[str, list[str]]], requoted: int) -> list[str]:
    """What the answer says of each claim withdrawn (its text, and the figures no cited passage
    states) and of the quotes given in their place."""
    out = []
    for text, figures in withdrawn:
        why = f"no passage it cites states {', '.join(figures)}" if figures else "no cited passage supports it"
        out.append(f"Support check: withdrew the claim “{text.rstrip('. ')}”: {why}.")
    if requoted:
        out.append(f"Support check: quoted {requoted} sentence{'s' if requoted != 1 else ''} of the papers "
                   f"in place of the withdrawn claim{'s' if len(withdrawn) != 1 else ''}.")
    return out
