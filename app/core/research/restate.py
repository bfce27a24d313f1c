"""The first claim written again from the quoted sentences, when no passage supports it.

The first claim is the model's direct answer, written from the best passages before the
answer's quotes are chosen. Then the model rates which sentences answer the question
(key_sentences.py), and those are quoted. So an answer could lead with a wrong figure above
the quote that gives the right one ("125.3 GeV" over "mH = 125.09 ± 0.21 (stat.) ± 0.11
(syst.)"), shaded as unsupported, or withdrawn (recite.withdraw_unstated) and lead with no
answer of its own.

Such a claim gets one more try: the model reads the question and the quoted sentences alone
(~200 tokens) and writes the answer again in one sentence, citing the quotes' passages. The new
claim goes through the same check; it replaces the old one only where a passage supports it,
and the answer's notes keep the old text. Only a claim the check's rules fault is restated
(`needs_restating`: a figure no passage states), or one that only says the question back
(question_echo.py); the latter, if no supported claim comes back, gives way to the quotes. A
failed call leaves the answer as it was.
"""

from __future__ import annotations

import json
import logging
from typing import NamedTuple

from ..callbacks import IsCancelled
from ..errors import Cancelled, ModelError
from ..models.base import ChatMessage, ChatModel
from ..paths import load_prompt
from ..records import Claim, Evidence, Support
from .key_sentences import unquoted
from .question_echo import echoes_question
from .recite import keep_claims
from .support import Pair, check_pairs
from .support_rules import numbers_in

log = logging.getLogger(__name__)

RESTATE_TOKENS = 120  # one sentence in its JSON
RESTATE_SCHEMA = {"type": "object", "properties": {"claim": {"type": "string"}}, "required": ["claim"]}


def restate_messages(query: str, sentences: list[str]) -> list[ChatMessage]:
    system = load_prompt("synthesis_system.md").strip()
    listed = "\n".join(f"- “{s}”" for s in sentences)
    user = load_prompt("restate.md").strip().format(query=query, sentences=listed)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class Restated(NamedTuple):
    """What became of the first claim the model wrote."""

    old: str  # the claim as the model wrote it
    echo: bool  # it only said the question back (else: a figure no passage states)
    removed: bool  # the quotes now lead (the model copied one, or an echo came back no better)

    def message(self) -> str:
        said = f"the first claim “{self.old.rstrip('. ')}”"
        if self.echo:
            then = "left out: the quoted sentences answer it" if self.removed else "written again from the quoted sentences"
            return f"Support check: {said} only repeated the question; {then}."
        return (f"Support check: no passage supported {said}; it was written again from the quoted sentences, "
                "which state the answer.")


def _plain(text: str) -> str:
    return " ".join(text.lower().strip().strip("“”\"'").rstrip(". ").split())


def needs_restating(claims: list[Claim], checked: dict[tuple[int, int], Pair], query: str = "") -> bool:
    """The first claim is the model's, the check's rules found in it a figure that none of its
    passages states (or it only says `query` back), and the answer quotes sentences to restate it from.

    The rules, not the judge alone: the judge agrees with people on 4 pairs in 5 at best, and a
    right claim it doubted came back worse (asked for NEOs above 10 m, the claim restated
    from the quotes gave the count above 100 m). A figure no passage states is wrong for
    certain (125.3 GeV where the paper gives 125.09 GeV). A name is not reason enough: a claim
    that wrote the paper's formula with its own variable ("y ~ x1 + x2 | x1 + x2 + x3") was
    restated from quotes that did not hold the formula, and came back without the answer.
    """
    if not claims or claims[0].quoted or not any(c.quoted for c in claims[1:]):
        return False
    if query and echoes_question(claims[0].text, query):
        return True
    pairs = [p for (i, _), p in checked.items() if i == 0]
    return bool(pairs) and all(p.verdict != Support.SUPPORTED.value and p.rule == Support.UNSUPPORTED.value
                               and any(numbers_in(m) for m in p.missing) for p in pairs)


def restate_first(claims: list[Claim], evidence: list[Evidence], checked: dict[tuple[int, int], Pair],
                  chat: ChatModel, query: str, *, context: str = "",
                  cancelled: IsCancelled | None = None) -> Restated | None:
    """Write `claims[0]` again from the quoted claims when no passage supports it, or it only
    says the question back.

    Returns what became of it when the claim was replaced (the new one supported by at least one
    of the quotes' passages, its pairs in `checked`) or removed (the quotes then lead; `checked`
    re-keyed): where the model only copied a quote, or an echo of the question came back no
    better. Else None and nothing changes.
    """
    if not needs_restating(claims, checked, query):
        return None
    echo = echoes_question(claims[0].text, query)
    quotes = [c for c in claims[1:] if c.quoted]
    by_number = {e.number: e for e in evidence}
    sources = [n for n in dict.fromkeys(s for c in quotes for s in c.sources) if n in by_number]
    if not sources:
        return None
    try:
        reply = chat.chat(restate_messages(query, [unquoted(c.text) for c in quotes]), max_tokens=RESTATE_TOKENS,
                          temperature=0.0, json_schema=RESTATE_SCHEMA, cancelled=cancelled)
        text = " ".join(str(json.loads(reply).get("claim", "")).split())
    except Cancelled:  # the user stopped: the checked answer stands as it was
        return None
    except (ModelError, ValueError, AttributeError) as exc:  # the answer stands as it was
        log.warning("writing the first claim again failed (%s); it stays as the model wrote it", exc)
        return None
    old = claims[0].text

    def give_way() -> Restated:  # the quotes lead
        keep_claims(claims, checked, list(range(1, len(claims))))
        return Restated(old, echo, removed=True)

    if _plain(text) in {_plain(unquoted(c.text)) for c in quotes}:
        # The model copied a quote: the answer already says it, right below. The old claim
        # goes and the quote leads, rather than the same sentence twice in a row.
        return give_way()
    # Below, a claim that could not be written better stays (a wrong figure stays marked, and
    # may be withdrawn), except an echo of the question: it says nothing, and the quotes answer.
    if not text or echoes_question(text, query):
        return give_way() if echo else None
    pairs = [Pair(text, by_number[n]) for n in sources]
    check_pairs(pairs, chat, context=context, cancelled=cancelled)
    if any(p.contradicts for p in pairs):  # a quoted passage states otherwise (m16: "2.17, lower than the control's 0.28")
        return give_way() if echo else None
    pages = set()
    for p in pairs:  # one citation a page: two quotes from one page would cite it twice
        page = (p.evidence.paper_id, p.evidence.page)
        if p.verdict == Support.SUPPORTED.value and page not in pages:
            pages.add(page)
        else:
            p.verdict = ""
    pairs = [p for p in pairs if p.verdict]
    if not pairs:
        return give_way() if echo else None
    for key in [k for k in checked if k[0] == 0]:
        del checked[key]
    claims[0] = Claim(text=text, sources=[p.evidence.number for p in pairs])
    checked.update(((0, p.evidence.number), p) for p in pairs)
    return Restated(old, echo, removed=False)
