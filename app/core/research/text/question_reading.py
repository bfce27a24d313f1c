"""Reading a question: what it asks for, its parts, its ask without its frame, and a claim that only says it back.

Every pattern is in `PATTERNS` (one table: name, then the pattern). What each part decides, and where
it earns its place:

- **Asks** (`asks`, `states_figure`, `is_year`): a call to make or an amount. "How do I …?" is
  answered by a call in a code listing, which the sentence before it introduces ("A 10-day rolling
  window standard deviation can be computed by" | `rollapply(r, 10, sd)`); "how often / many / much
  …?", "what rate …?" by a sentence that states the figure (asked to write one, the starter guesses:
  "125.3 GeV" for 125.09). Key sentences (answer/key_sentences.py) and focusing (evidence/focus.py)
  weigh such sentences up (focusing's "asked figure bonus" moved no question in the evidence
  ablation of docs/research.md: a candidate for removal there).
- **Parts** (`question_parts`, `own_terms`, `open_parts`, `missing_parts_note`): researchers ask two
  things at once ("what retention probabilities were used, and how far did the error fall…?"). The
  split is deliberately narrow: only where a new question clause begins, after "and"/"or" with a
  question word, after ", and" with an auxiliary ("…, and do I still need src/Makevars…"), or after
  a question mark; a list inside one clause ("what do (1 | g1/g2), (1 | g1) + (1 | g2) and (x || g)
  mean?") stays one part. A later part whose own words neither the claims nor the key passages use
  is named beneath the answer: the reader learns which part may be missing (a turn of the model's
  own for each open part was measured and not kept: docs/lab/2026-11-29.md).
- **The ask** (`question_ask`): the question without the frame that says where to look ("In the
  Malawi hospital study, …", "According to the paper on …, …"), which focusing scores apart: ask
  scoring earned its place in the evidence ablation (off: 4 gold pages and 4 questions' facts lost).
- **Echo** (`says_nothing`, `echoes_question`, `echoes_instructions`, `word_runs`): a claim that
  names no thing and no figure the question did not ("An index class must support operations for
  it to be usable as the index of a zoo series"), or copies the answer prompts' instructions ("The
  figure, name or direction the question asks for, with numbers … copied exactly"). It cannot be
  wrong, so the support check often passes it, yet it answers nothing; answer/rewrite.py writes it
  again from the key passages (docs/lab/2026-11-27.md). A yes-or-no question may be answered in its own words ("X does Y"),
  so such questions are left alone, as is a claim that says yes, no, not or only. A run of
  `COPIED_RUN` words of the instructions, outside the examples they give in quotes, is copied.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from ...paths import load_prompt
from ...records import Claim
from ...text.wording import lower_words
from .citations import key_stems, numbers_in, stem, word_stems

_WH = r"(?:what|how|why|when|where|which|who|whom|whose|whether)"
_AUX = r"(?:do|does|did|is|are|was|were|can|could|should|would|will|has|have|had)"
# The amounts papers report in every field: rates and shares, counts, sizes, errors, effects and their tests.
_AMOUNT = (r"rates?|proportions?|percentages?|fractions?|shares?|numbers?|values?|mass|size|magnitude|incidence|"
           r"prevalence|risks?|accuracy|error|sensitivity|specificity|(?:odds|hazard|risk) ratios?|effect sizes?|"
           r"correlations?|coefficients?|estimates?|p-values?|speed-?ups?|reduction|increase|decrease|yield|"
           r"concentrations?|dose|doses|duration|frequency|mortality|survival|efficiency|temperature")

# The patterns, one table: name, then the pattern (what it reads in the comment above it).
_PATTERNS: dict[str, str] = {
    # How to do something: a call to make. "How does X differ from Y" asks for an explanation, not a call.
    "call": r"(?i)\bhow\s+(?:(?:do|can|could|should|would|might)\s+(?:I|we|you|one|users?)|to)\b|"
            r"\b(?:which|what)\s+(?:function|command|call|argument|option|syntax|code)s?\b|\bsyntax\b",
    # An amount: "how large is the vector" as much as "how many clusters"; "how well does it fit" and
    # "how strong" usually too (a fit statistic, an effect size).
    "amount": rf"(?i)\bhow\s+(?:often|many|much|large|big|small|long|far|high|low|fast|frequent(?:ly)?|"
              rf"accurate|precise|strong|well|common)\b|"
              rf"\bwhat\s+(?:[\w-]+\s+){{0,3}}?(?:{_AMOUNT})\b|\bas\s+measured\s+by\b",
    # A figure a sentence reports: a share, a decimal, a count of two digits or more…
    "figure": r"\d+(?:\.\d+)?\s?%|\d*\.\d+|\b\d{1,3}(?:,\d{3})+\b|\b\d{2,}\b",
    # …not a year of the last two centuries, and not a numbered citation ("[72-75,77]").
    "year": r"(?:19|20)\d\d",
    "citation": r"\[[\d,\s–-]+\]",
    # Where a new question clause begins: "and"/"or" with a question word, ", and" with an auxiliary, a question mark.
    "new clause": rf"(?i),?\s+(?:and|or)\s+(?={_WH}\b)|,\s+and\s+(?={_AUX}\b)|\?\s+(?=[A-Z])",
    # A frame that says where to look ("In the Malawi hospital study, how many…?", "When the tuner was mounted
    # on the cavity, how was…?"): it ends at the comma before the question word.
    "frame": r"(?i)^(?:in|for|according to|from|within|across|among|on|when|while|after|before|using|with|at|"
             rf"during|compared (?:with|to))\b[^?]*?,\s+(?=(?:{_WH}|{_AUX}|to what)\b)",
    # A verdict: the claim takes a side on the question, in the question's own words.
    "polar": r"(?i)\b(?:yes|no|not|never|none|neither|nor|cannot|without|only|unlike|instead)\b|n[’']t\b",
    # A yes-or-no question: an auxiliary verb first, or after a leading phrase ("In the force-field study
    # with an unsupported arm, did catch trials…"), or "whether".
    "yes-no": r"(?i)(?:^|[,;:]\s*)(?:do|does|did|is|are|was|were|can|could|should|will|would|has|have|had|"
              r"may|might|must)\b|\bwhether\b",
    "placeholder": r"\{[^{}]*\}",  # a prompt's "{question}", left out of its instructions
    "quoted": r"[“\"][^”\"]*[”\"]",  # an example in quotes, there to be followed
}
PATTERNS: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
ASKS_HOW = PATTERNS["call"]
ASKS_FIGURE = PATTERNS["amount"]

MIN_PART_WORDS = 3  # "Where and when did Rcpp originate?" is one part: "Where" asks nothing alone
ANSWERED_SHARE = 0.5  # a part is answered when the claims hold this much of its own key terms
# Words a claim may add to the question and still say nothing: where something was said, not what.
_SAYS_WHERE = {stem(w) for w in """according work review article research report reported reports found finds
    state states stated mention mentioned discuss discussed discusses present presented presents measure measured
    describe text sentence passage question answer answers""".split()}
# The prompts whose instructions the model writes its claims after (their placeholders left out).
ANSWER_PROMPTS = ("synthesis_first.md", "synthesis_parts.md", "synthesis_claims.md", "rewrite.md")
INSTRUCTION_SHARE = 0.6  # of the claim's words, from the instructions and not from the question
MIN_ECHO_WORDS = 6  # a short claim ("HC3 is the default.") may share a few words by chance
COPIED_RUN = 6  # words in a row of the instructions; none of the 170 labelled claims shares a run this long


# -- asks ---------------------------------------------------------------------------------

class Asks(NamedTuple):
    """What the question asks for (`asks`)."""
    call: bool = False  # how to do something: a command in a code listing
    figure: bool = False  # an amount: a sentence that states one


def asks(query: str) -> Asks:
    return Asks(call=bool(ASKS_HOW.search(query)), figure=bool(ASKS_FIGURE.search(query)))


def states_figure(text: str) -> bool:
    """The sentence reports a figure (not only a year or a citation number)."""
    return any(not is_year(m.group()) for m in PATTERNS["figure"].finditer(PATTERNS["citation"].sub("", text)))


def is_year(figure: str) -> bool:
    """The figure is a year of the last two centuries ("2019"), not an amount."""
    return bool(PATTERNS["year"].fullmatch(figure))


# -- parts and the ask --------------------------------------------------------------------

def question_parts(question: str) -> list[str]:
    """The question's parts in order; one part for a question that asks one thing."""
    parts: list[str] = []
    for piece in PATTERNS["new clause"].split(question.strip()):
        piece = piece.strip(" ,;?")
        if not piece:
            continue
        if parts and (len(piece.split()) < MIN_PART_WORDS or len(parts[-1].split()) < MIN_PART_WORDS):
            parts[-1] = f"{parts[-1]} and {piece}"
        else:
            parts.append(piece)
    return parts or [question.strip()]


def question_ask(question: str) -> str:
    """The question without the frame it opens with (where to look), or "" where it has none."""
    m = PATTERNS["frame"].match(question.strip())
    return question.strip()[m.end():] if m else ""


def own_terms(part: str, others: list[str]) -> set[str]:
    """The part's key terms (stemmed) that the other parts do not share: what only this part asks about."""
    shared = set().union(*map(key_stems, others))
    return key_stems(part) - shared


def open_parts(question: str, claims: list[Claim]) -> list[str]:
    """The parts after the first that no claim speaks to: fewer than half of the part's own key
    terms appear in the claims. The first part is the first claim's."""
    parts = question_parts(question)
    said = set().union(*(key_stems(c.text) for c in claims))
    out = []
    for i, part in enumerate(parts[1:], 1):
        own = own_terms(part, parts[:i] + parts[i + 1:])
        if own and len(own & said) < ANSWERED_SHARE * len(own):
            out.append(part)
    return out


def missing_parts_note(missing: list[str]) -> str:
    """The answer's note naming the parts of the question whose own words nothing in it (claims
    and key passages) uses (`open_parts` of the answer's claims and key passages)."""
    named = " and ".join(f"“{part}”" for part in missing)
    these, its, it = ("these parts", "their", "them") if len(missing) > 1 else ("this part", "its", "it")
    # Said as the words tell it: a claim can answer a part in other words ("Monte Carlo" for "what
    # other option is available"), as 2 of the 4 questions so named in 32 development answers did.
    return (f"Answer: {these} of the question may be left unanswered: {named}. Neither the claims nor the "
            f"key passages use {its} words; ask {it} on {its} own to search for {it}.")


# -- echo ---------------------------------------------------------------------------------

def echoes_question(claim: str, query: str) -> bool:
    """True if `claim` names no term or figure that `query` lacks (but where it was said), takes
    no side (yes, no, not, only…), and `query` is not a yes-or-no question."""
    if not claim.strip() or PATTERNS["polar"].search(claim) or PATTERNS["yes-no"].search(query.strip()):
        return False
    added = word_stems(claim) - word_stems(query) - _SAYS_WHERE
    return not added and not numbers_in(claim) - numbers_in(query)


@cache
def _instructions() -> tuple[str, ...]:
    """The answer prompts' text, their placeholders left out."""
    return tuple(PATTERNS["placeholder"].sub(" ", load_prompt(name)) for name in ANSWER_PROMPTS)


@cache
def _instruction_stems() -> frozenset[str]:
    return frozenset(word_stems(" ".join(_instructions())))


def word_runs(text: str, n: int) -> set[tuple[str, ...]]:
    """Every run of `n` words of `text` (lower case, letters and digits)."""
    words = lower_words(text)
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@cache
def _instruction_runs() -> frozenset[tuple[str, ...]]:
    """Every run of `COPIED_RUN` words in the instructions, less their quoted examples."""
    parts = (part for text in _instructions() for part in PATTERNS["quoted"].split(text))
    return frozenset(run for part in parts for run in word_runs(part, COPIED_RUN))


def copies_instructions(claim: str, query: str = "") -> bool:
    """True if `claim` has a run of `COPIED_RUN` words of the instructions, most of them not the question's."""
    asked, runs = set(lower_words(query)), _instruction_runs()
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
