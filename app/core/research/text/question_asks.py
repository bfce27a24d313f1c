"""What a question asks for, beyond a statement: a call to make, or an amount.

Both change which sentences of the papers are worth quoting (key_sentences.py):
- "How do I …?" is answered by a call in a code listing, which the sentence before it
  introduces ("A 10-day rolling window standard deviation can be computed by" | `rollapply(r, 10, sd)`);
- "How often …?", "how many …?", "what rate …?" are answered by a sentence that states the
  figure. Asked to write it, the starter model guesses one ("125.3 GeV" for 125.09, retention
  probabilities "0.5, 0.7 and 0.9" for 0.5 and 0.8); the support check withdraws the guess, and
  the quotes, rated by the model's P(yes) that a sentence answers, ranked the sentences that
  frame the measurement ("Scores were analyzed by specialty…") with the one that reports it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# "How does X differ from Y" asks for an explanation, not a call.
ASKS_HOW = re.compile(r"\bhow\s+(?:(?:do|can|could|should|would|might)\s+(?:I|we|you|one|users?)|to)\b|"
                      r"\b(?:which|what)\s+(?:function|command|call|argument|option|syntax|code)s?\b|\bsyntax\b", re.I)

# "How large is the vector" asks for an amount as much as "how many clusters"; "how well does it
# fit" and "how strong" usually too (a fit statistic, an effect size). The nouns are the amounts
# papers report in every field: rates and shares, counts, sizes, errors, effects and their tests.
_AMOUNT = (r"rates?|proportions?|percentages?|fractions?|shares?|numbers?|values?|mass|size|magnitude|incidence|"
           r"prevalence|risks?|accuracy|error|sensitivity|specificity|(?:odds|hazard|risk) ratios?|effect sizes?|"
           r"correlations?|coefficients?|estimates?|p-values?|speed-?ups?|reduction|increase|decrease|yield|"
           r"concentrations?|dose|doses|duration|frequency|mortality|survival|efficiency|temperature")
ASKS_FIGURE = re.compile(rf"\bhow\s+(?:often|many|much|large|big|small|long|far|high|low|fast|frequent(?:ly)?|"
                         rf"accurate|precise|strong|well|common)\b|"
                         rf"\bwhat\s+(?:[\w-]+\s+){{0,3}}?(?:{_AMOUNT})\b|\bas\s+measured\s+by\b", re.I)

# A figure a sentence reports: a share, a decimal, a count of two digits or more; not a year and
# not a numbered citation ("[72-75,77]").
_FIGURE = re.compile(r"\d+(?:\.\d+)?\s?%|\d*\.\d+|\b\d{1,3}(?:,\d{3})+\b|\b\d{2,}\b")
_YEAR = re.compile(r"(?:19|20)\d\d")
_CITATION = re.compile(r"\[[\d,\s–-]+\]")


class Asks(NamedTuple):
    """What the question asks for (`asks`)."""
    call: bool = False  # how to do something: a command in a code listing
    figure: bool = False  # an amount: a sentence that states one


def asks(query: str) -> Asks:
    return Asks(call=bool(ASKS_HOW.search(query)), figure=bool(ASKS_FIGURE.search(query)))


def states_figure(text: str) -> bool:
    """The sentence reports a figure (not only a year or a citation number)."""
    return any(not is_year(m.group()) for m in _FIGURE.finditer(_CITATION.sub("", text)))


def is_year(figure: str) -> bool:
    """The figure is a year of the last two centuries ("2019"), not an amount."""
    return bool(_YEAR.fullmatch(figure))
