"""Where a sentence ends: the project's one rule for cutting running text into sentences.

A full stop, "!" or "?" (with any closing quotes or brackets after it) ends a sentence when
the next one visibly starts:

- with a capital, a digit, or an opening quote or bracket (the usual case);
- with a name or symbol set in lower case, which science writes at the start of a sentence
  as it is spelt: a word with an inner capital or digit (`lacZ`, `mRNA`, `codeML`, `lme4`,
  `p53`), a one-letter symbol joined to its word (`p-values`, `t-test`, `n-hexane`,
  `k = 5`), a Greek letter (`β-sitosterol`);
- with any word its source set apart as a name: Markdown emphasis or code (`*rpoS*`,
  `_gfp_`, `**x**`, `` `numpy` ``), LaTeX emphasis or math (`\\emph{p}`, `\\textit{n}`,
  `$q$`). A parser that removed that markup passes the positions where it began as
  `marked` (markup is gone from the text by then, and with it the evidence).

It does not end after an abbreviation ("et al.", "e.g.", "Fig.", "p. 4"), and a lower-case
word that is none of the above stays in the sentence ("E. coli", "approx. two").

Blank lines (paragraph breaks) always end a sentence. Characters in `attached` (the
check's citation marks) that follow a stop belong to the sentence before it, and also
count as a sentence's start.

Users: the manuscript check (check/draft.py). The PDF side keeps chunking.py's own test,
which adds what extracted PDF text needs (raised citation numbers after the stop:
"… waste.13–17 However"); its lower-case-name rule is the `_INNER` shape below.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

# Words that end with a full stop without ending the sentence ("et al.", "Fig. 2").
ABBREVIATIONS = frozenset({
    "al", "e.g", "i.e", "cf", "fig", "figs", "eq", "eqs", "vs", "resp", "approx", "no", "nos", "p", "pp", "ca",
    "sec", "ref", "refs", "dr", "prof", "mr", "ms", "st", "vol", "ed", "eds", "ch", "etc", "c.f", "viz", "tab",
    "sp", "spp", "var", "subsp", "cv", "incl", "suppl", "approx", "jr", "sr", "inc", "ltd", "co", "corp",
})
_OPENERS = "\"'“‘(["
_CLOSERS = "\"')]’”"
# A name spelt in lower case: a lower-case run then a capital or digit inside the word
# ("lacZ", "mRNA", "lme4"); a one-letter symbol joined by a hyphen or followed by a relation
# ("p-values", "n-hexane", "p < 0.05"); a Greek letter ("β-sitosterol", "α helices").
_INNER = r"[a-z]+[A-Z0-9]"
_PATTERNS: dict[str, str] = {
    "paragraph": r"\n[ \t]*\n",
    "name_start": _INNER + r"|[a-z]\s?[-–]\s?\w|[a-z]\s*[<>=≤≥≈]|[α-ω]",
    "abbreviated": r"([\w.]+)\.[" + re.escape(_CLOSERS) + r"]*$",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


@lru_cache(maxsize=8)
def _end_pattern(attached: str) -> re.Pattern[str]:
    after = r"\s|$" + (f"|[{re.escape(attached)}]" if attached else "")
    return re.compile(r"[.!?][" + re.escape(_CLOSERS) + r"]*(?=" + after + ")")


def is_name_start(word: str) -> bool:
    """Whether `word` (the text from a sentence's first character on) opens with a name or
    symbol written in lower case (see the module doc)."""
    return bool(P["name_start"].match(word))


def opens_sentence(text: str, pos: int, *, marked: Collection[int] = (), attached: str = "") -> bool:
    """Whether text[pos:] can be the start of a sentence that follows a full stop."""
    if pos >= len(text):
        return False
    ch = text[pos]
    if ch.isupper() or ch.isdigit() or ch in _OPENERS or (attached and ch in attached):
        return True
    return pos in marked or is_name_start(text[pos : pos + 12])


def ends_with_abbreviation(before: str) -> bool:
    """Whether the text before a full stop (stop included) ends in an abbreviation ("et al.")."""
    m = P["abbreviated"].search(before)
    return bool(m) and m.group(1).lower() in ABBREVIATIONS


def sentence_spans(text: str, *, marked: Collection[int] = (), attached: str = "") -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, covering it without gaps (spaces between
    sentences go with the one after; a paragraph break's blank line with neither).

    `marked`: positions where the source set a word apart (emphasis, code, math);
    `attached`: characters that stick to the sentence before them (citation marks).
    """
    end_of = _end_pattern(attached)
    spans = []
    pos = 0
    for para in [*P["paragraph"].finditer(text), None]:
        stop = para.start() if para else len(text)
        start = pos
        for m in end_of.finditer(text, pos, stop):
            end = m.end()
            while end < stop and attached and text[end] in attached:  # "… shown.[@x] Next"
                end += 1
            nxt = end
            while nxt < stop and text[nxt].isspace():
                nxt += 1
            if nxt >= stop:
                continue
            if text[m.start()] == "." and ends_with_abbreviation(text[start : m.end()]):
                continue
            if not opens_sentence(text, nxt, marked=marked, attached=attached):
                continue
            spans.append((start, end))
            start = end
        spans.append((start, stop))
        pos = para.end() if para else len(text)
    return spans


def split(text: str, *, marked: Collection[int] = (), attached: str = "") -> list[str]:
    """The sentences of `text`, stripped, empty ones left out."""
    return [s for a, b in sentence_spans(text, marked=marked, attached=attached) if (s := text[a:b].strip())]
