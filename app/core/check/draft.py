"""What the parsers make of a manuscript: its citing sentences, where they are, what they cite.

All three parsers (LaTeX, Markdown/Pandoc, .docx) build the same records. The text a
parser keeps is "mapped": every kept character remembers its offset in the source, so
a sentence found in the cleaned text reports the line and column where it starts in
the file the user wrote.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from ..text.sentences import sentence_spans

log = logging.getLogger(__name__)

# A citation in the cleaned text: one private-use character, its number after it in the
# citation list (the marker never reaches a sentence's text).
MARK = "\ue000"


@dataclass
class Cite:
    """One cited key as written (a key of the .bib, or "Surname 2004" for a text citation)."""

    key: str
    locator: str = ""  # "p. 4" as the author wrote it
    kind: str = "key"  # "key" (a citation key) | "author-year" (a text citation in a .docx)


@dataclass
class CitingSentence:
    text: str
    line: int  # 1-based, in the source (for a .docx: the paragraph number)
    column: int  # 1-based
    cites: list[Cite] = field(default_factory=list)
    # The sentence before it in the same paragraph: what "This", "It" or "These" at its start refers
    # to, which the judge reads with it (judge.claim_in_context).
    before: str = ""


@dataclass
class Draft:
    """A parsed manuscript: citing sentences, a reference list it carries, what went wrong."""

    path: str
    format: str  # "latex" | "markdown" | "docx"
    sentences: list[CitingSentence] = field(default_factory=list)
    bibitems: dict[str, str] = field(default_factory=dict)  # \bibitem key -> its text
    bib_hint: str = ""  # a .bib the draft names (\bibliography{…}, `bibliography:`), as written
    problems: list[str] = field(default_factory=list)


class Mapped:
    """Text built piece by piece, each character keeping its source offset."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.offsets: list[int] = []
        self.cites: list[Cite] = []
        # Positions in the text where the source set a word apart (emphasis, code, math):
        # such a word may start a sentence in lower case ("*lacZ* mutants", "$p$-values").
        self.marked: set[int] = set()

    def add(self, text: str, start: int) -> None:
        for i, ch in enumerate(text):
            self.chars.append(ch)
            self.offsets.append(start + i)

    def add_at(self, text: str, offset: int) -> None:
        """Text standing in for source that is not copied (a space for a comment, a break for a heading)."""
        for ch in text:
            self.chars.append(ch)
            self.offsets.append(offset)

    def mark(self) -> None:
        """The next character added opens a word the source set apart (its markup is dropped)."""
        self.marked.add(len(self.chars))

    def cite(self, cites: list[Cite], offset: int) -> None:
        for c in cites:
            self.chars.append(MARK)
            self.offsets.append(offset)
            self.cites.append(c)

    @property
    def text(self) -> str:
        return "".join(self.chars)


# -- sentences -----------------------------------------------------------------------


def _sentence_spans(text: str, marked: set[int]) -> list[tuple[int, int]]:
    """(start, end) of each sentence of the cleaned text (the project's rule: sentences.py).

    A citation mark right after a stop belongs to the sentence before it; a word the source
    set apart (`marked`) may open a sentence in lower case ("*lacZ* mutants …").
    """
    return sentence_spans(text, marked=marked, attached=MARK)


_SPACE_BEFORE = re.compile(r"\s+([.,;:!?)\]])")
# Brackets that held only citations ("(see [@a; @b])" leaves "( )"); "mob()" in the text stays.
_LEAD_WORDS = r"(?:(?:see|see also|e\.g\.,?|cf\.|also|i\.e\.,?)\s+)*"
_EMPTY_BRACKETS = re.compile(r"\(\s*" + _LEAD_WORDS + r"[\s;,]*" + MARK + r"[\s;," + MARK + r"]*\)|"
                             r"\[\s*" + _LEAD_WORDS + r"[\s;,]*" + MARK + r"[\s;," + MARK + r"]*\]", re.I)


def tidy(text: str) -> str:
    """A sentence's text without citation marks and the gaps they leave."""
    text = _EMPTY_BRACKETS.sub(" ", text)
    text = text.replace(MARK, " ")
    text = " ".join(text.split())
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = re.sub(r",\s*([.;])", r"\1", text)  # "as shown by ," from a removed \citet
    return " ".join(text.split())


def line_column(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


def citing_sentences(mapped: Mapped, source: str) -> list[CitingSentence]:
    """The sentences of the mapped text that hold at least one citation, with their source location."""
    text = mapped.text
    out = []
    numbers = [i for i, ch in enumerate(text) if ch == MARK]
    cite_at = {pos: mapped.cites[n] for n, pos in enumerate(numbers)}
    previous = ""
    for start, end in _sentence_spans(text, mapped.marked):
        cites = [cite_at[i] for i in range(start, end) if i in cite_at]
        before, previous = previous, tidy(text[start:end])
        if "\n\n" in text[max(0, start - 2) : start + 1] or not text[start:end].strip():
            before = ""  # a paragraph break: the sentence before belongs to another paragraph
        if not cites:
            continue
        lead = start
        while lead < end and text[lead].isspace():
            lead += 1
        sentence = tidy(text[start:end])
        if not sentence:
            sentence = "(a citation with no sentence around it)"
        line, column = line_column(source, mapped.offsets[lead] if lead < len(mapped.offsets) else len(source))
        unique: list[Cite] = []
        for c in cites:
            if c.key not in {u.key for u in unique}:
                unique.append(c)
        out.append(CitingSentence(sentence, line, column, unique, before))
    return out
