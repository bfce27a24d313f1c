"""Citations in a drafted paragraph: what the model wrote, made resolvable, and author names.

The writer's paragraphs may cite as `[@key]`, `\\cite{key}`, `@key`, `(Author 2004)`
or a bare `[key]`. `finish_paragraph` keeps the citations that resolve to offered
evidence (as Pandoc's `[@key]`), removes the others with a warning, places the
keys the model declared but did not write after the sentence their evidence
supports best, and cuts repetition. Author names for reference lists live here too.
"""

from __future__ import annotations

import re
import unicodedata

from ..bibtex import family_name
from ..records import Evidence, Paper
from ..research.text.citations import support
from ..text.wording import to_sentence_end, trim_repetition
from .records import CITE_KEY, Paragraph, citation_keys_in

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use marks around resolved keys while processing
_KEYS = _OPEN + "([^" + _CLOSE + "]*)" + _CLOSE  # marked keys, ";"-separated



def _ascii_lower(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def finish_paragraph(
    number: int,
    text: str,
    cites: list[str],
    complete: bool,
    offered: list[Evidence],
    keys: dict[str, str],
    library: dict[str, Paper],
) -> tuple[Paragraph | None, list[str]]:
    """Clean one paragraph and make its citations resolvable. Returns (paragraph or None, warnings)."""
    warnings: list[str] = []
    offered_keys = {keys[e.paper_id]: e.paper_id for e in offered}
    lower_offered = {k.lower(): k for k in offered_keys}
    library_keys = {k.lower(): pid for pid, k in keys.items()}

    text = " ".join(re.sub(r"^\s*#+\s.*$", " ", text, flags=re.M).split())
    text, looped = trim_repetition(text)
    if looped:
        warnings.append(f"Paragraph {number}: the model repeated itself; the repetition was cut.")
    if not complete:
        text = to_sentence_end(text)

    def resolve(candidates: list[str], raw: str) -> str:
        kept = []
        for cand in candidates:
            key = lower_offered.get(cand.strip().lower())
            if key:
                if key not in kept:
                    kept.append(key)
            elif cand.strip().lower() in library_keys:
                warnings.append(f"Paragraph {number}: removed {raw!r}: that library paper is not in the evidence gathered for this section.")
            else:
                warnings.append(f"Paragraph {number}: removed {raw!r}: the key is not in the evidence (invented by the model).")
        return _OPEN + ";".join(kept) + _CLOSE if kept else " "

    text = P["at_bracket"].sub(lambda m: resolve(CITE_KEY.findall(m.group(1)), m.group(0)), text)
    text = P["latex_cite"].sub(lambda m: resolve([k for k in m.group(1).split(",") if k.strip()], m.group(0)), text)
    text = P["bare_at"].sub(lambda m: resolve([m.group(1)], m.group(0)), text)

    def first_author_is(pid: str, name: str, year: str) -> bool:
        p = library[pid]
        return p.year == year and bool(p.authors) and _ascii_lower(family_name(p.authors[0])) == name

    def author_year(m: re.Match) -> str:
        name, year = _ascii_lower(m.group("name")), m.group("year")
        matches = [k for k, pid in offered_keys.items() if first_author_is(pid, name, year)]
        if len(matches) == 1:
            return _OPEN + matches[0] + _CLOSE
        if len(matches) > 1:
            warnings.append(f"Paragraph {number}: removed {m.group(0)!r}: it matches several papers in the evidence ({', '.join(matches)}).")
            return " "
        known = any(first_author_is(pid, name, year) for pid in library)
        why = "that library paper is not in the evidence gathered for this section" if known else "no paper in the evidence has that author and year (invented by the model)"
        warnings.append(f"Paragraph {number}: removed {m.group(0)!r}: {why}.")
        return " "

    text = P["author_year"].sub(author_year, text)
    text = P["plain_key"].sub(lambda m: resolve([m.group(1)], m.group(0)) if m.group(1) in library_keys else m.group(0), text)
    text = _tidy(text)
    # A narrative mention of an offered paper gets its key in the same sentence; any other is flagged.
    for m in reversed(list(P["narrative"].finditer(text))):
        name, year = _ascii_lower(m.group("name")), m.group("year")
        matches = [k for k, pid in offered_keys.items() if first_author_is(pid, name, year)]
        if len(matches) == 1:
            span = next(((a, b) for a, b in _sentences(text) if a <= m.start() < b), None)
            if span and matches[0] not in _marked_keys(text[span[0]:span[1]]):
                text = _cite_sentence(text, span, matches[0])
        else:
            why = "several papers in the evidence match it" if matches else "no paper in the evidence matches it"
            warnings.append(f"Paragraph {number} mentions {m.group(0)!r}, but {why}; check or remove that mention.")

    declared: list[str] = []
    for k in cites:
        key = lower_offered.get(k.strip().lower())
        if key is None:
            warnings.append(f"Paragraph {number}: dropped the listed key {k!r}: it is not in the evidence.")
        elif key not in declared:
            declared.append(key)
    present = set(_marked_keys(text))
    by_key: dict[str, list[Evidence]] = {}
    for e in offered:
        by_key.setdefault(keys[e.paper_id], []).append(e)
    for key in declared:
        if key not in present:
            text = _place(text, key, by_key[key])
            present.add(key)
    if not present and len(text.split()) >= 5:
        # Only when the backend ignored the schema: cite the best-supporting offered passage.
        best = max(offered_keys, key=lambda k: max(support(text, e.text) for e in by_key[k]))
        text = _place(text, best, by_key[best])
        warnings.append(f"Paragraph {number}: the model cited nothing; [@{best}] was attached as the best-supporting evidence.")
    text = _render_markers(text)
    if len(re.sub(r"\[@[^\]]*\]", "", text).split()) < 5:
        warnings.append(f"Paragraph {number} was dropped: almost no text was left after cleaning.")
        return None, warnings
    if not complete:
        warnings.append(f"Paragraph {number} was cut off by the time or token limit and ends early.")
    return Paragraph(text=text, keys=citation_keys_in(text), complete=complete), warnings


def _marked_keys(text: str) -> list[str]:
    return [k for m in P["marked"].finditer(text) for k in m.group(1).split(";") if k]


def _tidy(text: str) -> str:
    # A citation after the full stop moves before it ("claim. [@k]" → "claim [@k].").
    text = re.sub(r"([.!?])\s*(" + _OPEN + "[^" + _CLOSE + "]*" + _CLOSE + ")", r" \2\1", text)
    # Adjacent citations merge into one bracket.
    while P["adjacent"].search(text):
        text = P["adjacent"].sub(lambda m: _OPEN + ";".join(dict.fromkeys((m.group(1) + ";" + m.group(2)).split(";"))) + _CLOSE, text)
    text = re.sub(r"\(\s*\)|\[\s*\]", " ", text)  # brackets emptied by removals
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    text = re.sub(r"\s+(" + _OPEN + ")", r" \1", text)
    return " ".join(text.split())


_PATTERNS: dict[str, str] = {
    "marked": _KEYS,
    "adjacent": _KEYS + r"\s*[;,]?\s*" + _KEYS,
    "at_bracket": r"\[([^\[\]\n]*@[^\[\]\n]*)\]",
    "latex_cite": r"\\(?:cite|citep|citet|parencite|textcite)\*?\{([^{}]*)\}",
    "bare_at": r"(?<![\w@.\ue000])@([A-Za-z][A-Za-z0-9_:\-]*)",
    "author_year": r"[\(\[]\s*(?P<name>[A-Z][A-Za-z'\-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][A-Za-z'\-]+)?,?\s+(?P<year>(?:19|20)\d{2})[a-z]?\s*[\)\]]",
    "plain_key": r"\[([a-z][a-z]*(?:\d{4}|nd)[a-z0-9]*)\]",
    # Narrative mentions, "Zeileis et al. (2004) show …": the text stays, the key is added to the sentence.
    "narrative": r"\b(?P<name>[A-Z][A-Za-z'\-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][A-Za-z'\-]+)?\s+\((?P<year>(?:19|20)\d{2})[a-z]?\)",
    "abbreviation": r"(?:\bet al|\be\.g|\bi\.e|\bcf|\bFigs?|\bEqs?|\bSecs?|\bvs|\bapprox|\bpp?|\bNo|\b[A-Z])\.$",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z\"“(\[])", text):
        if P["abbreviation"].search(text[max(0, m.start() - 8) : m.start()]):
            continue  # "et al. (2004)", "e.g. Smith", "A. Zeileis"
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _place(text: str, key: str, passages: list[Evidence]) -> str:
    """Put [@key] after the sentence its passages support best (the last one if none does)."""
    spans = _sentences(text)
    if not spans:
        return text + f" {_OPEN}{key}{_CLOSE}"
    scores = [max(support(_strip_marks(text[a:b]), e.text) for e in passages) for a, b in spans]
    best = max(range(len(spans)), key=lambda i: (scores[i], i)) if max(scores) > 0 else len(spans) - 1
    return _cite_sentence(text, spans[best], key)


def _cite_sentence(text: str, span: tuple[int, int], key: str) -> str:
    """Add [@key] at the end of the sentence at `span`, merged with a citation already there."""
    a, b = span
    sentence = text[a:b]
    m = re.search(_KEYS + r"(\W*)$", sentence)
    if m:  # merge with a citation that already ends the sentence
        keys = ";".join(dict.fromkeys(m.group(1).split(";") + [key]))
        sentence = sentence[: m.start()] + _OPEN + keys + _CLOSE + m.group(2)
    else:
        m = re.search(r"([.!?]*)$", sentence)
        sentence = sentence[: m.start()].rstrip() + f" {_OPEN}{key}{_CLOSE}" + m.group(1)
    return text[:a] + sentence + text[b:]


def _strip_marks(text: str) -> str:
    return P["marked"].sub(" ", text)


def _render_markers(text: str) -> str:
    return P["marked"].sub(lambda m: "[" + "; ".join("@" + k for k in m.group(1).split(";") if k) + "]", text)



def author_names(paper: Paper) -> str:
    """'Zeileis', 'Zeileis and Hothorn', 'Berger et al.' (empty without authors)."""
    if not paper.authors:
        return ""
    first = family_name(paper.authors[0])
    if len(paper.authors) == 2:
        return f"{first} and {family_name(paper.authors[1])}"
    return f"{first}{' et al.' if len(paper.authors) > 2 else ''}"


def author_year(paper: Paper) -> str:
    """'Zeileis et al. (2022)' for reference lists."""
    return f"{author_names(paper) or 'Anonymous'} ({paper.year or 'n.d.'})"



def _clip_chars(text: str, n: int) -> str:
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    return text[:n].rsplit(" ", 1)[0] + " …"
