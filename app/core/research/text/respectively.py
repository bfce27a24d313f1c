"""Figures given "respectively": which number belongs to which name.

Papers report several results in one sentence: "The LC50 values were 2.17, 2.77, 2.46 and
0.28 µg/ml for n-hexane, chloroform, aqueous fractions and vincristine sulfate, respectively."
Every figure of a claim about any of them is in that sentence, so the rule that a claim's
numbers must be stated passes a claim that gives chloroform's figure to n-hexane, or that
calls n-hexane's 2.17 "lower than" the control's 0.28 (the starter model wrote exactly that).
This pairs the numbers with the names in order, so the check can hold a claim to its pairs.

A list can also name each figure in brackets ("afforded n-hexane (1.50 g), carbon
tetrachloride (0.70 g) and chloroform (1.30 g)"), and a claim can itself give its figures
"respectively": each of its figures is then held to its own name of the claim's list, never to
the name that happens to stand nearest before it (which, in a claim's list, is another item's).
"""

from __future__ import annotations

import re

from .citations import word_stems

SENTENCE_BREAK = re.compile(r"(?<=[.;])\s+")  # where a quote's sentences (or their halves at a ";") part
_VERBS = r"(?:were|was|are|is|reached|gave|showed|had)"
_LESS = {"lower", "less", "smaller", "fewer", "shorter", "lighter", "weaker", "slower", "earlier", "cheaper"}
_MORE = {"higher", "more", "greater", "larger", "longer", "heavier", "stronger", "faster", "later", "costlier"}


def _value(text: str) -> float:
    return float(text.replace("−", "-"))


def respective_pairs(sentence: str) -> list[tuple[str, float]]:
    """(name, number) in order, where the sentence lists numbers and names "respectively"; else []."""
    if "respectively" not in sentence.lower():
        return []
    found = list(P["number"].finditer(sentence))
    runs: list[list[re.Match[str]]] = []
    for m in found:
        if runs and P["list_gap"].match(sentence[runs[-1][-1].end() : m.start()]):
            runs[-1].append(m)
        else:
            runs.append([m])
    # A run of one-digit integers is more often labels than figures ("steps 1 and 2 with weights
    # wleft and wright, respectively"): a list counts with one figure of two digits or more.
    figures = [r for r in runs if len(r) >= 2 and any(len(n.group().replace(".", "").lstrip("-−0")) >= 2 for n in r)]
    for run in figures:
        after = sentence[run[-1].end() :]
        names_text = ""
        m = P["names_after"].match(after)
        if m:
            names_text = m.group(1)
        elif P["respectively_next"].match(after):
            head = sentence[: run[0].start()]
            before = P["names_before"].search(head) or P["subject"].search(head)
            names_text = before.group(1) if before else ""
        names = [n for n in P["name_split"].split(names_text) if n.strip()]
        if len(names) == len(run):
            return [(name.strip(), _value(num.group())) for name, num in zip(names, run)]
    return []


_PATTERNS: dict[str, str] = {
    "number": r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?![\w.]*\d)",
    # Between two numbers of a list: an optional unit, then a comma or "and"/"or".
    "list_gap": r"^\s*(?:[^\s\d,;()]{1,8}\s*)?(?:,\s*(?:and\s+|or\s+)?|\s*\band\s+|\s*\bor\s+)$",
    "names_after": r"(?i)^\s*(?:[^\s\d,;()]{1,8}\s*)?,?\s*(?:for|in|of|from|with|by)\s+(?:the\s+)?(.+?),?\s+respectively\b",
    "respectively_next": r"(?i)^\s*(?:[^\s\d,;()]{1,8}\s*)?,?\s*respectively\b",
    "names_before": rf"(?i)\b(?:for|of|in)\s+(?:the\s+)?(.+?)\s+(?:{_VERBS}|of)\b[^\d]*$",
    "subject": rf"(?i)^\s*(?:the\s+)?(.+?)\s+{_VERBS}\b[^\d]*$",  # "Bleeding and HIT risks were 3.9% and 0.7%, …"
    "name_split": r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+",
    # A name bound to the figure just before it: "2.17 µg/ml (n-hexane)", "2.17 for n-hexane".
    "named_after": r"\s*[^\s\d,;()]{0,8}\s*(?:\(([^)]*)\)|(?:for|in|of)\s+([^,;.\d]+))",
    "compared": r"(?i)\b(" + "|".join(sorted(_LESS | _MORE)) + r")\b[^.;]{0,60}?\bthan\b([^.;]{1,120})",
    # "n-hexane (1.50 g)": a name, then its figure alone in brackets with at most a unit.
    "bracketed": r"\(\s*([-−]?\d+(?:\.\d+)?)\s*[^\s\d,;()=<>]{0,8}\s*\)",
    "name_word": r"[^\s,;:()]+",
    "clause_break": r"[;:]",
    # A name in brackets after the figure before this one, with at most a unit: it is that figure's.
    "named_before": r"^\s*[^\s\d,;()]{0,8}\s*\([^)]*\)",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
_NAME_WORDS = 3  # the words before a bracketed figure that name it


def bracketed_pairs(sentence: str) -> list[tuple[str, float]]:
    """(name, number) for a list of at least two figures each in its own brackets after its name; else []."""
    out, since = [], 0
    for m in P["bracketed"].finditer(sentence):
        head = P["name_split"].split(sentence[since : m.start()])[-1]
        words = P["name_word"].findall(head)[-_NAME_WORDS:]
        since = m.end()
        if words:
            out.append((" ".join(words), _value(m.group(1))))
    values = [v for _, v in out]
    return out if len(out) >= 2 and len(set(values)) == len(values) else []


def value_pairs(sentence: str) -> list[tuple[str, float]]:
    """Which figure belongs to which name in a sentence that lists several: "respectively", or in brackets."""
    return respective_pairs(sentence) or bracketed_pairs(sentence)


def own_words(bags: list[set[str]]) -> list[set[str]]:
    """Each bag's own words: those no other bag shares ("fractions" is every name's)."""
    return [bag - set().union(*(b for j, b in enumerate(bags) if j != i)) for i, bag in enumerate(bags)]


def named_in(words: set[str], bags: list[set[str]]) -> dict[int, float]:
    """The bags `words` mention, each with the share of its words they use."""
    return {i: len(bag & words) / len(bag) for i, bag in enumerate(bags) if bag & words}


def _distinct(pairs: list[tuple[str, float]]) -> list[set[str]]:
    return own_words([word_stems(name) for name, _ in pairs])


def _named(text: str, bags: list[set[str]]) -> dict[int, float]:
    """The list's names the text mentions, each with the share of its own words it uses."""
    return named_in(word_stems(text), bags)


def misassigned_figure(claim: str, quote: str, *, source: str = "passage") -> tuple[str, str] | None:
    """(the figure, why) where the claim gets a "respectively" figure wrong; None if it does not,
    or cannot be told. `source` names the quoted text in the reason ("passage", "paper").

    A figure of the list given to another name of the list (the name nearest before the figure
    in the claim), or compared with another name's figure the wrong way ("lower than").
    """
    claimed = respective_pairs(claim)  # the claim's own list: each figure to its own name
    for sentence in SENTENCE_BREAK.split(quote):
        pairs = value_pairs(sentence)
        if not pairs:
            continue
        bags = _distinct(pairs)
        values = [v for _, v in pairs]
        if claimed:
            for name, a in claimed:
                if values.count(a) != 1:
                    continue
                own, named = values.index(a), _named(name, bags)
                if named and own not in named:
                    other = max(named, key=named.__getitem__)
                    return f"{a:g}", f"the {source} gives {a:g} for {pairs[own][0]}, not for {pairs[other][0]}"
            continue
        numbers = list(P["number"].finditer(claim))
        for k, m in enumerate(numbers):
            a = _value(m.group())
            if values.count(a) != 1:
                continue
            own = values.index(a)
            # The words that name what the figure is about: since the claim's previous figure, and
            # up to the next punctuation ("…, against 2.17 for n-hexane").
            since = numbers[k - 1].end() if k else 0
            before = P["clause_break"].split(claim[since : m.start()])[-1]
            before = P["named_before"].sub("", before)  # "2.17 (n-hexane), …" names the figure before
            tail = P["named_after"].match(claim[m.end() :])
            named = _named(tail.group(1) or tail.group(2), bags) if tail else {}
            if own in named:
                continue
            named = named or _named(" ".join(before.split()[-8:]), bags)
            if named and own not in named:  # the name it is given: the one the claim spells out most fully
                other = max(named, key=named.__getitem__)
                return m.group(), f"the {source} gives {m.group()} for {pairs[own][0]}, not for {pairs[other][0]}"
            compared = P["compared"].search(claim, m.end())
            if compared:
                others = [j for j in _named(compared.group(2), bags) if j != own]
                if len(others) == 1:
                    b, word = values[others[0]], compared.group(1).lower()
                    if (word in _LESS and not a < b) or (word in _MORE and not a > b):
                        return m.group(), (f"the {source} gives {m.group()} for {pairs[own][0]} against {b:g} "
                                           f"for {pairs[others[0]][0]}, not {word}")
    return None
