"""Where a sentence ends, and the pieces of the page it runs on into.

The page's text comes in units (chunking.text_units): sentences, and blocks set apart by a line
break. A sentence without its stop runs on into the unit after it, which the reader needs: the
listing it introduces, the equation it states ("The result is" | "mH = 125.09 ± 0.24 GeV" |
"= 125.09 ± 0.21 (stat.) ± 0.11 (syst.)"). Focusing's window reads such units together, and
short pieces join the sentence before them outright (`through_displays`). A listing's first command
(`first_command`) is what a how-to question's quote gives with the sentence that introduces it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, TypeVar

# Two units of a page follow one another where at most a few characters (a space, a line break)
# lie between them: no heading, dropped line or figure between.
NEIGHBOUR_GAP = 3
RUN_ON_UNITS = 3  # "The result is" | "mH = 125.09 ± 0.24 GeV" | "= 125.09 ± 0.21 (stat.) ± 0.11 (syst.) GeV,"
DISPLAY_CHARS = 120  # a piece this short that a sentence runs on into is part of it (a display equation)

_SHORT_WORDS = 7  # a sentence this short rarely stands alone ("See Table 2.")

Unit = TypeVar("Unit", bound=Any)  # a dataclass with start, end, text, kind and order (focus._Candidate)


def ends_sentence(text: str) -> bool:
    """The text ends with its sentence's stop (before a closing quote or bracket)."""
    return bool(P["ended"].search(text.rstrip()))


def follows(end: int, start: int) -> bool:
    """A unit starting at `start` follows on the page the one ending at `end` (page offsets)."""
    return 0 <= start - end <= NEIGHBOUR_GAP


def runs_on(u: Any) -> bool:
    """A sentence without its full stop that runs on into the unit after it: "… can be computed
    by" | a code listing, "The result is" | "mH = 125.09 ± 0.24 GeV" (a display equation)."""
    return u.kind == "text" and not ends_sentence(u.text)


def _own_sentence(text: str) -> bool:
    """A piece that reads as a sentence of its own: a capitalised word first, its stop last ("The
    departure dates are on GitHub: …." after "…supplied regarding data availability:"), where a
    display equation opens with a symbol or a variable ("mH = 125.09 ± 0.24 GeV", "= 0.21") and
    the clause that ends the sentence with a small letter ("where the total uncertainty is …")."""
    return bool(P["opens_sentence"].match(text)) and ends_sentence(text)


def through_displays(units: list[Unit], text: str) -> list[Unit]:
    """The units with each sentence that runs on through display equations made one sentence.

    Apart, "The result is" and "mH = 125.09 ± 0.24 GeV" each scored too low to be quoted or read
    first, and the combined Higgs mass never reached the answer. Only short pieces join
    (`DISPLAY_CHARS`), `RUN_ON_UNITS` at most: a code listing, or a paragraph after a sentence
    cut by a column break, stays a unit of its own (focusing's window reads it after the sentence).
    A joined unit's text is the page's own (`text`, the passage) from its first piece to its last.
    """
    out: list[Unit] = []
    joined = 0
    for u in units:
        last = out[-1] if out else None
        if (last is not None and joined < RUN_ON_UNITS and runs_on(last) and u.kind == "text"
                and follows(last.end, u.start) and len(u.text) <= DISPLAY_CHARS and not _own_sentence(u.text)):
            out[-1] = replace(last, end=u.end, text=text[last.start:u.end].strip())
            joined += 1
            continue
        joined = 0
        out.append(replace(u, order=len(out)))
    return out


def leans_back(text: str) -> bool:
    """The sentence needs the one before it to be understood ("This estimator…"), or is too short to stand alone."""
    return bool(P["leans_back"].match(text)) or len(text.split()) < _SHORT_WORDS


def run_on_into(units: list[Unit], k: int) -> list[int]:
    """The units after `k` that its sentence runs on into (RUN_ON_UNITS at most)."""
    out: list[int] = []
    while len(out) < RUN_ON_UNITS and k + 1 < len(units) and runs_on(units[k]) and follows(units[k].end, units[k + 1].start):
        k += 1
        out.append(k)
    return out


# -- the first command of a code listing a sentence introduces ------------------------------------
#
# Software papers answer "how do I …" with a call in a listing: a console session (`R> coeftest(…)`
# and its output) or a bare script. A how-to question's quote (key_sentences._with_code) shows the
# sentence with one command, read at a glance, so it must be the first one that does the work (past
# the set-up lines) and must read whole.

CODE_CHARS = 160  # the command quoted: one call, read at a glance
_PATTERNS: dict[str, str] = {
    # A sentence ends with its stop (before a closing quote or bracket).
    "ended": r"[.!?][\"'”’)\]]*$",
    "opens_sentence": r"[A-Z][a-z]+\b",
    # A sentence opening with one of these needs the sentence before it to be understood.
    "leans_back": r"(?i)^(?:this|these|that|those|it|its|they|their|such|here|there|thus|hence|therefore|however|"
                  r"in contrast|in addition|moreover|furthermore|similarly|consequently|accordingly|likewise|"
                  r"also|then|finally|second|third|both|the latter|the former|as a result|for example|for instance)\b",
    "prompt": r"^(?:R>|>>>|>|\$|In \[\d+\]:)\s?",  # a console's prompt before a command
    "continued": r"^(?:\+|\.\.\.)\s?",  # and before its continued lines
    "code_like": r"[(=;{]|<-|::",
    # Without prompts, a listing's output reads like code too ("Z = 1.42, p-value = 0.92"): a call,
    # an assignment arrow, a statement's end or a scope marks code.
    "statement": r"\w\(|<-|::|;\s*$|\{\s*$",
    # Set-up lines come first in a listing and answer nothing: packages, data, seeds.
    "setup": r"^(?:library|require|data|set\.seed|options|import|from\s+\S+\s+import|#include|using\s+namespace)\b",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def first_command(block: str) -> str:
    """The first command of a code block past its set-up lines: after a console prompt, with its
    continued lines (the output below it left out), else the block's first statement; "" if none,
    or if it runs on past what would be quoted (an open bracket or string) or is too long."""
    lines = [line.rstrip() for line in block.strip().strip("`").strip("\n").splitlines() if line.strip()]
    if any(P["prompt"].match(line) for line in lines):
        commands: list[str | None] = []
        for line in lines:
            if P["prompt"].match(line):
                commands.append(P["prompt"].sub("", line).strip())
            elif commands and P["continued"].match(line) and commands[-1] is not None:
                commands[-1] += " " + P["continued"].sub("", line).strip()
            elif commands:
                commands.append(None)  # output: the command before it is complete
        candidates = [c for c in commands if c]
    else:
        candidates = [line.strip() for line in lines if P["statement"].search(line) and not line.lstrip().startswith(("#", "//"))]
    first = next((c for c in candidates if not P["setup"].match(c)), "")
    return first if P["code_like"].search(first) and _whole(first) and len(first) <= CODE_CHARS else ""


def _whole(command: str) -> bool:
    """The command reads whole: its brackets close and its quotes pair (not a string or call that
    runs on to lines the quote leaves out)."""
    depth = 0
    for ch in command:
        depth += (ch in "([{") - (ch in ")]}")
        if depth < 0:
            return False
    return depth == 0 and command.count('"') % 2 == 0 and command.count("'") % 2 == 0
