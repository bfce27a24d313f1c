"""A figure a structured reply writes is one its evidence prints.

A 1.5B model that reads "0.66" in a table row writes "−0.85"; asked how many seeds were kept, where
the passage says 178, it writes "2 good seeds". The support check faults such a figure afterwards
(`support_rules`: a figure of two significant digits or more that no cited passage states) and the
claim is written again, by the same model, which invents again. This holds the reply to the rule
while it is written: inside a JSON string, a run of digits must be the start of a figure the prompt
prints, and once the run ends it must be one of them. The model's own choice among what is left
stands: where it wanted "0.85" and the evidence prints "0.66", "0." is followed by its likeliest
allowed digit.

What counts mirrors the check: a figure of one significant digit ("2 models", "Table 3", "p < 0.05")
is always allowed, since passages often spell such counts out. A figure may be written in another
form of what the text prints: a share "0.083" as "8.3" (%) and "83 %" as "0.83", a count spelled
out ("twelve", "twenty-five") in digits, superscript digits ("10⁶") in plain ones, a thousands
separator left out ("37364" for "37,364"). Without those forms the guard would do harm: a model
writing "12" for a printed "twelve" would be turned away at the "2" and stop at "1".

Bytes, not characters: the sampler decodes one token at a time, and a token can hold half of a
multi-byte character. The digits, the dot, the comma, the quote and the backslash are ASCII, and
UTF-8 never uses those bytes inside another character, so reading the bytes as Latin-1 is exact
for everything this looks at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FIGURE = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_DIGITS = frozenset("0123456789")
_SEPARATORS = frozenset(".,")
_THOUSANDS = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")
_SHARE = re.compile(r"0\.[0-9]+")
_PERCENT = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(?:%|per ?cent)")
_RAISED = "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"
_RAISED_RUN = re.compile(f"[{_RAISED}]+")
_PLAIN_DIGITS = str.maketrans(_RAISED, "01234567890123456789")
_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = {w: 10 * k for k, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_SPELLED = re.compile(rf"\b(?:({'|'.join(_TENS)})(?:[- ]({'|'.join(_SMALL[1:10])}))?|({'|'.join(_SMALL)})|(hundred|thousand|dozen))\b",
                      re.I)
_WORD_VALUES = {"hundred": 100, "thousand": 1000, "dozen": 12}


def _spelled(text: str) -> set[str]:
    """The counts `text` spells out, in digits ("twenty-five" → "25")."""
    out = set()
    for tens, unit, small_word, big in _SPELLED.findall(text):
        if tens:
            out.add(str(_TENS[tens.lower()] + (_SMALL.index(unit.lower()) if unit else 0)))
        else:
            out.add(str(_SMALL.index(small_word.lower()) if small_word else _WORD_VALUES[big.lower()]))
    return out


def small(figure: str) -> bool:
    """One digit after any leading zeros ("2", "0.05"; not "10" or "300"): always allowed, as the
    check allows it (`support_rules.two_digits_or_more`)."""
    return len(figure.replace(".", "").replace(",", "").lstrip("0")) <= 1


def figures_of(text: str) -> frozenset[str]:
    """The figures `text` prints, in the forms a faithful claim may write them."""
    plain = _RAISED_RUN.sub(lambda m: f" {m.group().translate(_PLAIN_DIGITS)} ", text)  # "10⁶": 10 and 6
    out: set[str] = _spelled(text)
    out.update(f"{float(v) / 100:.10g}" for v in _PERCENT.findall(plain))
    for raw in _FIGURE.findall(plain):
        out.add(raw)
        if _THOUSANDS.fullmatch(raw):
            out.add(raw.replace(",", ""))
        if _SHARE.fullmatch(raw):  # a share: "0.083" may be written "8.3" (%); not a version ("0.9.11")
            out.add(f"{float(raw) * 100:.10g}")
    return frozenset(out)


@dataclass
class _State:
    in_string: bool = False
    escaped: bool = False
    run: str = ""  # the digits (and separators) being written inside a string


class FigureGuard:
    """Follows a JSON reply byte by byte and says whether a next piece keeps its figures printed."""

    def __init__(self, figures: frozenset[str], opening: bytes = b"") -> None:
        self.figures = figures
        self._prefixes = {f[:i] for f in figures for i in range(1, len(f) + 1)}
        self._state = _State()
        self.refused = 0  # pieces refused (for the tests and the benchmark)
        if opening and not self._feed(self._state, opening):
            raise ValueError("the reply's opening already states a figure its evidence does not print")

    def allows(self, piece: bytes) -> bool:
        state = _State(self._state.in_string, self._state.escaped, self._state.run)
        ok = self._feed(state, piece)
        self.refused += not ok
        return ok

    def accept(self, piece: bytes) -> None:
        """The piece was written (allowed or not: the sampler may have had no allowed choice)."""
        if not self._feed(self._state, piece):
            self._state.run = ""  # written anyway: follow the reply on from here

    def _ends(self, state: _State) -> bool:
        """The run ends here: it must be a figure of the evidence (a trailing stop is not part of it)."""
        figure, state.run = state.run.rstrip(".,"), ""
        return not figure or figure in self.figures or small(figure)

    def _grows(self, run: str) -> bool:
        return run in self._prefixes or small(run.rstrip(".,"))

    def _feed(self, state: _State, piece: bytes) -> bool:
        for c in piece.decode("latin-1"):
            if not state.in_string:
                state.in_string = c == '"'
                continue
            if state.escaped:
                state.escaped = False
                continue
            if c in _DIGITS or (c in _SEPARATORS and state.run[-1:] in _DIGITS):
                if self._grows(state.run + c):
                    state.run += c
                    continue
                if c in _SEPARATORS:  # "2.17." or "12, 14": the figure ended with the one before
                    if not self._ends(state):
                        return False
                    continue
                return False
            if state.run and not self._ends(state):
                return False
            if c == "\\":
                state.escaped = True
            elif c == '"':
                state.in_string = False
        return True
