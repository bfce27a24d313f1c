"""A claim that only says the question back, or the prompt's own instructions.

Asked "Which operations must an index class support for it to be usable as the index of a zoo
series?", the starter model may answer "An index class must support operations for it to be
usable as the index of a zoo series." Asked how often complications occur "according to the
DVT-prophylaxis review", it may answer that they "occur according to the DVT-prophylaxis
review". Such a claim names no thing and no figure the question did not, so it cannot be
wrong, and the support check often passes it; but it answers nothing, and as the answer's
first sentence it looks like an answer. rewrite.py writes it again from the key passages.

An answer to a yes-or-no question may repeat the question's words and still answer it ("X does
Y" to "Does X do Y?"), so such questions are left alone, as is a claim that says yes, no, not
or only.

The starter model may also copy the instruction it was given as its claim ("The figure, name or
direction the question asks for, with numbers, units and names copied exactly…", seen on a
development question, twice in one answer). The support check can pass such a sentence as
"partial" (it shares the passage's generic words); it answers nothing either. Or it may open a
real answer with a run of the instruction's words ("The figure, name or direction the question
asks for is the conditional test…"): a run of `COPIED_RUN` words of the instructions, outside
the examples they give in quotes ("The papers found do not report …"), is copied, not written.
"""

from __future__ import annotations

import re

from functools import cache

from ...paths import load_prompt
from ..text.citations import stem, word_stems
from ..text.citations import numbers_in

# Words a claim may add to the question and still say nothing: where something was said, not what.
_SAYS_WHERE = {stem(w) for w in """according work review article research report reported reports found finds
    state states stated mention mentioned discuss discussed discusses present presented presents measure measured
    describe text sentence passage question answer answers""".split()}
# A verdict: the claim takes a side on the question, in the question's own words.
_POLAR = re.compile(r"\b(?:yes|no|not|never|none|neither|nor|cannot|without|only|unlike|instead)\b|n[’']t\b", re.I)
# A yes-or-no question: it opens with an auxiliary verb, or has one after a leading phrase
# ("In the force-field study with an unsupported arm, did catch trials…"), or asks whether.
_YES_NO = re.compile(r"(?:^|[,;:]\s*)(?:do|does|did|is|are|was|were|can|could|should|will|would|has|have|had|may|"
                     r"might|must)\b|\bwhether\b", re.I)


def echoes_question(claim: str, query: str) -> bool:
    """True if `claim` names no term or figure that `query` lacks (but where it was said), takes
    no side (yes, no, not, only…), and `query` is not a yes-or-no question."""
    if not claim.strip() or _POLAR.search(claim) or _YES_NO.search(query.strip()):
        return False
    added = word_stems(claim) - word_stems(query) - _SAYS_WHERE
    return not added and not numbers_in(claim) - numbers_in(query)


# The prompts whose instructions the model writes its claims after (their placeholders left out).
ANSWER_PROMPTS = ("synthesis_first.md", "synthesis_parts.md", "synthesis_claims.md", "rewrite.md")
INSTRUCTION_SHARE = 0.6  # of the claim's words, from the instructions and not from the question
MIN_ECHO_WORDS = 6  # a short claim ("HC3 is the default.") may share a few words by chance
COPIED_RUN = 6  # words in a row of the instructions; none of the 170 labelled claims shares a run this long


@cache
def _instructions() -> tuple[str, ...]:
    """The answer prompts' text, their placeholders left out."""
    return tuple(re.sub(r"\{[^{}]*\}", " ", load_prompt(name)) for name in ANSWER_PROMPTS)


@cache
def _instruction_stems() -> frozenset[str]:
    return frozenset(word_stems(" ".join(_instructions())))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def word_runs(text: str, n: int) -> set[tuple[str, ...]]:
    """Every run of `n` words of `text` (lower case, letters and digits)."""
    words = _words(text)
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@cache
def _instruction_runs() -> frozenset[tuple[str, ...]]:
    """Every run of `COPIED_RUN` words in the instructions, less their quoted examples."""
    parts = (part for text in _instructions() for part in re.split(r"[“\"][^”\"]*[”\"]", text))  # an example in quotes is there to be followed
    return frozenset(run for part in parts for run in word_runs(part, COPIED_RUN))


def copies_instructions(claim: str, query: str = "") -> bool:
    """True if `claim` has a run of `COPIED_RUN` words of the instructions, most of them not the question's."""
    asked, runs = set(_words(query)), _instruction_runs()
    return any(run in runs and 2 * sum(w in asked for w in run) < COPIED_RUN for run in word_runs(claim, COPIED_RUN))


def echoes_instructions(claim: str, query: str = "") -> bool:
    """True if most of `claim`'s words are the answer prompts' instructions rather than the
    question's or the papers' (the model copied what it was told to do), or it copies a run of them."""
    words = word_stems(claim) - word_stems(query)
    mostly = len(words) >= MIN_ECHO_WORDS and len(words & _instruction_stems()) >= INSTRUCTION_SHARE * len(words)
    return mostly or copies_instructions(claim, query)


def says_nothing(claim: str, query: str) -> bool:
    """The claim only says the question back, or copies the prompt's instructions."""
    return (bool(query) and echoes_question(claim, query)) or echoes_instructions(claim, query)
