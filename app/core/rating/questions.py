"""Questions made from the user's own papers, with their answers, and no labels.

A sentence of a paper that states a figure ("the coverage was 94.2 %"), a name ("estimated with the
Newey–West estimator") or a direction ("power increased with the sample size") becomes a question
whose answer is that figure, name or direction: the sentence with it left out, asked like any
question. A model that reads the right passage and reports it answers with what was left out; one
that misses the passage or invents a figure does not. No one labels anything, so any library can
rate models on its own papers (`models rate`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.sentences import split

DIRECTIONS = {"increase": "decrease", "increases": "decreases", "increased": "decreased", "higher": "lower",
              "larger": "smaller"}
GAP = "___"
POINTER_REACH = 24  # characters before a figure where such a word makes it a pointer ("sections 2.10 and 2.16")
FRONT_MATTER = 1500  # characters of a paper's prose skipped (a fifth of a short one): title, authors, affiliations
_PATTERNS: dict[str, str] = {
    # A figure worth asking for: a decimal, a percentage, or a number of three or more digits;
    # not a year, a reference number or a section number.
    "figure": r"(?<![\w.\[(-])(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d+(?:\.\d+)?\s?%|\d{3,})(?![\w.-]*\])(?![\w-])",
    "year": r"^(1[89]|20)\d\d$",
    # A name: two or more capitalised words, or a capitalised word joined by a hyphen (Newey-West),
    # after the sentence's first word.
    "name": r"(?<=\s)((?:[A-Z][a-z]+(?:[-–][A-Z][a-z]+)+)|(?:[A-Z][a-z]+\s){1,2}[A-Z][a-z]+)(?=[\s,.;:])",
    "direction": r"\b(" + "|".join(sorted({*DIRECTIONS, *DIRECTIONS.values()}, key=len, reverse=True)) + r")\b",
    # A number that points somewhere (Section 2.3, Theorem 1.1, version 0.10) is no finding.
    "pointer": r"(?i)\b(section|sections|sec\.|theorem|lemma|table|figure|fig\.|chapter|equation|eq\.|version|"
               r"appendix|definition|corollary|proposition|example|algorithm|step|pages?|pp\.|p\.|vol\.|no\.)(?![a-z])|>=|<=|➜",
    "affiliation": r"\b(University|Universit\w+|Institute|Department|Inc|Abstract|Journal|Keywords)\b|@",
    "cited": r"\s*(,\s*(\d{4}|et al)|et al|\(\d{4}|and [A-Z]\w+ \(\d{4})",
    "mark": r"(?s)<!--.*?-->",
    "code": r"(?s)```.*?```",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
MIN_WORDS, MAX_WORDS = 10, 45  # a sentence that says something whole, and that fits a question
TOO_MANY_DIGITS = 0.25  # a table row or an equation, not a sentence
# Words in a name that are a sentence's furniture, not a name.
NOT_NAMES = {"The", "This", "These", "Table", "Figure", "Section", "Appendix", "In", "We", "Our", "Fig", "Eq", "Team", "Core"}


@dataclass(frozen=True)
class Question:
    """A question made from a paper's sentence; `answer` is what the sentence states."""

    text: str
    answer: str
    kind: str  # figure | name | direction
    paper_id: str
    sentence: str


def _usable(sentence: str) -> bool:
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return False
    digits = sum(c.isdigit() for c in sentence)
    return digits <= TOO_MANY_DIGITS * len(sentence) and sentence[-1:] in ".!" and "http" not in sentence


def prose(text: str) -> str:
    """The running text of a paper's Markdown: no headings, code, tables or page marks."""
    text = P["code"].sub(" ", P["mark"].sub(" ", text))
    kept = [line for line in text.splitlines() if not line.lstrip().startswith(("#", "|", ">", "```", "!["))]
    return " ".join(" ".join(kept).split())


def questions_from(paper_id: str, text: str) -> list[Question]:
    """Every question a paper's text gives (at most one per sentence, a figure first)."""
    out = []
    text = prose(text)
    for sentence in split(text[min(FRONT_MATTER, len(text) // 5):]):
        if not _usable(sentence) or P["affiliation"].search(sentence):
            continue
        q = _figure(paper_id, sentence) or _name(paper_id, sentence) or _direction(paper_id, sentence)
        if q is not None:
            out.append(q)
    return out


def _ask(sentence: str, start: int, end: int) -> str:
    return f"According to the papers, what goes in the gap: “{sentence[:start]}{GAP}{sentence[end:]}”?"


def _figure(paper_id: str, sentence: str) -> Question | None:
    found = [m for m in P["figure"].finditer(sentence) if not P["year"].match(m.group(1))
             and not P["pointer"].search(sentence[max(0, m.start(1) - POINTER_REACH): m.start(1)])
             and not re.match(r"\.[\dx]", sentence[m.end(1):]) and len(sentence[: m.start(1)].split()) >= 4
             and len(sentence[m.end(1):].strip(" .")) > 0]
    if len(found) != 1:  # two figures: which is asked for would be ambiguous
        return None
    m = found[0]
    return Question(_ask(sentence, m.start(1), m.end(1)), m.group(1), "figure", paper_id, sentence)


def _name(paper_id: str, sentence: str) -> Question | None:
    for m in P["name"].finditer(sentence):
        if P["cited"].match(sentence[m.end(1):]):  # an author cited, not a thing named
            continue
        if not set(m.group(1).replace("–", " ").replace("-", " ").split()) & NOT_NAMES:
            return Question(_ask(sentence, m.start(1), m.end(1)), m.group(1), "name", paper_id, sentence)
    return None


def _direction(paper_id: str, sentence: str) -> Question | None:
    found = list(P["direction"].finditer(sentence))
    if len(found) != 1:
        return None
    m = found[0]
    other = DIRECTIONS.get(m.group(1)) or next(k for k, v in DIRECTIONS.items() if v == m.group(1))
    first, second = sorted((m.group(1), other))  # in the same order whichever is right
    text = _ask(sentence, m.start(1), m.end(1)).replace("what goes in the gap", f"which goes in the gap, “{first}” or “{second}”", 1)
    return Question(text, m.group(1), "direction", paper_id, sentence)


def pick(by_paper: dict[str, list[Question]], n: int) -> list[Question]:
    """`n` questions spread over the papers (round robin in paper order, each paper's spread over its text)."""
    pools = {pid: _spread(qs) for pid, qs in sorted(by_paper.items()) if qs}
    out: list[Question] = []
    while len(out) < n and any(pools.values()):
        for pid in list(pools):
            if pools[pid] and len(out) < n:
                out.append(pools[pid].pop(0))
    return out


def _spread(qs: list[Question]) -> list[Question]:
    """A paper's questions from its middle outwards by kind: figures, names, directions in turn."""
    kinds = {k: [q for q in qs if q.kind == k] for k in ("figure", "name", "direction")}
    for k, items in kinds.items():
        step = max(1, len(items) // 4)
        kinds[k] = items[::step] + [q for i, q in enumerate(items) if i % step]
    out = []
    while any(kinds.values()):
        for k in kinds:
            if kinds[k]:
                out.append(kinds[k].pop(0))
    return out


def _normal(text: str) -> str:
    return re.sub(r"[\s,]", "", text.lower()).replace("–", "-")


def is_right(question: Question, answer: str) -> bool:
    """Does the answer state what the sentence states? (a figure as written, commas and spaces aside;
    a name; the direction and not its opposite)."""
    said = _normal(answer)
    if question.kind == "direction":
        other = DIRECTIONS.get(question.answer) or next(k for k, v in DIRECTIONS.items() if v == question.answer)
        words = set(re.findall(r"[a-z]+", answer.lower()))
        return question.answer in words and other not in words
    want = _normal(question.answer)
    if question.kind == "figure":
        # 94.2 must not match 194.2 or 94.25
        return re.search(rf"(?<![\d.]){re.escape(want)}(?![\d])", said) is not None
    return want in said
