"""The first command of a code listing, as a how-to question's quote gives it (key_sentences._with_code).

Software papers answer "how do I …" with a call in a listing: a console session (`R> coeftest(…)`
and its output) or a bare script. The quote shows one command, read at a glance, so it must be
the first one that does the work (past the set-up lines) and must read whole.
"""

from __future__ import annotations

import re

CODE_CHARS = 160  # the command quoted: one call, read at a glance
_PROMPT = re.compile(r"^(?:R>|>>>|>|\$|In \[\d+\]:)\s?")  # a console's prompt before a command
_CONTINUED = re.compile(r"^(?:\+|\.\.\.)\s?")  # and before its continued lines
_CODE_LIKE = re.compile(r"[(=;{]|<-|::")
# Without prompts, a listing's output reads like code too ("Z = 1.42, p-value = 0.92"): a call,
# an assignment arrow, a statement's end or a scope marks code.
_STATEMENT = re.compile(r"\w\(|<-|::|;\s*$|\{\s*$")
# Set-up lines come first in a listing and answer nothing: packages, data, seeds.
_SETUP = re.compile(r"^(?:library|require|data|set\.seed|options|import|from\s+\S+\s+import|#include|using\s+namespace)\b")


def first_command(block: str) -> str:
    """The first command of a code block past its set-up lines: after a console prompt, with its
    continued lines (the output below it left out), else the block's first statement; "" if none,
    or if it runs on past what would be quoted (an open bracket or string) or is too long."""
    lines = [line.rstrip() for line in block.strip().strip("`").strip("\n").splitlines() if line.strip()]
    if any(_PROMPT.match(line) for line in lines):
        commands: list[str | None] = []
        for line in lines:
            if _PROMPT.match(line):
                commands.append(_PROMPT.sub("", line).strip())
            elif commands and _CONTINUED.match(line) and commands[-1] is not None:
                commands[-1] += " " + _CONTINUED.sub("", line).strip()
            elif commands:
                commands.append(None)  # output: the command before it is complete
        candidates = [c for c in commands if c]
    else:
        candidates = [line.strip() for line in lines if _STATEMENT.search(line) and not line.lstrip().startswith(("#", "//"))]
    first = next((c for c in candidates if not _SETUP.match(c)), "")
    return first if _CODE_LIKE.search(first) and _whole(first) and len(first) <= CODE_CHARS else ""


def _whole(command: str) -> bool:
    """The command reads whole: its brackets close and its quotes pair (not a string or call that
    runs on to lines the quote leaves out)."""
    depth = 0
    for ch in command:
        depth += (ch in "([{") - (ch in ")]}")
        if depth < 0:
            return False
    return depth == 0 and command.count('"') % 2 == 0 and command.count("'") % 2 == 0
