"""Sentences a page break cuts in two, made whole in the evidence.

Passages never span pages, so a sentence that runs over a page break is two fragments in two
passages, and the model and the quotes got half a sentence, often without its number (about one
page break in five, in both bench corpora; docs/lab/). So before focusing, a passage that ends on
its page's unfinished last sentence gets the rest from the next page, and one that opens
mid-sentence gets the beginning from the page before; `char_start` moves back by what was put in
front, so its sentences keep their places. Only a page that opens in lower case continues one that
stops without a full stop. Where both passages around a break are in the evidence, the
better-ranked one holds the whole sentence and the other loses its half.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Callable

from ...units import text_units
from ...text.line_breaks import unfinished
from ...records import Evidence
from ...units import pages_of_text_file
from .not_evidence import is_paper_matter

log = logging.getLogger(__name__)

_JOIN = " "
_FURNITURE = re.compile(r"\d{1,4}|(?:https?://)?www\.\S+|\S+\.(?:org|com|net)\S*")  # a page number, an address alone

PageTexts = Callable[[str], dict[int, str]]  # paper id -> {page number: page markdown}


def _spans(md: str) -> list[tuple[int, int, str]]:
    """The page's sentences and blocks, in order, without headings and without the publisher's
    furniture: a licence or copyright line at the foot of the page, a journal's address, a page
    number. Such a line sits between the two halves of a sentence cut by the break ("… in the
    double mutant YR/FE an additive effect was observed" | "© 2014 The Author(s) … properly
    cited." | the next page), so the break is judged, and the halves joined, around it."""
    out = []
    for s, e, kind in text_units(md):
        text = md[s:e].strip()
        if kind == "heading" or _FURNITURE.fullmatch(text) or is_paper_matter(text, kind):
            continue
        out.append((s, e, text if kind == "text" else ""))  # blocks as "": never joined
    return out


def _prose(md: str) -> list[str]:
    """The page's sentences and blocks, in order (`_spans`), their text."""
    return [text for _, _, text in _spans(md)]


def _continues(sentence: str) -> bool:
    return sentence[:1].islower()


def mend_page_breaks(evidence: list[Evidence], page_texts: PageTexts) -> list[Evidence]:
    """The passages, those that share a sentence with a neighbouring page holding it whole (copies).

    `evidence` is best first: a sentence cut by a break goes whole to the first passage holding
    a half of it; a later passage holding the other half drops that half (where it has more)."""
    units: dict[tuple[str, int], list[str]] = {}
    mended: set[tuple[str, int]] = set()  # (paper, page before the break) whose sentence a passage holds whole

    def page(paper_id: str, number: int) -> list[str]:
        if (paper_id, number) not in units:
            md = page_texts(paper_id).get(number, "")
            units[(paper_id, number)] = _prose(md) if md else []
        return units[(paper_id, number)]

    out = []
    for e in evidence:
        spans = _spans(e.text)
        own, passage = page(e.paper_id, e.page), [unit for _, _, unit in spans]
        text, start = e.text, e.char_start
        if own and passage and passage[0] == own[0] and _continues(own[0]):
            before = page(e.paper_id, e.page - 1)
            if before and unfinished(before[-1]):
                if (e.paper_id, e.page - 1) in mended:
                    text, start = _without_first_unit(text, start)
                else:
                    mended.add((e.paper_id, e.page - 1))
                    blank = spans[0][0]  # the furniture before it goes (text is still the passage's own)
                    text = before[-1] + _JOIN + text[blank:]
                    start += blank - len(before[-1]) - len(_JOIN)
        if own and passage and passage[-1] == own[-1] and unfinished(own[-1]):
            after = page(e.paper_id, e.page + 1)
            if after and _continues(after[0]):
                if (e.paper_id, e.page) in mended:
                    text = _without_last_unit(text)
                else:
                    mended.add((e.paper_id, e.page))
                    text = text[: _spans(text)[-1][1]].rstrip() + _JOIN + after[0]  # the furniture after it goes
        out.append(e if text == e.text else replace(e, text=text, char_start=start))
    return out


def _without_first_unit(text: str, start: int) -> tuple[str, int]:
    """The passage without its opening sentence (its start moved past it); as it was if that is all it holds."""
    spans = _spans(text)
    headed = any(kind == "heading" and s < spans[0][0] for s, _, kind in text_units(text)) if spans else False
    if len(spans) < 2 or headed:  # a heading first: leave it
        return text, start
    rest = spans[1][0]
    return text[rest:], start + rest


def _without_last_unit(text: str) -> str:
    """The passage without its closing sentence; as it was if that is all it holds."""
    spans = _spans(text)
    return text[: spans[-1][0]].rstrip() if len(spans) >= 2 else text


def library_pages(text_file: Callable[[str], object]) -> PageTexts:
    """Page markdown by paper, read from the library's text files (`text_file(paper_id)`: a path or None), once each."""
    cache: dict[str, dict[int, str]] = {}

    def pages(paper_id: str) -> dict[int, str]:
        if paper_id not in cache:
            path = text_file(paper_id)
            try:
                cache[paper_id] = dict(pages_of_text_file(path.read_text(encoding="utf-8"))) if path else {}
            except (OSError, UnicodeDecodeError) as exc:  # the mend is an improvement only
                log.warning("page text of %s unreadable (%s); its page breaks stay as they are", paper_id, exc)
                cache[paper_id] = {}
        return cache[paper_id]

    return pages
