"""Parse the citations a model wrote and check each against the evidence given.

Canonical form: `[PAPER_ID, page N]`. Tolerated near-misses, because small
models write them: `[ID, p. 5]`, `[ID p5]`, `[ID, pp. 5-6]`, `(ID, page 5)`,
several in one bracket separated by `;`, `[Source 3]` / `[3]` / `[2, 5]` when the
evidence was numbered, an arXiv ID without its version, an ID in another case.

A citation is checked three ways: the paper is in the evidence (else
not-in-evidence), the page is one of that paper's evidence pages (else
page-mismatch), and the claim's key terms occur in that page's evidence
(else unsupported). Nothing is silently dropped or "fixed" to a page the model
did not name; the answer keeps each citation with its status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...records import Citation, CitationStatus, Evidence


# Figures spelled as words, as the rules read them ("twice" is 2, "half" is 50 %).
NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "twelve": "12", "twenty": "20", "hundred": "100",
    "half": "50", "once": "1", "twice": "2", "single": "1", "double": "2", "triple": "3",
}

# -- figures as the rules read them ---------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:[.,]\d+)*(?:\.\d+)?")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*[A-Za-z0-9]|[A-Za-z]")  # a word as the rules read one ("near-Earth", "NEOs")


def numbers_in(text: str) -> set[str]:
    """The text's figures, written one way ("1,200" and "1200.0" are "1200")."""
    out = set()
    for m in NUMBER.finditer(text):
        raw = m.group().replace("−", "-").replace(",", "")
        try:
            value = float(raw)
        except ValueError:
            continue
        out.add(f"{value:g}")
    return out


def two_digits_or_more(number: str) -> bool:
    """A figure worth holding a claim to ("38", "0.25", "125.3"): one digit ("2 models") is too
    often spelled out or counted differently by the passage to call it fabricated."""
    return len(number.replace(".", "").lstrip("-0")) >= 2


def numbers_stated(text: str) -> set[str]:
    """The figures the text states, in words too ("twice"), and each share both ways ("64 %" and "0.64")."""
    nums = numbers_in(text)
    words = {w.lower() for w in WORD.findall(text)}
    nums |= {v for w, v in NUMBER_WORDS.items() if w in words}
    for n in list(nums):
        try:
            v = float(n)
        except ValueError:
            continue
        if 0 < v <= 100:
            nums.add(f"{v / 100:g}")
        if 0 < v < 1:
            nums.add(f"{v * 100:g}")
    return nums


_STOP = set(
    """a an the and or but if then than that this these those there their they them it its is are was were be been
    being to of in on for with as by at from into onto over under about between through during without within can could
    may might must shall should will would do does did done has have had having not no nor so such also only both each
    which who whom whose what when where why how all any some more most other same very one two three use used using
    paper papers study studies author authors show shows shown result results method methods approach page source evidence
    based given provide provides provided describe described however therefore thus while whereas e.g i.e et al""".split()
)
STOP_WORDS = frozenset(_STOP)  # for modules that read words as key_terms does


@dataclass
class _Raw:
    text: str
    start: int
    end: int
    inner: str


def find_citations(answer: str) -> list[_Raw]:
    found = []
    for m in P["bracket"].finditer(answer):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        # Markdown links "[text](url)" are not citations.
        if m.group(1) is not None and answer[m.end() : m.end() + 1] == "(":
            continue
        found.append(_Raw(m.group(0), m.start(), m.end(), inner))
    return found


def _resolve_id(raw_id: str, known_ids: list[str]) -> str:
    raw_id = raw_id.strip().strip("*_`'\"").strip()
    if raw_id.lower().startswith("arxiv:"):
        raw_id = raw_id[6:]
    if raw_id in known_ids:
        return raw_id
    lower = {k.lower(): k for k in known_ids}
    if raw_id.lower() in lower:
        return lower[raw_id.lower()]
    bare = P["arxiv_version"].sub("", raw_id.lower())
    for k in known_ids:
        if P["arxiv_version"].sub("", k.lower()) == bare:
            return k
    return raw_id


def parse_citations(answer: str, evidence: list[Evidence], library_ids: list[str]) -> list[Citation]:
    """All citations in `answer`, unchecked (status empty), in order of appearance."""
    known = list(dict.fromkeys([e.paper_id for e in evidence] + list(library_ids)))
    by_number = {e.number: e for e in evidence}
    citations: list[Citation] = []
    for raw in find_citations(answer):
        parts = P["digits"].findall(raw.inner) if evidence and P["source_list"].match(raw.inner.strip()) else raw.inner.split(";")
        for part in parts:
            part = part.strip()
            if not part:
                continue
            source = P["source"].match(part)
            if source and evidence:
                n = int(source.group("n"))
                ev = by_number.get(n)
                if ev is not None:
                    citations.append(Citation(raw.text, ev.paper_id, ev.page, "", raw.start, raw.end, evidence_number=n))
                continue
            page = P["page"].match(part)
            if page:
                paper_id = _resolve_id(page.group("id"), known)
                citations.append(Citation(raw.text, paper_id, int(page.group("page")), "", raw.start, raw.end))
                continue
            # "[ID]" alone: a citation without a page, if ID is a paper we know.
            resolved = _resolve_id(part, known)
            if resolved in known:
                citations.append(Citation(raw.text, resolved, 0, "", raw.start, raw.end, note="no page given"))
    return citations


def key_terms(text: str) -> set[str]:
    words = P["term"].findall(text.lower())
    return {w for w in words if (len(w) >= 4 or any(c.isdigit() for c in w)) and w not in _STOP}


def claim_before(answer: str, position: int) -> str:
    """The sentence (or list item) that a citation at `position` supports."""
    head = answer[:position]
    # Strip earlier citations so they do not count as the claim's words.
    head = P["bracket"].sub(" ", head)
    cut = max(head.rfind(". "), head.rfind("\n"), head.rfind("? "), head.rfind("! "))
    return head[cut + 1 :].strip() if cut >= 0 else head.strip()


def key_stems(text: str) -> set[str]:
    """The stems of the text's key terms (figures included): what two texts are compared by."""
    return {stem(t) for t in key_terms(text)}


def word_stems(text: str) -> set[str]:
    """The stems of the text's key terms that are words, not figures (what names a thing)."""
    return {stem(t) for t in key_terms(text) if not t[0].isdigit()}


def stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def support(claim: str, passage: str) -> float:
    """Share of the claim's key terms found in the passage (by crude stem)."""
    terms = key_stems(claim)
    if not terms:
        return 1.0
    passage_terms = key_stems(passage)
    return len(terms & passage_terms) / len(terms)


def check_citations(
    answer: str,
    citations: list[Citation],
    evidence: list[Evidence],
    *,
    min_support: float = 0.2,
) -> list[Citation]:
    """Fill in each citation's status against the evidence actually given."""
    by_paper: dict[str, list[Evidence]] = {}
    for e in evidence:
        by_paper.setdefault(e.paper_id, []).append(e)
    for c in citations:
        passages = by_paper.get(c.paper_id)
        if not passages:
            c.status = CitationStatus.NOT_IN_EVIDENCE.value
            c.note = c.note or "this paper was not in the evidence given to the model"
            continue
        on_page = [e for e in passages if e.page == c.page]
        if not on_page:
            pages = sorted({e.page for e in passages})
            c.status = CitationStatus.PAGE_MISMATCH.value
            c.note = f"evidence from {c.paper_id} is on page(s) {', '.join(map(str, pages))}" + (f"; {c.note}" if c.note else "")
            continue
        claim = claim_before(answer, c.start)
        scored = sorted(((support(claim, e.text), e) for e in on_page), key=lambda t: -t[0])
        best_score, best = scored[0]
        if c.evidence_number is None:
            c.evidence_number = best.number
        if best_score < min_support and len(key_terms(claim)) >= 3:
            c.status = CitationStatus.UNSUPPORTED.value
            c.note = f"the claim's key terms were not found in the cited passage (overlap {best_score:.0%})"
        else:
            c.status = CitationStatus.VERIFIED.value
    return citations


_PATTERNS: dict[str, str] = {
    "bracket": r"\[([^\[\]\n]{1,200})\]|\(([^()\n]{1,120}?,\s*(?:page|p\.|pp\.|pg\.)\s*\d[^()\n]{0,40})\)",
    "page": r"(?i)^(?P<id>.+?)[,;:\s]+(?:page|pages|pg\.?|pp?\.?)\s*(?P<page>\d+)(?:\s*[-–]\s*\d+)?\s*$",
    "source": r"(?i)^(?:source|src|evidence|passage|doc)?\s*#?\s*(?P<n>\d{1,3})$",
    "source_list": r"(?i)^(?:(?:sources?|passages?)\s*)?\d{1,3}(?:\s*[,;]\s*\d{1,3})+$",  # [2, 5]
    "arxiv_version": r"v\d+$",
    "sentence_end": r"(?<=[.!?])\s+(?=[A-Z0-9(\[*`])",
    "digits": r"\d+",
    # A key term's candidates: a word of letters and digits (inner ".", "-", "_" kept: "lme4", "p.value"), or a figure.
    "term": r"[A-Za-z][A-Za-z0-9_.\-]*[A-Za-z0-9]|\d+(?:\.\d+)?",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
ATTRIBUTED_NOTE = "added by Research Desk: the model cited nothing here; this passage holds most of the sentence's key terms"


def attribute_citations(answer: str, evidence: list[Evidence], *, min_support: float = 0.5) -> tuple[str, int]:
    """Tag each uncited factual sentence with the evidence passage that holds most of its key terms.

    A fallback for models that answer from the evidence but write no citations (small
    local models often do). Conservative: a sentence needs 3+ key terms and half of them
    in one passage; anything less stays uncited. Returns the tagged answer and the count.
    """
    out_lines: list[str] = []
    added = 0
    for line in answer.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            out_lines.append(line)
            continue
        pieces = []
        for sentence in P["sentence_end"].split(line):
            terms = key_terms(P["bracket"].sub(" ", sentence))
            if len(terms) >= 3 and not P["bracket"].search(sentence):
                score, best = max(((support(sentence, e.text), e) for e in evidence), key=lambda t: t[0])
                if score >= min_support:
                    tag = f" [{best.paper_id}, page {best.page}]"
                    body = sentence.rstrip()
                    end = len(body) - len(body.rstrip(".!?:;"))
                    sentence = body[: len(body) - end] + tag + body[len(body) - end :]
                    added += 1
            pieces.append(sentence)
        out_lines.append(" ".join(pieces))
    return "\n".join(out_lines), added


def canonical(c: Citation) -> str:
    return f"[{c.paper_id}, page {c.page}]" if c.page else f"[{c.paper_id}]"


def normalise_answer(answer: str, citations: list[Citation]) -> tuple[str, list[Citation]]:
    """Rewrite every recognised citation into the canonical form, keeping spans in step."""
    groups: dict[tuple[int, int], list[Citation]] = {}
    for c in citations:
        groups.setdefault((c.start, c.end), []).append(c)
    out: list[str] = []
    pos = 0
    new_cits: list[Citation] = []
    for (start, end), cits in sorted(groups.items()):
        out.append(answer[pos:start])
        offset = sum(len(s) for s in out)
        pieces = []
        for i, c in enumerate(cits):
            text = canonical(c)
            c.start = offset + sum(len(p) for p in pieces) + (1 * i)  # one space between pieces
            c.end = c.start + len(text)
            pieces.append(text)
            new_cits.append(c)
        out.append(" ".join(pieces))
        pos = end
    out.append(answer[pos:])
    return "".join(out), new_cits
