"""Key sentences: the best evidence sentences, quoted verbatim as an answer's supporting claims.

The answer's second turn has the model read the passages after the best ones and add
claims. With the starter model that turn costs ~8 s of reading and ~5 s of writing, and
on the answer bench its claims often restate the first claim or copy a passage beside
the question. Quoting the sentences that focusing scored best costs no model time, and
a quote cannot misstate its passage: the support check has nothing to doubt.

A quote is chosen only if it
- adds to what the claims already say (most of its key terms are new);
- reads as prose, not a table row, an equation or a figure caption;
- stands alone (a sentence that leans on the one before it is quoted with it);
- states something: not a question, a road map, an announced list or an entry of the reference list.
One quote per passage, best focus score first.
"""

from __future__ import annotations

import re

from ..records import Claim, Evidence, Sentence
from .citations import key_terms, stem
from .focus import FIGURE_CAPTION, leans_back

SAID_SHARE = 0.6  # a sentence whose key terms the claims already hold this much of adds nothing
MIN_WORDS = 8
NUMBER_BONUS = 0.05  # on the focus score (0-1)
MAX_CHARS = 450  # a quote is read at a glance; longer sentences are usually run-together text


def key_sentences(claims: list[Claim], evidence: list[Evidence], limit: int) -> list[Claim]:
    """Up to `limit` quoted claims from the focused sentences, best-scored first, each citing its passage."""
    said = {stem(t) for c in claims for t in key_terms(c.text)}
    candidates: list[tuple[float, int, str]] = []
    for e in evidence:
        for k, s in enumerate(e.sentences):
            text = _with_antecedent(e.sentences, k)
            if text is None or not _prose(text):
                continue
            terms = {stem(t) for t in key_terms(text)}
            if not terms or len(terms & said) >= SAID_SHARE * len(terms):
                continue
            # A sentence that reports a figure is more often the answer than one that frames it.
            candidates.append((s.score + (NUMBER_BONUS if re.search(r"\d", text) else 0.0), e.number, text))
    out: list[Claim] = []
    used: set[int] = set()
    seen: set[str] = set()
    for _, number, text in sorted(candidates, key=lambda c: -c[0]):
        if number in used or text in seen:  # one quote a passage; a page repeated in two passages once
            continue
        used.add(number)
        seen.add(text)
        out.append(Claim(text=quoted(text), sources=[number], quoted=True))
        if len(out) >= limit:
            break
    return out


def quoted(text: str) -> str:
    """The sentence in quotation marks, its own final stop left for the citation to precede."""
    return f"“{text.rstrip().rstrip('.')}”"


def unquoted(text: str) -> str:
    return text.strip().strip("“”")


def _with_antecedent(sentences: list[Sentence], k: int) -> str | None:
    """The sentence, with the one before it where it leans on it; None if that one was not kept."""
    text = " ".join(sentences[k].text.split())
    if not re.match(r"^[A-Z(]", text):  # starts mid-sentence: a fragment of the page
        return None
    if leans_back(text) and len(text.split()) >= MIN_WORDS:
        prev = sentences[k - 1] if k > 0 else None
        if prev is None or prev.char_end > sentences[k].char_start or sentences[k].char_start - prev.char_end > 3:
            return None
        text = " ".join(prev.text.split()) + " " + text
    return text


# Sentences that point elsewhere instead of stating something: a list announced ("…one of the
# following"), the paper's road map ("Section 5.2 replicates…"), an aside in brackets.
_POINTER = re.compile(r"^(?:\(|(?:in\s+)?(?:section|sect\.|chapter|appendix)\s+\d)|(?:following|as follows|below)\W*$", re.I)


# An entry of a reference list: it opens with an author ("Knudson MM, Morabito D…", "Haentjens P:",
# "Smith, J., Jones, K.…"), or cites a journal's volume and pages ("2002, 53:142-164") or a DOI.
_FIRST_AUTHOR = re.compile(r"^[A-Z][a-z][A-Za-z'’-]*,? (?:[A-Z]{1,3}|[A-Z]\.(?: ?[A-Z]\.)*)\s*[,:]")
_JOURNAL = re.compile(r"\b(?:19|20)\d\d\s*[,;]\s*\d+\s*(?:\(\d+\))?\s*:\s*\d+|\bdoi\b", re.I)


def _reference_entry(text: str) -> bool:
    return bool(_FIRST_AUTHOR.match(text) or _JOURNAL.search(text))


def _prose(text: str) -> bool:
    if len(text) > MAX_CHARS or len(text.split()) < MIN_WORDS or "|" in text or FIGURE_CAPTION.match(text):
        return False
    if _POINTER.search(text.rstrip(".:")) or text.rstrip().endswith("?"):  # a question posed is not an answer
        return False
    if _reference_entry(text):
        return False
    # Results are full of digits, signs and brackets ("0.083 vs 0.072, P < 0.001"); an equation
    # or a garbled extraction is full of other symbols.
    plain = sum(ch.isalnum() or ch.isspace() or ch in ".,;:()[]%<>=±-–−/'’\"“”" for ch in text)
    return plain >= 0.95 * len(text) and text.rstrip()[-1:] in ".!?)"
