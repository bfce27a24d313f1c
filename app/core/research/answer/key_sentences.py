"""Key sentences: the best evidence sentences, quoted verbatim as an answer's supporting claims.

The answer's second turn has the model read the passages after the best ones and add
claims. With the starter model that turn costs ~8 s of reading and ~5 s of writing, and
on the answer bench its claims often restate the first claim or copy a passage beside
the question. Quoting the sentences that focusing scored best costs no writing (only the
short rating below), and a quote cannot misstate its passage: the support check has nothing to doubt.

A quote is chosen only if it
- adds to what the claims and the quotes before it say (most of its key terms are new);
- reads as prose, not an equation or a figure caption (a table's row is quoted as the table
  prints it, with its column headers);
- stands alone (a sentence that leans on the one before it is quoted with it);
- states something: not a question, a road map (a part of the paper named and announced), an
  announced list or an entry of the reference list.
Two quotes a passage at most (`quotes_per_passage`), neighbours joined into one; best first.

Best by focus score alone, quotes framed the question as often as they answered it ("The
objectives of this research were to…"). So where the backend gives the next token's
probabilities, the model rates the best few candidates first: each is one yes/no question,
"does this sentence state the answer?", and P(yes) is added to the focus score. The
question's part of the prompt is read once and kept in the cache, so each candidate costs
only its own ~50 tokens of reading. In a lab run on 52 bench questions (r-papers and mixed
fields) the two quotes held a gold fact for 28 questions against 21 by focus score alone; on
30 other questions the answers were right 12 times against 9 (docs/lab/).
"""

from __future__ import annotations

import logging
import re
from typing import Callable, NamedTuple

from ...callbacks import IsCancelled
from ...errors import ModelError
from ...models.base import ChatMessage, ChatModel
from ...paths import load_prompt
from ...records import Claim, Evidence, Sentence
from ...units import is_caption_line, is_table_unit
from ..context import AnswerContext
from ..text.citations import key_stems, key_terms, stem
from ..evidence.sentence_runs import first_command
from ..evidence.focus import FIGURE_CAPTION
from ..evidence.sentence_runs import ends_sentence, follows, leans_back
from ..text.question_reading import Asks, asks, is_year, states_figure
from ..evidence.not_evidence import is_entry
from ..text.citations import numbers_in, two_digits_or_more


log = logging.getLogger(__name__)

SAID_SHARE = 0.6  # a sentence whose key terms the claims already hold this much of adds nothing
MIN_WORDS = 8
NUMBER_BONUS = 0.05  # on the focus score (0-1)
FIGURE_BONUS = 0.2  # for a sentence that states a figure, where the question asks for an amount
MAX_CHARS = 450  # a quote is read at a glance; longer sentences are usually run-together text
READS_AS_ANSWER = 0.5  # P(yes) at which the model says yes rather than no
MERGED_CHARS = 2 * MAX_CHARS  # a quote joined from neighbouring sentences (one quote of its passage's two)

# P(the sentence answers the question) for each sentence; None where the backend cannot tell.
Rate = Callable[[list[str]], "list[float] | None"]


class _Candidate(NamedTuple):
    score: float
    number: int  # the passage's number in the prompt
    text: str
    first: int  # the span of the passage's sentences it quotes
    last: int
    code: bool = False  # a sentence with the command of the code block it introduces (`_with_code`)


def key_sentences(claims: list[Claim], evidence: list[Evidence], limit: int, *,
                  rate: Rate | None = None, rated: int = 0, rated_first: int = 0, per_passage: int = 2,
                  asked: Asks = Asks()) -> list[Claim]:
    """Up to `limit` quoted claims from the focused sentences, best first, each citing its passage
    (`per_passage` sentences of one passage at most; neighbours are joined into one quote).

    With `rate`, the best candidates by focus score are re-ranked by focus score plus the model's
    P(yes) that the sentence answers the question (`answer_probabilities`): the best `rated_first`,
    and the rest of the best `rated` only where none of those reads as the answer (`_ratings`).
    `asked`: where the question asks how to do something, a sentence that introduces a code block
    is a candidate with the block's first command (`_with_code`); where it asks for an amount, a
    sentence that states a figure ranks higher (`FIGURE_BONUS`).
    """
    if limit <= 0:
        return []
    candidates = quotable(claims, evidence, asked)
    if rate is not None and rated > 0 and candidates:
        probs = _ratings(candidates, rate, rated, rated_first or rated)
        if probs is not None:  # P(yes) >= 0, so a rated candidate still ranks above the unrated
            candidates = [c._replace(score=c.score + p) for c, p in zip(candidates, probs)] + candidates[len(probs):]
            candidates.sort(key=lambda c: -c.score)
    chosen: list[_Candidate] = []
    taken: dict[int, int] = {}  # quotes from each passage
    said, figures = _said(claims)
    for c in candidates:
        # Not what the claims or the quotes before it say (two passages can state one result).
        if not (c.code or _adds(c.text, said, figures)):
            continue
        sentences = next(e.sentences for e in evidence if e.number == c.number)
        beside = None if c.code else next((k for k, q in enumerate(chosen) if q.number == c.number and not q.code and c.first <= q.last + 1
                       and q.first <= c.last + 1 and _run_on(sentences, min(q.first, c.first), max(q.last, c.last))), None)
        if beside is not None:  # next to (or around) a quote of its passage: one quote, as on the page
            q = chosen[beside]
            first, last = min(q.first, c.first), max(q.last, c.last)
            text = _span(sentences, first, last)
            if len(text) > MERGED_CHARS:
                continue
            chosen[beside] = q._replace(first=first, last=last, text=text)
        elif taken.get(c.number, 0) >= per_passage:
            continue
        else:
            taken[c.number] = taken.get(c.number, 0) + 1
            chosen.append(c)
        said |= key_stems(c.text)
        figures |= numbers_in(c.text)
        if len(chosen) >= limit:
            break
    return [Claim(text=quoted(c.text), sources=[c.number], quoted=True) for c in chosen]


def _ratings(candidates: list[_Candidate], rate: Rate, rated: int, first: int) -> list[float] | None:
    """P(yes) of the best `first` candidates, and of the next ones up to `rated` where none of the
    first reads as the answer: each rating is a model read, and where the model already says "yes"
    to one of the best few, the later ones rarely change which sentences are quoted (docs/research.md)."""
    probs = rate([c.text for c in candidates[:first]])
    if probs is None or first >= rated or any(p >= READS_AS_ANSWER for p in probs):
        return probs
    more = rate([c.text for c in candidates[first:rated]])
    return probs + more if more is not None else probs


def answer_quotes(funnel: AnswerContext, chat: ChatModel, query: str, claims: list[Claim], evidence: list[Evidence],
                  ratings: dict[str, float] | None = None) -> list[Claim]:
    """An answer's key sentences (`params.key_sentences`), the best candidates rated by the model where it can.

    `ratings` receives each rated candidate's P(yes) (the answer check reads them after)."""
    params = funnel.params
    known = {} if ratings is None else ratings

    def rate(sentences: list[str]) -> list[float] | None:
        todo = [s for s in dict.fromkeys(sentences) if s not in known]
        if todo:
            funnel.stage(3, "Stage 3: choosing the sentences of the papers to quote…")
            try:
                probs = answer_probabilities(chat, query, todo, cancelled=funnel.cancelled)
            except ModelError as exc:  # the quotes fall back to focus score; the answer is not lost
                log.warning("rating the key sentences failed (%s); they are chosen by focus score", exc.message)
                return None
            if probs is None:
                return None
            known.update(zip(todo, probs))
        return [known[s] for s in sentences]

    return key_sentences(claims, evidence, params.key_sentences, rate=rate, rated=params.quote_candidates,
                         rated_first=params.quote_candidates_first,
                         per_passage=params.quotes_per_passage, asked=asks(query))


def answer_probabilities(chat: ChatModel, query: str, sentences: list[str], *,
                         cancelled: IsCancelled | None = None) -> list[float] | None:
    """The model's P(yes) that each sentence states the answer to `query`; None if the backend gives none."""
    system = load_prompt("quote_judge_system.md").strip()
    template = load_prompt("quote_judge.md").strip()

    def messages(user: str) -> list[ChatMessage]:
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    # What every answer's rating shares (the system prompt), kept once per model; then what every
    # candidate of this answer shares, read once: the question and the instruction, up to the sentence.
    chat.prefill(messages(template.split("{query}", 1)[0].rstrip()))
    chat.prefill(messages(template.split("Sentence:", 1)[0].rstrip().format(query=query)))
    out = []
    for sentence in sentences:
        probs = chat.choice_probabilities(messages(template.format(query=query, sentence=sentence)), ["yes", "no"],
                                          cancelled=cancelled)
        if probs is None:
            return None
        out.append(probs["yes"])
    return out


def quotable(claims: list[Claim], evidence: list[Evidence], asked: Asks = Asks()) -> list[_Candidate]:
    """Every quotable sentence the claims do not already say, best first."""
    said, figures = _said(claims)
    candidates: list[_Candidate] = []
    for e in evidence:
        for k, s in enumerate(e.sentences):
            with_code = _with_code(e.sentences, k) if asked.call else None
            if with_code is not None:
                # The call is what was asked: new unless a claim gives it already (a claim that
                # says the question back holds most of the introducing sentence's words).
                if not any(with_code[1] in c.text for c in claims):
                    score = max(s.score, e.sentences[k + 1].score)
                    candidates.append(_Candidate(score, e.number, with_code[0], k, k + 1, code=True))
                continue
            if is_table_unit(s.text):
                # A row as the table prints it, with its column headers (tables.row_text): a figure
                # a paper gives only in a table is a key passage too, though it reads as no prose.
                row = s.text.strip()  # not the caption line: it names the columns and states no finding
                if "\n" not in row and not is_caption_line(row) and len(row) <= MERGED_CHARS and _adds(row, said, figures):
                    candidates.append(_Candidate(s.score + _figure_bonus(row, asked), e.number, row, k, k))
                continue
            found = _with_antecedent(e.sentences, k)
            if found is None:
                continue
            text, first = found
            text, last = _with_equation(e.sentences, k, text)
            if not _prose(text) or not _adds(text, said, figures):
                continue
            candidates.append(_Candidate(s.score + _figure_bonus(text, asked), e.number, text, first, last))
    best: dict[str, _Candidate] = {}
    for c in sorted(candidates, key=lambda c: -c.score):
        best.setdefault(c.text, c)  # a page repeated in two passages is one candidate
    return list(best.values())


def _figure_bonus(text: str, asked: Asks) -> float:
    """A sentence that reports a figure is more often the answer than one that frames it; where
    the question asks for an amount, much more often (text/question_reading.py)."""
    if asked.figure and states_figure(text):
        return FIGURE_BONUS
    return NUMBER_BONUS if re.search(r"\d", text) else 0.0


def _said(claims: list[Claim]) -> tuple[set[str], set[str]]:
    """The key-term stems and the figures the claims state."""
    said = {stem(t) for c in claims for t in key_terms(c.text)}
    figures = set().union(*(numbers_in(c.text) for c in claims)) if claims else set()
    return said, figures


def _adds(text: str, said: set[str], figures: set[str]) -> bool:
    """Most of the sentence's key terms are new, or it states a figure that is.

    A sentence in the claims' words that gives a figure they do not ("retreated 38 metres"
    under a claim of "retreated 512 metres") is the correction, not a repeat."""
    terms = key_stems(text)
    return (bool(terms) and len(terms & said) < SAID_SHARE * len(terms)) or _new_figure(text, figures)


def _run_on(sentences: list[Sentence], first: int, last: int) -> bool:
    """Sentences first..last follow one another on the page (no heading or dropped line between)."""
    return all(follows(a.char_end, b.char_start) for a, b in zip(sentences[first:last], sentences[first + 1:last + 1]))


def _span(sentences: list[Sentence], first: int, last: int) -> str:
    """The passage's sentences first..last as one quote, as on the page (less a glued heading)."""
    return _GLUED_HEADING.sub("", " ".join(" ".join(s.text.split()) for s in sentences[first:last + 1]))


def _new_figure(text: str, figures: set[str]) -> bool:
    """The sentence states a figure of two digits or more, not a year, that the claims do not."""
    return any(two_digits_or_more(n) and not is_year(n) for n in numbers_in(text) - figures)


def quoted(text: str) -> str:
    """The sentence in quotation marks, its own final stop left for the citation to precede."""
    return f"“{text.rstrip().rstrip('.')}”"


def unquoted(text: str) -> str:
    return text.strip().strip("“”")


# A section heading in capitals that text extraction ran into the sentence after it
# ("CONSOLIDATION To investigate the influence of catch trials…", "2.3 RESULTS AND DISCUSSION
# We found…"): quoted, the heading reads as part of the claim. Taken off only where the next
# word opens a sentence, so "CRISPR screening identified…" or "DNA Replication…" keep their subject.
_GLUED_HEADING = re.compile(
    r"^(?:\d+(?:\.\d+)*\.?\s+)?(?:[A-Z][A-Z-]+\s+){1,5}(?=(?:The|To|We|In|This|These|Our|For|As|Here|After|"
    r"Since|Although|Because|When|While|It|There|All|Each|Both|Using|On|At|With|From|During|A|An)\s)")


# How a sentence opens: a capital, a bracket, or a name set in lower case ("lme4 incorporates…",
# "mRNA levels…"; chunking's sentence ends read it the same way).
_OPENS = re.compile(r"[A-Z(]|[a-z]+[A-Z0-9]")


def _as_quoted(sentence: Sentence) -> str:
    """The sentence on one line, less a heading glued to it."""
    return _GLUED_HEADING.sub("", " ".join(sentence.text.split()))


def _with_antecedent(sentences: list[Sentence], k: int) -> tuple[str, int] | None:
    """The sentence, with the one before it where it leans on it, and the position of its first
    sentence; None if the one it leans on was not kept."""
    text = _as_quoted(sentences[k])
    if not _OPENS.match(text):  # starts mid-sentence: a fragment of the page
        return None
    if leans_back(text) and len(text.split()) >= MIN_WORDS:
        if k == 0 or not _run_on(sentences, k - 1, k):
            return None
        return " ".join(sentences[k - 1].text.split()) + " " + text, k - 1
    return text, k


EQUATION_CHARS = 120  # a display equation's line, as the page sets it apart


def _with_equation(sentences: list[Sentence], k: int, text: str) -> tuple[str, int]:
    """The sentence with the display equation it runs on into, and the rest of the sentence after
    it ("The result is" | "mH = 125.09 ± 0.24 GeV" | "where the total uncertainty is dominated by
    the statistical term."), and the position of its last part; the sentence alone where it ends
    with its stop or runs on into something else (a listing, a table)."""
    last = k
    while last + 1 < len(sentences) and last - k < 3 and not ends_sentence(text) and _run_on(sentences, last, last + 1):
        nxt = sentences[last + 1].text.strip()
        equation = len(nxt) <= EQUATION_CHARS and re.search(r"[=<>±≈]", nxt)
        if "\n" in nxt or nxt.startswith("```") or not (equation or (last > k and nxt[:1].islower())):
            break
        text, last = f"{text} {nxt}", last + 1
    return text, last


def _with_code(sentences: list[Sentence], k: int) -> tuple[str, str] | None:
    """Sentence k with the first command of the code block right after it, where it introduces
    the block (it runs on into the block, or announces it: "… as follows."), and the command;
    None otherwise."""
    if k + 1 >= len(sentences) or not sentences[k + 1].text.startswith("```") or not _run_on(sentences, k, k + 1):
        return None
    text = _as_quoted(sentences[k])
    if not _OPENS.match(text) or len(text.split()) < MIN_WORDS:
        return None
    if text.endswith((".", "?", "!")) and not (text.endswith(".") and _POINTER.search(text.rstrip("."))):
        return None
    if len(text) > MAX_CHARS or "|" in text or _reference_entry(text):
        return None
    command = first_command(sentences[k + 1].text)
    return (f"{text.rstrip(' :,')}: `{command}`", command) if command else None


# Sentences that point elsewhere instead of stating something: a list announced ("…one of the
# following"), the paper's road map ("Section 5.2 replicates…"), an aside in brackets.
_POINTER = re.compile(r"^(?:\(|(?:in\s+)?(?:section|sect\.|chapter|appendix)\s+\d)|(?:following|as follows|below)\W*$", re.I)
# The road map also runs mid-sentence: a part of the paper named and announced, not stated
# ("Before describing the details of how lme4 parses mixed-model formulas (Section 2.3), we provide
# an informal explanation", "Subsequently, in Section 2.2, the subclass "zooreg" … is discussed").
# Quoted under an answer they say where to read, not what is there. "As shown in Section 4, the
# estimator is unbiased" states a result and is kept: showing is not announcing.
_PART = re.compile(r"\b(?:section|sect\.|chapter|appendix)\s+(?:(?-i:[A-Z])?\d|(?-i:[A-Z])\b)", re.I)
_PARTS = r"(?:sections?|chapter|appendix)"
_ANNOUNCED = re.compile("|".join([
    r"\bwe\s+(?:will\s+|then\s+|now\s+|first\s+|briefly\s+)?(?:discuss|describe|present|introduce|provide|outline|review|explain|turn)\b",
    r"\b(?:is|are|will\s+be)\s+(?:then\s+|briefly\s+)?(?:discussed|described|presented|introduced|provided|outlined|reviewed|explained|given)\b",
    r"\bbefore\s+describing\b",
    r"\bwill\s+be\s+\w+ed\b",
    rf"\b(?:is|are)\s+(?:briefly\s+)?\w+ed\s+in\s+{_PARTS}\s",
    rf"^(?:\w+,\s+)?{_PARTS}\s+\S+\s+(?:presents|introduces|describes|discusses|extends|reviews|is\s+concerned|concludes|contains|provides)\b",
    rf"^see\s+(?:also\s+)?{_PARTS}\b",
]), re.I)


# An entry of a reference list (not_evidence.is_entry: volume and pages, a DOI, an author list),
# or one that opens with its single author ("Haentjens P:", "Smith, J.,"). Focusing already drops
# the entries it can tell by their neighbours; this catches one quoted alone.
_FIRST_AUTHOR = re.compile(r"^[A-Z][a-z][A-Za-z'’-]*,? (?:[A-Z]{1,3}|[A-Z]\.(?: ?[A-Z]\.)*)\s*[,:]")


def _reference_entry(text: str) -> bool:
    return bool(_FIRST_AUTHOR.match(text)) or is_entry(text)


def _prose(text: str) -> bool:
    if len(text) > MAX_CHARS or len(text.split()) < MIN_WORDS or "|" in text or FIGURE_CAPTION.match(text):
        return False
    if _POINTER.search(text.rstrip(".:")) or text.rstrip().endswith("?"):  # a question posed is not an answer
        return False
    if _PART.search(text) and _ANNOUNCED.search(text):
        return False
    if _reference_entry(text):
        return False
    # Results are full of digits, signs and brackets ("0.083 vs 0.072, P < 0.001"); an equation
    # or a garbled extraction is full of other symbols.
    plain = sum(ch.isalnum() or ch.isspace() or ch in ".,;:()[]%<>=±-–−/'’\"“”" for ch in text)
    return plain >= 0.95 * len(text) and text.rstrip()[-1:] in ".!?)"
