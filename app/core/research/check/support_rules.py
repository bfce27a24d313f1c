"""The support check's rules: the specifics of a claim must agree with the text it cites.

No model. The rules are the families of `FAMILIES` (name, what it decides, the rule), read in
order; the first that finds something decides the rules' part of the verdict:

- reason: a reason the claim gives ("because …") that the passage does not give caps it at
  partial, and the model judges the rest;
- figures: every number of the claim must be stated (64 % ~ 0.64, "two" ~ 2);
- respectively: a stated figure must not belong to another item of a list or clause;
- direction: no direction word whose opposite the passage uses, no comparison turned round;
- names: every specific name (capitals inside, letters with digits, acronyms, capitalised
  names) must be used by the passage or its context;
- table-row: a claim that names a table row and gives its figures for their own columns is
  supported without the model (table_row_rule.py).

Shared topic words alone never make a pair supported: that is what misattributions share.
Each family was switched off in turn on bench/support.py's 170 hand-labelled pairs (the table
in docs/research.md): reason changes verdicts on pairs written after it (the held-out answer
pair hp39 passes as supported without it); figures, respectively, direction and names are the
issue's hard checks; table-row decides none of those pairs and earned its place on
bench/tables.py. A hedge family
(certainty where the passage hedges) decided one pair, the one it was built on, and was removed.
`quote_for` picks the sentences a claim rests on. The manuscript check (check/judge.py) shares
the names, direction and figures' rules.
"""
from __future__ import annotations

import re
from typing import Callable, NamedTuple

from ...records import Evidence, Support
from ...units import is_caption_line, is_table_unit
from ..text.citations import WORD as _WORD, key_terms, numbers_in, numbers_stated, stem, word_stems
from ..text.abbreviations import abbreviated
from ..text.clause_figures import misplaced_figure
from ..evidence.focus import split_sentences
from .table_row_rule import states_row


# -- quotes ------------------------------------------------------------------------

def quote_for(claim: str, e: Evidence, context: str = "") -> str:
    """The sentence(s) of the passage that share most with the claim (exact text of the passage).

    Candidates are the passage's focused sentences when it has them (what the model was
    shown), else all its sentences. A neighbouring second sentence is added when it
    brings claim terms or figures the first lacks.

    The claim's figures count double and the words it shares with the question (`context`)
    half: an answer repeats the question, and so does the sentence that frames the study.
    "From the first year of the DECam near-Earth object survey, there are 10^6.6 NEOs larger than
    about 10 meters" quoted "We analyzed data from the first year of a survey for Near Earth
    Objects … (DECam)", and the judge, reading 600 characters around it, never saw the count.

    In a table unit the quote is rows, one a line, so the viewer can find each row by its cells:
    the caption line (caption and columns) is quoted only where no row shares a word or a figure
    with the claim. It shares the table's words with every claim about it, and it had outscored
    the row holding both of the claim's figures ("… 0.93 for titles and 0.89 for authors"), so
    the viewer highlighted the caption.
    """
    units = [(s.text, s.char_start) for s in e.sentences] or [(c.text, c.start) for c in split_sentences(e)]
    if not units:
        return e.text.strip()
    table = is_table_unit(e.text)

    def terms(text: str) -> set[str]:
        return {stem(t) for t in key_terms(text)} | set(specific_names(text))

    claim_terms = terms(claim)
    asked = terms(context)
    figures = numbers_in(claim) - numbers_in(context)
    bags = [terms(t) for t, _ in units]
    found = [figures & numbers_in(t) for t, _ in units]
    scores = [sum(0.5 if t in asked else 1.0 for t in claim_terms & b) + 2 * len(f) for b, f in zip(bags, found)]
    caption = {i for i, (t, _) in enumerate(units) if table and is_caption_line(t)}
    sharing = [i for i in range(len(units)) if i not in caption and scores[i] > 0]  # a table's rows, or prose
    best = max(sharing or range(len(units)), key=lambda i: (scores[i], -i))
    chosen = [best]
    for j in (best - 1, best + 1):
        if 0 <= j < len(units) and j not in caption and ((claim_terms & bags[j]) - bags[best] or found[j] - found[best]):
            chosen.append(j)
            break
    return ("\n" if table else " ").join(units[i][0] for i in sorted(chosen))


# -- rules: specifics must agree ---------------------------------------------------

# Capitalised words that are ordinary English at a sentence start or in titles.
_COMMON_CAPS = set(
    """The A An In On For With This That These Those It Its We Our They Their There Here As At By From To Of And Or
    But If When While Where Which Who What How Why Both Each All Some Most Many More Less No Not Only Also However
    Thus Therefore Moreover Furthermore Table Figure Fig Section Appendix Eq Equation Chapter Model Models Method Methods
    Results Result Study Studies Paper Authors Author Data Using Use Used Compared Overall Finally First Second Third
    Although Because Since After Before During Under Over Between Among Within Without According Such Other Another
    Yes Non One Two Three Four Five I""".split()
)


def specific_names(text: str) -> list[str]:
    """Names a claim must not get wrong: mixed case, letters with digits, acronyms, Latin binomials' genus."""
    out = []
    words = _WORD.findall(text)
    for i, w in enumerate(words):
        inner_caps = any(ch.isupper() for ch in w[1:])
        has_digit = any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w)
        capitalised = w[0].isupper() and w not in _COMMON_CAPS and i > 0 and len(w) > 2
        if inner_caps or has_digit or capitalised:
            out.append(w.lower())
    return out


# Opposite word stems (matched as word prefixes, so "increased" ~ "increas"). A claim using one
# where the cited text uses only the other reverses what the passage says: the misattribution
# a shared topic hides best.
_OPPOSITES = [
    ("increas", "decreas"), ("higher", "lower"), ("larger", "smaller"), ("greater", "smaller"),
    ("positiv", "negativ"), ("rise", "fall"), ("rose", "fell"), ("rais", "lower"), ("above", "below"),
    ("earlier", "later"), ("faster", "slower"), ("longer", "shorter"), ("gain", "loss"), ("improv", "worsen"),
    ("improv", "deteriorat"), ("correlat", "uncorrelat"), ("significan", "insignifican"), ("significan", "nonsignifican"),
    ("toleran", "sensitiv"), ("overestimat", "underestimat"), ("maxim", "minim"), ("upper", "lower"),
    ("stabl", "unstabl"), ("accept", "reject"), ("includ", "exclud"), ("outperform", "underperform"),
    ("liberal", "conservativ"), ("cheap", "expensiv"), ("cheap", "demanding"), ("efficien", "inefficien"),
    ("consisten", "inconsisten"), ("bias", "unbias"), ("safe", "unsafe"), ("suitabl", "unsuitabl"),
    ("appropriat", "inappropriat"), ("benefit", "harm"), ("success", "fail"), ("strong", "weak"),
]


_NEGATORS = {"not", "no", "never", "nor", "neither", "without", "t"}  # "t": what is left of "isn't"


def _plain_words(text: str) -> list[str]:
    """The text's words, less those a negation just before turns around: "not safe" says
    what "unsafe" says, so neither counts as the passage's direction."""
    words = [w.lower() for w in _WORD.findall(text)]
    return [w for i, w in enumerate(words) if not _NEGATORS & set(words[max(0, i - 3) : i])]


def reversed_direction(claim: str, quote: str) -> str:
    """A direction word of the claim whose opposite the quote uses instead ("" if none)."""
    cw = _plain_words(claim)
    qw = _plain_words(quote)

    def has(words: list[str], prefix: str, unless: str) -> bool:
        # "unless": the longer opposite that begins with this prefix ("uncorrelated" is not "correlated").
        return any(w.startswith(prefix) and not w.startswith(unless) for w in words)

    for a, b in _OPPOSITES:
        for x, y in ((a, b), (b, a)):
            if has(cw, x, y) and has(qw, y, x) and not has(qw, x, y) and not has(cw, y, x):
                return f"{x}… vs {y}…"
    return ""


# "A is higher than B": the comparative word, then "than" and what it is compared with.
_THAN = re.compile(r"\b([A-Za-z]+er|more|less|fewer)\b([^,;:.()\[\]]{0,60}?)\bthan\b([^,;:.()\[\]]{1,60})", re.I)


def _meets(a: set[str], b: set[str]) -> bool:
    """Two bags share a word, or two words of five letters or more where one begins the other
    ("circulat" ~ "circulator": the crude stem leaves agent nouns whole)."""
    return any(x == y or (min(len(x), len(y)) >= 5 and (x.startswith(y) or y.startswith(x))) for x in a for y in b)


def _comparison(text: str) -> tuple[str, set[str], set[str]] | None:
    """(comparative word, what is compared, what it is compared with) of the text's first "… than …"."""
    m = _THAN.search(text)
    if not m:
        return None
    clause = re.split(r"[,;:()\[\]]", text[: m.start()])[-1]
    subject = word_stems(clause + " " + m.group(2))
    other = word_stems(m.group(3))
    return m.group(1).lower(), subject - other, other - subject


def swapped_comparison(claim: str, quote: str) -> str:
    """The claim compares the way the quote does, with its two sides the other way round ("" if not).

    "Circulating nurses scored higher than scrub nurses" citing "scores were higher for scrubs
    than circulators": the same words, the same comparative, the opposite finding.
    """
    c = _comparison(claim)
    if c is None or not c[1] or not c[2]:
        return ""
    for sentence in re.split(r"(?<=[.;])\s+", quote):
        q = _comparison(sentence)
        if q is None or q[0] != c[0]:
            continue
        _, q_subject, q_other = q
        # What the claim compares with is what the quote compares, and the claim's subject is what the quote compares with.
        if _meets(c[2], q_subject) and not _meets(c[2], q_other) and _meets(c[1], q_other):
            return f"“{c[0]} than” the other way round"
    return ""


# A reason the claim gives: "X because Y", "Because Y, X", "X, owing to Y". The issue's own
# example of a wrong answer is "a reason the paper never gives": a claim that states the
# passage's finding and adds a cause of its own is partly supported, at best.
# ("Since" is left out: as often "since 2002" as a cause.)
_REASON = re.compile(r"\b(?:because(?: of)?|due to|owing to|thanks to|as a result of|given that)\b", re.I)
# How a passage gives a cause (without "as", which is as often a comparison).
_CAUSAL = re.compile(r"\b(?:because|due to|owing to|thanks to|since|thus|therefore|hence|consequently|as a result|"
                     r"caus\w*|reason\w*|explain\w*|attribut\w*|leads? to|led to|result(?:s|ed)? (?:in|from)|"
                     r"driven|why|so that|stems? from|accounts? for|responsible for|contribut\w*)\b", re.I)
MAIN_WORDS = 5  # a shorter main clause ("This is") says nothing of its own to judge


def given_reason(claim: str) -> tuple[str, str] | None:
    """(the claim without its reason, the reason) where the claim gives one; else None."""
    m = _REASON.search(claim)
    if not m:
        return None
    if m.start() == 0 or not claim[: m.start()].strip(" ,"):  # "Because Y, X"
        head, comma, main = claim[m.end() :].partition(",")
        if not comma:
            return None
        reason = m.group() + head
    else:
        main, reason = claim[: m.start()].rstrip(" ,;"), claim[m.start() :]
    main = main.strip()
    if len(main.split()) < MAIN_WORDS:
        return None
    return (main[0].upper() + main[1:]).rstrip(".") + ".", reason.strip().rstrip(".")


def reason_stated(reason: str, passage: str) -> bool:
    """The passage gives a cause, in at least half of the reason's own words."""
    if not _CAUSAL.search(passage):
        return False
    def parts(text: str) -> set[str]:  # "high-leverage" is "high" and "leverage"
        return {stem(t) for t in key_terms(text.replace("-", " "))}
    terms, said = parts(_REASON.sub(" ", reason)), parts(passage)
    return sum(_meets({t}, said) for t in terms) >= len(terms) / 2


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


class Finding(NamedTuple):
    """What the rules found in a (claim, passage) pair."""

    cap: str  # the best verdict the pair may get
    reason: str  # why ("" where nothing is wrong)
    missing: list[str]  # the figures, names or words at fault
    # More than a missing detail: the passage states otherwise (a direction word, a comparison's
    # sides, a "respectively" figure given to another name).
    contradicts: bool = False
    # Where the rules cap the claim for a part they can judge (a reason the passage does not
    # give): the rest, for the model to judge; "" where the model judges the whole claim.
    judged: str = ""
    settled: bool = False  # the rules decided the pair supported: the model is not asked (a table row)


class Reading(NamedTuple):
    """A pair as the families read it. `context`: text the claim may take names and figures from
    without the passage stating them (the question, the paper's title: "In lme4, …" cites a
    passage that says "the package"); `quote`: the sentences the claim rests on (else the passage)."""

    claim: str
    passage: str
    context: str = ""
    quote: str = ""

    @property
    def cited(self) -> str:
        return self.quote or self.passage


def _family_reason(r: Reading) -> Finding | None:
    reasoned = given_reason(r.claim)
    if not reasoned or reason_stated(reasoned[1], r.passage):
        return None
    main = check_specifics(reasoned[0], r.passage, context=r.context, quote=r.quote)
    if main.cap != Support.SUPPORTED.value:
        return main
    return Finding(Support.PARTIAL.value, f"the passage does not give the reason “{reasoned[1]}”",
                   [reasoned[1]], judged=reasoned[0])


def _family_figures(r: Reading) -> Finding | None:
    missing = sorted(numbers_in(r.claim) - numbers_stated(r.passage) - numbers_stated(r.context))
    if missing:
        return Finding(Support.UNSUPPORTED.value, f"the passage does not state {', '.join(missing[:3])}",
                       missing + _missing_names(r))
    return None


def _family_respectively(r: Reading) -> Finding | None:
    misassigned = misplaced_figure(r.claim, r.cited)
    if misassigned:  # every figure is stated, but one belongs to another name ("respectively", clause by clause)
        figure, why = misassigned
        return Finding(Support.UNSUPPORTED.value, why, [figure], contradicts=True)
    return None


def _family_direction(r: Reading) -> Finding | None:
    flipped = reversed_direction(r.claim, r.cited) or swapped_comparison(r.claim, r.cited)
    return Finding(Support.UNSUPPORTED.value, f"the passage says the opposite ({flipped})", [flipped],
                   contradicts=True) if flipped else None


def _missing_names(r: Reading) -> list[str]:
    where = r.passage + " " + r.context
    said = {stem(w.lower()) for w in _WORD.findall(where)}
    squashed = _squash(where)  # "quasi-Poisson" ~ "quasipoisson", "Fv/Fm" ~ "FvFm"
    missing = []
    for name in dict.fromkeys(specific_names(r.claim)):
        key = _squash(name)
        if stem(name) in said or (key and key in squashed) or (key.endswith("s") and key[:-1] in squashed):
            continue
        if not abbreviated(name, r.claim, where):
            missing.append(name)
    return missing


def _family_names(r: Reading) -> Finding | None:
    # A specific name the cited text never uses is how a misattribution reads (another gene,
    # dataset, method or organism on the same topic).
    missing = _missing_names(r)
    return Finding(Support.UNSUPPORTED.value, f"the passage does not name {', '.join(missing[:3])}", missing) if missing else None


def _family_table_row(r: Reading) -> Finding | None:
    # The yes/no judge reads a row of "header: value" fields poorly and struck out right figures.
    if is_table_unit(r.passage) and states_row(r.claim, r.cited):
        return Finding(Support.SUPPORTED.value, "the table row states it: its name, the figures and their columns",
                       [], settled=True)
    return None


# The rule families, read in order: the first that finds something decides the rules' part of the
# verdict (a cap, or a settled "supported"); a pair none decides goes to the model whole. Name, what
# it decides, the rule. Each was switched off in turn on bench/support.py's hand-labelled pairs
# (`--without NAME`; the table in docs/research.md).
FAMILIES: list[tuple[str, str, Callable[[Reading], Finding | None]]] = [
    ("reason", "partial: a reason the passage does not give (the model judges the rest)", _family_reason),
    ("figures", "unsupported: a figure the passage does not state", _family_figures),
    ("respectively", "unsupported: a figure given to another item of a list or clause", _family_respectively),
    ("direction", "unsupported: the opposite direction word, or a comparison the other way round", _family_direction),
    ("names", "unsupported: a specific name the passage does not use", _family_names),
    ("table-row", "supported, without the model: a table row's name, figures and columns", _family_table_row),
]
OFF: set[str] = set()  # families switched off (bench/support.py --without; never a setting)


def check_specifics(claim: str, passage: str, *, context: str = "", quote: str = "") -> Finding:
    """The rules' part of the verdict: the first family of `FAMILIES` that decides, else no cap."""
    r = Reading(claim, passage, context, quote)
    for name, _, rule in FAMILIES:
        found = None if name in OFF else rule(r)
        if found is not None:
            return found
    return Finding(Support.SUPPORTED.value, "", [])
