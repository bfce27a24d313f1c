"""A table as the model reads it: the rows and the columns the question names first.

A row unit lists every column of its table, and a small model reads the first figure it meets. So
in the answer's prompt the fields whose column header shares most words with the question come
right after the row's name, and a table's rows the question names come right after its caption
line. Only the prompt changes: the stored evidence, the quotes and the viewer keep the table as
printed. Focusing's window over a table unit (`table_window`) keeps the named or best row first.
"""

from __future__ import annotations

import re
from typing import Callable, Protocol, Sequence

from ...units import ABBR_SEP
from ...units import SEP, is_caption_line, row_name
from .citations import STOP_WORDS, stem

MIN_FIELDS = 3  # a row of two columns is read whole at a glance
# In the answer's prompt, a row whose columns the question names shows those columns alone: with the
# others after them, the starter models copied a figure of another column or none (docs/lab/2026-12-07-table-rows.md).
NAMED_ONLY = True
NAMED_SHARE = 0.5  # of a row name's words, said in a question: it names the row (unless another more fully)
ACRONYM_WORDS = (2, 5)  # a run of this many words may spell an acronym of a row or column
_ORDINALS = {w: str(k) for k, w in enumerate("first second third fourth fifth sixth".split(), start=1)}
# "up to three links away" names the row "3": a question spells a small count out, a table prints it
# ("one" is left out: "which one", "one of the" name no row).
_COUNTS = "two three four five six seven eight nine ten eleven twelve".split()
LABEL_WORDS = 4  # a cell of this many words at most may name its row beside the first one (row_label)
# "our": a paper names its own row "Our method", which a claim about the paper never says.
_STOP = {"of", "the", "and", "in", "for", "a", "an", "to", "on", "at", "by", "with", "no", "our"}
_PATTERNS: dict[str, str] = {
    "word": r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*|\d+(?:\.\d+)?",
    # A row name's author-year citation ("REALMNews (Guu et al., 2020)") says whose result the row is,
    # not what it is: a question names the method and seldom its citation.
    "row_citation": r"\s*\([^()]*\b(?:19|20)\d\d[a-z]?\)",
    "label_cell": r"^[A-Za-z][^:]*$",  # a word first: a name, not a figure ("40.4", "<0.001", "-")
    "hyphened": r"\b[A-Za-z]+(?:-[A-Za-z0-9]+)+\b",  # "GPT-2", "CC-News": also read joined
    # A name's word joined from parts ("REALMNews", "SciBERT", "GPT2"), which a question writes apart
    # ("REALM … CC-News", "GPT-2"): its capitalised, upper-case and digit runs.
    "word_parts": r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+",
    "term": r"[A-Za-z][A-Za-z0-9]*|\d+(?:\.\d+)?",
    "hyphened_word": r"[A-Za-z][A-Za-z-]*",
    "letters": r"[A-Za-z]+",
    "inner_capital": r"\b[A-Za-z]\w*[A-Z]\w*",  # a word with a capital after its first letter ("WebQuestions")
    "cut_short": r"([A-Za-z]{3,})\.",  # a word a table cut short ("Dist.")
    # Tables shorten "with" and "without" to "w/" and "w/o" ("Papers w/ Pubmed IDs"), which a claim spells out.
    "with": r"(?i)\bw/o\b|\bw/",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def terms(text: str) -> set[str]:
    """The text's words as a row's name and a claim or question are compared: stemmed, a plural's
    "s" and a final "e" dropped ("IDs" and "ID"; "titles", which stems to "titl", and "Title"), stop
    words left out, a hyphenated word by its parts."""
    text = P["with"].sub(lambda m: " without " if m.group(0).lower() == "w/o" else " with ", text)
    return {_plain_stem(w.lower()) for w in P["term"].findall(text) if w.lower() not in _STOP}


def _plain_stem(word: str) -> str:
    w = stem(word)
    if len(w) > 2 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


_STEMMED_COUNTS = {_plain_stem(w): str(k) for k, w in enumerate(_COUNTS, start=2)}  # as terms() gives them ("thre")


def spelled_acronyms(text: str) -> set[str]:
    """The acronyms the text's words spell, as compared: "frames per second" says the column "FPS",
    "open-access" the row "PubMed Central (OA)" (runs of words, with and without their stop words)."""
    out: set[str] = set()
    lo, hi = ACRONYM_WORDS
    for words in (P["hyphened_word"].findall(text), P["letters"].findall(text)):  # "open-access": one word, or two
        for i in range(len(words)):
            for n in range(lo, hi + 1):
                run = words[i:i + n]
                if len(run) == n:
                    out.add("".join(w[0] for w in run).lower())
                    kept = [w for w in run if w.lower() not in _STOP]
                    if len(kept) >= lo:
                        out.add("".join(w[0] for w in kept).lower())
    return {_plain_stem(a) for a in out}


def header_words(text: str) -> set[str]:
    """The text's words as column headers are matched: short ones too ("CMS", "Ki", "SS"), a
    hyphenated word also by its parts where they are words ("circulator-service")."""
    out: set[str] = set()
    for word in P["word"].findall(text):
        parts = [word] + (word.split("-") if "-" in word and not any(c.isdigit() for c in word) else [])
        out |= {stem(w.lower()) for w in parts if len(w) >= 2 and w.lower() not in STOP_WORDS}
    return out


def named_columns_first(line: str, query: str, only: bool = False) -> str:
    """The row `line` with the fields whose header shares the most words with `query` first,
    after its name; the line as it is where it is not a row, has fewer than MIN_FIELDS fields,
    or no header shares a word. `only`: those fields alone, the others left out (NAMED_ONLY)."""
    if not row_name(line) or is_caption_line(line):
        return line
    fields = line.split(SEP)
    asked = header_words(query) | joined_initials(query)
    scores = {k: len(header_words(f.split(": ", 1)[0]) & asked) for k, f in enumerate(fields) if ": " in f}
    best = max(scores.values(), default=0)
    if len(scores) < MIN_FIELDS or best == 0:
        return line
    start = min(scores)
    lead = [k for k in sorted(scores) if scores[k] == best]
    order = list(range(start)) + lead + ([] if only else [k for k in range(start, len(fields)) if k not in lead])
    return SEP.join(fields[k] for k in order)


def joined_initials(text: str) -> set[str]:
    """The initials of each word joined from capitalised parts: "WebQuestions" says the column "WQ"."""
    parts = (P["word_parts"].findall(w) for w in P["inner_capital"].findall(text))
    return {"".join(p[0] for p in ps).lower() for ps in parts if len(ps) >= 2}


def names_row(query: str, name: str) -> bool:
    """The question names the row by its name, or the long form its table's notes give it ("VS =
    vincristine sulphate"), as a word or words of its own. Row names are often short codes
    ("HF", "YR/FE") that key terms leave out."""
    return any(len(n) >= 2 and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", query, re.I) is not None
               for n in name.split(ABBR_SEP))


def name_share(said: set[str], query: str, name: str) -> tuple[float, int]:
    """How fully `query` names the row `name` (`said`: the query's terms and spelled acronyms): the
    largest share of the words of the name, or of its long form, it says (1 where the name stands in
    it as written), and how many words that is. A word the table cut short ("Dist. Sup.") is said by
    a word it begins ("distant supervision")."""
    whole = 1.0 if names_row(query, name) else 0.0
    best = (whole, len(_name_terms(name)) if whole else 0)
    for part in name.split(ABBR_SEP):
        cut = {w.lower() for w in P["cut_short"].findall(part)}
        for words in _name_readings(part):
            named = {w for w in words if w in said or (w in cut and any(s.startswith(w) for s in said))}
            if words:
                best = max(best, (len(named) / len(words), len(named)))
    return best


def _name_readings(name: str) -> list[set[str]]:
    """A row name's words as printed; without its author-year citation; and with its joined words
    in their parts ("REALMNews": "REALM", "News")."""
    bare = P["row_citation"].sub("", name).strip() or name
    parts = " ".join(" ".join(P["word_parts"].findall(w)) or w for w in bare.split())
    return [_name_terms(name), _name_terms(bare), _name_terms(parts)]


def _name_terms(name: str) -> set[str]:
    """A row name's words as compared, its one-letter labels kept ("Strain A": the "a" is no article)."""
    return terms(name) | {w.lower() for w in P["term"].findall(name) if len(w) == 1}


def named_rows(query: str, names: list[str], titles: str = "") -> list[int]:
    """The rows (indices into `names`) the question names most fully, if at least NAMED_SHARE and
    not every row alike ("the yeast strains" names "Strain A", "Strain B" and "Strain C" alike:
    none); those it names by more words first ("by distant supervision rather than the gold
    context": "Dist. Sup." before "Gold").

    The question's words that are in its papers' `titles` say which paper, not which row ("…does
    plain BM25 reach … in the dense passage retrieval paper" named "BM25 + DPR" over the row "BM25"):
    rows are named without them first, and with them where that names none."""
    # A one-letter word of a question is a unit or a symbol ("37 °C", "p < 0.05") more often than a
    # row's letter ("Strain C"): such a letter names a row only written with it ("strain C").
    said = {w for w in terms(query) | spelled_acronyms(query) if len(w) > 1}
    said |= {_ORDINALS[w] for w in said if w in _ORDINALS}  # "the first control group" names "Control 1"
    said |= {_STEMMED_COUNTS[w] for w in said if w in _STEMMED_COUNTS}
    said |= {_plain_stem(w.replace("-", "").lower()) for w in P["hyphened"].findall(query)}  # "GPT-2" names "GPT2"
    if titles:
        named = _most_named(said - terms(titles) - spelled_acronyms(titles), query, names)
        if named:
            return named
    return _most_named(said, query, names)


def _most_named(said: set[str], query: str, names: list[str]) -> list[int]:
    shares = [name_share(said, query, name) for name in names]
    best = max((share for share, _ in shares), default=0.0)
    named = sorted((k for k, (share, _) in enumerate(shares) if share == best), key=lambda k: -shares[k][1])
    alike = len(named) == len(names) > 1 and len({shares[k] for k in named}) == 1
    return named if best >= NAMED_SHARE and not alike else []


def row_label(line: str) -> str:
    """What names a row: its name (its first cell), and where other cells hold a short name rather
    than a figure, also those with it, as a second reading (ABBR_SEP): DPR's Table 4 opens each row
    with its training set ("Single · Model: REALMNews (Guu et al., 2020) · NQ: 40.4 …"), so every
    row's name was "Single"."""
    name = row_name(line)
    words = [w for w in (label_cell(f.split(": ", 1)[1]) for f in line.split(SEP)[1:] if ": " in f) if w]
    return f"{name}{ABBR_SEP}{name} {' '.join(words)}" if name and words else name


def label_cell(value: str) -> str:
    """A cell's value where it is a short name (LABEL_WORDS, its citation left out), not a figure; else ""."""
    value = P["row_citation"].sub("", value).strip()
    return value if P["label_cell"].match(value) and len(value.split()) <= LABEL_WORDS else ""


def named_rows_first(lines: list[str], query: str) -> list[int]:
    """The order to read a table's lines in: the lines that are not rows (its caption line) where
    they are, then the rows the question names, then the other rows in their order."""
    rows = [k for k, line in enumerate(lines) if row_name(line) and not is_caption_line(line)]
    named = [rows[i] for i in named_rows(query, [row_label(lines[k]) for k in rows])]
    if not named:
        return list(range(len(lines)))
    it = iter(named + [k for k in rows if k not in named])
    return [next(it) if k in rows else k for k in range(len(lines))]


# -- which lines of a table unit focusing keeps (table_window) ----------------------------------
#
# Which lines of a table unit (its caption line and rows, tables.py) focusing keeps.
#
# Prose is kept as a run of sentences around the best one (focus._window), since a sentence leans on
# its neighbours. A table's rows do not: each names its columns ("Single · Model: REALMNews · NQ:
# 40.4 · WQ: 40.7"). The run around a table unit's best line, nearly always its caption, kept the rows
# printed under the caption, and a long caption (DPR's Table 4 caption line is 133 tokens of a
# window's 180) left room for none else: asked for REALM's WebQuestions accuracy, the model read
# DPR's rows. So the best-scoring row comes first, then the caption line where it fits beside it,
# then the other rows from the table's top, where a sorted table puts the answer to "which rose the
# most?" (the wheat paper's L-tryptophan, first of its Table 3).
#
# A row the question names (row_columns.named_rows: by its words, without its author-year citation,
# by the parts of a joined name, "three" for "3") comes before the best-scoring one: the TrustRank
# paper's row "3" ("propagated up to three links away") scored below rows 1 and 2.
#
# bench/tables.py (the row in the focused evidence): on twelve table questions written in session 19
# from tables nobody had tuned for (v01-v12), 6 -> 7 of 12 (8 with not_evidence.py's numbered and
# non-English headings); the 38 earlier development table questions and the answer bench's five
# unchanged. bench/focus.py --split development: the same facts on the three development sets.

class Line(Protocol):
    order: int  # position within the unit
    kind: str  # "text" for the caption line (focus.split_sentences), "block" for a row
    score: float
    text: str


def table_window(lines: Sequence[Line], room: int, count: Callable[[str], int],
                 named: Sequence[int] = ()) -> tuple[list[int], int]:
    """The kept lines' positions in page order and their cost in tokens; ([], 0) where the best row
    (or a caption alone) does not fit `room`. `named`: the positions of the rows the question names
    (row_columns.named_rows), which come before the best-scoring one."""
    caption = [u for u in lines if u.kind == "text" and u.order == 0]
    rows = sorted((u for u in lines if u not in caption), key=lambda u: (u.order not in named, -u.score))
    picked: list[int] = []
    cost = 0
    lead = [u for u in rows if u.order in named] or rows[:1]
    for u in [*lead, *caption, *sorted(rows[len(lead):], key=lambda u: u.order)]:
        extra = count(u.text) + 1
        if cost + extra <= room:
            picked.append(u.order)
            cost += extra
        elif not picked:
            return [], 0
    return sorted(picked), cost
