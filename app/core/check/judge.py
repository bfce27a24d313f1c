"""The verdict on one (manuscript sentence, cited paper): rules first, the model only where they cannot tell.

Rules settle a pair without the model only where the text leaves no doubt; they are the families
of `FAMILIES` (one table: name, what it decides, the rule), read in order, the first that decides
wins: a figure the paper does not state where it says this, a figure given to another item of a
list, a specific name the whole paper never uses, the opposite direction (not found); the paper's
own words in order, or two of the sentence's figures beside most of its words (supported). Each was
switched off in turn on bench/check.py's drafts (the ablation table in docs/research.md); those
that changed no verdict (units, versions, hedges, negations) were removed.

Everything else goes to the model, one pair at a time, through the answer engine's judge
(support.py): a yes/no question whose fixed beginning the model has read once, and a
verdict cut from its confidence. A backend without probabilities answers with a verdict
constrained to one of three words. The quote is the window: one or two sentences, not
the whole chunk.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from ..callbacks import IsCancelled
from ..errors import Cancelled, ModelError
from ..models.base import ChatMessage, ChatModel
from ..models.catalog import JudgeCutoffs
from ..paths import load_prompt
from ..records import Support
from ..research.text.abbreviations import abbreviated, spell_out
from ..research.text.citations import key_terms, stem
from ..research.text.clause_figures import misplaced_figure
from ..research.check.support import DEFAULT_JUDGE, judge_beginning, judge_of, support_probability, verdict_for
from ..research.check.support_rules import reversed_direction, specific_names, swapped_comparison
from ..research.text.citations import numbers_in, numbers_stated
from .locate import PaperText, Window, around, stating, terms_of

log = logging.getLogger(__name__)

VERBATIM = 0.8  # share of the sentence's terms found in order in the window: "the paper's own words"
FLIP_COVERAGE = 0.5  # an opposite word counts only in a window holding this share of the sentence's terms
FIGURES_AGREE = 2  # figures of the sentence that one window states, with…
FIGURES_COVERAGE = 0.6  # …this share of its terms: supported without the model
NUMBER_SLACK = 0.25  # a window stating the sentence's numbers may share this much less of its terms than the best
QUOTE_CHARS = 560  # the quote the model reads: one to three sentences
VERDICTS = ("supported", "partial", "unsupported")  # the model's words, in Support's terms
_CODE_NAME = re.compile(r"\b([A-Za-z_][\w.]*)\(\)")  # "mob()", "estfun()": a function a paper documents
_VERSION = re.compile(r"\b\d+(?:\.\d+){2,}\b")  # "2.4.0": a release a paper names (not a number support.py reads)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|cannot|can't|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|"
                       r"without|rarely|seldom|hardly|none|unable|fail(?:s|ed)?)\b", re.I)


@dataclass
class Ruling:
    """What the rules make of a pair: a verdict, or "" for the model to decide; and why."""

    verdict: str
    reason: str
    window: Window
    missing: list[str]


def names_of(claim: str) -> list[str]:
    """Specific names of the claim (support_rules.py's rule), function names written with () and version numbers."""
    return list(dict.fromkeys([*specific_names(claim), *(m.lower() for m in _CODE_NAME.findall(claim)), *_VERSION.findall(claim)]))


def _squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def ordered_coverage(claim: str, window: str) -> float:
    """Share of the claim's key terms that the window holds in the same order."""
    a = [stem(t) for t in re.findall(r"[a-z][a-z0-9\-]*[a-z0-9]|\d+(?:\.\d+)?", claim.lower()) if t in key_terms(t)]
    b = [stem(t) for t in re.findall(r"[a-z][a-z0-9\-]*[a-z0-9]|\d+(?:\.\d+)?", window.lower()) if t in key_terms(t)]
    if not a:
        return 0.0
    matched = sum(block.size for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return matched / len(a)


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


@dataclass
class _Reading:
    """What the rules read of a pair as they go: the window they judge (a family may move it to the
    place that states the sentence's figures) and the figures the sentence must find there."""

    claim: str
    windows: list[Window]
    paper: PaperText
    context: str
    best: Window
    numbers: set[str]
    floor: float = 0.0

    @property
    def where(self) -> str:  # the window and the paper's title and authors, squashed
        return _squash(self.best.evidence.text + " " + self.context)

    @property
    def names_here(self) -> bool:
        return all(_squash(n) in self.where for n in names_of(self.claim))


def _figures(r: _Reading) -> Ruling | None:
    if not r.numbers:
        return None
    # A window that states the numbers counts only if it is about the sentence too (a "5" in
    # "Table 5" is no support for "below 5%"). Not in the best windows: read on before saying
    # "not stated" — the sentences around them, then the whole paper (locate.stating).
    r.floor = min(r.best.coverage, 1.0) - NUMBER_SLACK
    found = next((w for w in r.windows if r.numbers <= w.numbers and w.coverage >= r.floor), None)
    found = found or stating(r.claim, r.numbers, r.windows, r.paper, r.floor)
    if found is None:
        missing = sorted(r.numbers - r.best.numbers)
        return Ruling(Support.UNSUPPORTED.value, f"the paper does not state {', '.join(missing[:3])} where it says this",
                      r.best, missing)
    r.best = found
    return None


def _respectively(r: _Reading) -> Ruling | None:
    # Every figure stated, one given to another name ("respectively" lists, clause by clause) — unless
    # another place of the paper gives the figures as the sentence does (an abstract often states what
    # the results list "respectively" with one more item).
    misassigned = misplaced_figure(r.claim, r.best.text, source="paper")
    if misassigned:
        agreeing = next((w for w in r.windows if w is not r.best and r.numbers <= w.numbers and w.coverage >= r.floor
                         and not misplaced_figure(r.claim, w.text, source="paper")), None) if r.numbers else None
        if agreeing is not None:
            r.best = agreeing
            return None
        figure, why = misassigned
        return Ruling(Support.UNSUPPORTED.value, why, r.best, [figure])
    return None


def _names(r: _Reading) -> Ruling | None:
    # A name stands for itself or its expansion ("HIV" where the paper spells out "human immunodeficiency
    # virus"), as in the answer's check (support_rules.check_specifics): one rule for names in both.
    where, context = r.where, _squash(r.context)
    unknown = [n for n in names_of(r.claim) if _squash(n) not in where and not r.paper.mentions(n)
               and _squash(n) not in context and not abbreviated(n, r.claim, r.best.text + " " + r.context)]
    if unknown:
        return Ruling(Support.UNSUPPORTED.value, f"the paper never mentions {', '.join(unknown[:3])}", r.best, unknown)
    return None


def _direction(r: _Reading) -> Ruling | None:
    if r.best.coverage < FLIP_COVERAGE:
        return None
    flipped = reversed_direction(r.claim, r.best.text) or swapped_comparison(r.claim, r.best.text)
    return Ruling(Support.UNSUPPORTED.value, f"the paper says the opposite ({flipped})", r.best, [flipped]) if flipped else None


def _verbatim(r: _Reading) -> Ruling | None:
    if r.names_here and negated(r.claim) == negated(r.best.text) and ordered_coverage(r.claim, r.best.text) >= VERBATIM:
        return Ruling(Support.SUPPORTED.value, "the paper states this in nearly the same words", r.best, [])
    return None


def _figures_agree(r: _Reading) -> Ruling | None:
    # Two exact figures of the sentence in one place of the paper, beside most of its words, with no
    # rule above objecting (a changed, swapped or misassigned figure, an opposite): that is the paper
    # stating it, however the sentence is worded — a small judge doubts paraphrases.
    if (len(r.numbers) >= FIGURES_AGREE and r.best.coverage >= FIGURES_COVERAGE and r.names_here
            and negated(r.claim) == negated(r.best.text)):
        return Ruling(Support.SUPPORTED.value, "the paper states these figures here", r.best, [])
    return None


# The rule families, in the order they are read (the first that rules decides): name, what it
# decides, the rule. Each earns its place on bench/check.py's drafts (the ablation table in
# docs/research.md: each family switched off in turn, `bench/check.py --without NAME`).
FAMILIES: list[tuple[str, str, Any]] = [
    ("figures", "not found: a figure of the sentence no place of the paper about it states", _figures),
    ("respectively", "not found: a figure given to another item of a list", _respectively),
    ("names", "not found: a specific name the whole paper never uses", _names),
    ("direction", "not found: the opposite direction or a comparison the other way round", _direction),
    ("verbatim", "supported: the paper's own words in order", _verbatim),
    ("figures-agree", "supported: two of the sentence's figures beside most of its words", _figures_agree),
]
OFF: set[str] = set()  # families switched off (bench/check.py --without; never a setting)


def rule_ruling(claim: str, windows: list[Window], paper: PaperText, context: str) -> Ruling:
    """The rules' verdict on the claim against the paper's best windows (see the module doc and FAMILIES)."""
    r = _Reading(claim, windows, paper, context, windows[0], numbers_in(claim) - numbers_stated(context))
    for name, _, rule in FAMILIES:
        ruling = None if name in OFF else rule(r)
        if ruling is not None:
            return ruling
    return Ruling("", "", r.best, [])


# -- the model ------------------------------------------------------------------------

SECOND_LOOK = True  # where the model finds no support, it reads one other place of the paper
SECOND_LOOK_SLACK = 0.25  # …that holds at least the first one's share of the claim's terms less this


def model_reads(window: Window, windows: list[Window], paper: PaperText) -> list[Window]:
    """What the model reads, in turn, until it finds support: the rules' window with the
    sentence before and after it (a claim may join them, or lean on the one naming its
    subject) where that fits the quote, then the best window elsewhere in the paper."""
    first = window
    for before, after in ((1, 1), (1, 0), (0, 1)):
        grown = around(paper, window, before, after)
        if len(" ".join(grown.text.split())) <= QUOTE_CHARS:
            first = grown
            break
    reads = [first]
    if SECOND_LOOK:
        for w in windows:
            apart = w.chunk != first.chunk or w.last < first.first or w.first > first.last
            if apart and w.coverage >= window.coverage - SECOND_LOOK_SLACK:
                reads.append(w)
                break
    return reads


PARTIAL_NOTE = "the model read the passage as stating part of this, not all of it: read the quote"


# A sentence that opens by referring back ("It took 63,180 CPU hours", "These scores …") says what
# it is about in the sentence before it: English's referring words, not any paper's vocabulary.
_REFERS_BACK = re.compile(r"^(?:this|these|those|that|it|its|they|their|such|both|here|the latter|the former)\b", re.I)


def claim_in_context(claim: str, before: str) -> str:
    """What the judge reads as the claim: the sentence, and where it refers back, the sentence before it
    as context (the judge is asked about the claim, not about that sentence)."""
    if not before or not _REFERS_BACK.match(claim.strip()):
        return claim
    return f"{claim} (Context, not to be checked: {before})"


DOUBTED = "the model doubts that the passage states this, but not enough to say the paper does not: read it"
VERDICT_SCHEMA: dict[str, Any] = {"type": "string", "enum": list(VERDICTS)}


def quote_text(window: Window, acronyms: dict[str, str] | None = None, claim: str = "") -> str:
    """The window as the model reads it: where longer than QUOTE_CHARS, the stretch of it that
    holds most of the claim's terms (a window the layout ran on from a byline into the abstract
    is mostly names and addresses at its start); the paper's acronyms spelled out where it uses them."""
    words = window.text.split()
    text = " ".join(words)
    if len(text) > QUOTE_CHARS:
        text = _densest_stretch(words, terms_of(claim) if claim else set())
    return spell_out(text, acronyms) if acronyms else text


def _densest_stretch(words: list[str], terms: set[str]) -> str:
    """The run of whole words within QUOTE_CHARS holding the most of `terms` (the earliest of equals), with
    "…" where it cuts the text."""
    best, best_start, best_end = -1, 0, 0
    for start in range(len(words)):
        end, size = start, 0
        while end < len(words) and size + len(words[end]) + 1 <= QUOTE_CHARS:
            size += len(words[end]) + 1
            end += 1
        found = len(terms_of(" ".join(words[start:end])) & terms) if terms else 0
        if found > best:
            best, best_start, best_end = found, start, end
        if end == len(words) or not terms:
            break
    stretch = " ".join(words[best_start:best_end])
    return ("… " if best_start else "") + stretch + (" …" if best_end < len(words) else "")


def judge_messages(claim: str, quote: str) -> list[ChatMessage]:
    """System and instruction are the same for every pair (cached); the pair comes last."""
    return [
        {"role": "system", "content": load_prompt("check_system.md").strip()},
        {"role": "user", "content": load_prompt("check_judge.md").strip().format(claim=claim, quote=quote)},
    ]


def read_verdict(reply: str) -> str:
    word = reply.strip().strip('"').strip().lower()
    return word if word in VERDICTS else ""


def check_verdict(p_yes: float, cutoffs: JudgeCutoffs | None) -> tuple[str, str]:
    """(the judge's verdict on a citation, DOUBTED or ""): as in an answer's check, except that a doubt
    between the judge's "not found" cut and its partial cut is partial (the writer looks) and not a
    flag: a check that flags correct citations is not used twice (labelled.choose_not_found)."""
    verdict = verdict_for(p_yes, cutoffs)
    floor = (cutoffs or DEFAULT_JUDGE).not_found
    if verdict == Support.UNSUPPORTED.value and floor is not None and p_yes >= floor:
        return Support.PARTIAL.value, DOUBTED
    return verdict, ""


def model_verdict(chat: ChatModel, claim: str, window: Window, *, cancelled: IsCancelled | None = None,
                  timeout_s: float | None = None, acronyms: dict[str, str] | None = None) -> tuple[str, str]:
    """(verdict in Support's terms or "" if the model failed; why it failed, or why a doubt is partial).

    `acronyms`: the paper's own definitions, spelled out in the quote (abbreviations.spell_out).

    The answer engine's judge decides (support.py: a yes/no question, the verdict cut from
    the model's confidence) where the backend gives probabilities; others answer in one word.
    """
    chat = judge_of(chat)  # the judge the settings name, if another model
    try:
        chat.prefill(judge_beginning())  # once per model: later pairs restore it
        p_yes = support_probability(chat, claim, quote_text(window, acronyms, claim), cancelled=cancelled)
        if p_yes is not None:
            return check_verdict(p_yes, chat.judge_cutoffs)
        reply = chat.chat(judge_messages(claim, quote_text(window, acronyms, claim)), max_tokens=8, temperature=0.0,
                          json_schema=VERDICT_SCHEMA, cancelled=cancelled, timeout_s=timeout_s)
    except Cancelled:
        raise
    except ModelError as exc:  # a failed model call must not lose the check: the rules' verdict stands, and says so
        log.warning("check: the model's verdict failed (%s)", exc.message)
        return "", exc.message
    verdict = read_verdict(reply)
    if not verdict:
        log.warning("check: the model's verdict is unreadable (%r)", reply[:40])
        return "", "the model's reply was not a verdict"
    return {"supported": Support.SUPPORTED.value, "partial": Support.PARTIAL.value,
            "unsupported": Support.UNSUPPORTED.value}[verdict], ""
