"""Search the papers' own text: every place a word or phrase is printed, with its page.

The words come from the content chunks' full-text (BM25) index that hybrid research already
keeps (`Library.finish_writes`). That index is built without word positions, so Lance cannot
run a phrase query on it (measured: "position is not found but required for phrase queries").
Instead the query's words are matched with AND (stemmed, stop words dropped, as the index
tokenizes), and each matching chunk is then read for the phrase itself: a chunk that prints the
phrase is an exact hit, one that has only its words (scattered, or another form of a word) is
listed after them. Measured on the 29-paper statistics library (1,237 chunks, 2 busy cores;
bench/text_search.py): for each of five queries the BM25 leg's rows hold every chunk a scan of
all the text finds with the phrase ("confidence interval" 26 of 26, "random effects" 39 of 39),
in 5–27 ms a search against 59–138 ms for the scan. A query of stop words only ("the"), which
the index drops, is answered by the scan.

A chunk is an exact slice of one page's markdown (chunking.py), so its page is the hit's page;
chunks of one page overlap, so a place found in two of them is listed once.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import pyarrow.compute as pc
from lance.query import FullTextOperator, MatchQuery

from .store import Library
from .schema import CONTENT_CHUNKS
from .sql_filter import in_list
from .table_reader import snapshot

log = logging.getLogger(__name__)

CANDIDATES = 400  # chunks read for the phrase: a common word in a big library has more, the best by BM25 come first
SNIPPET_BEFORE, SNIPPET_AFTER = 70, 130  # characters of context around a hit
# The words the index's English tokenizer drops (tantivy's list): a query of these only is scanned for.
STOP_WORDS = frozenset("a an and are as at be but by for if in into is it no not of on or such that the their then there "
                       "these they this to was will with".split())
_COLUMNS = ["paper_id", "page", "page_label", "section", "text", "char_start"]
_MARKDOWN = re.compile(r"(?m)^#{1,6}\s+|\*\*|`+|\|")


@dataclass(frozen=True)
class TextHit:
    """One place in one paper where the searched text is printed."""

    paper_id: str
    page: int  # 1-based PDF page
    page_label: str  # as printed on the page ("" when the PDF has none)
    section: str
    snippet: str  # one line of the page's text around the hit
    start: int  # the hit's span in `snippet`
    end: int
    exact: bool  # the phrase itself; False: only its words (apart, or in another form)

    @property
    def matched(self) -> str:
        return self.snippet[self.start:self.end]

    def to_dict(self) -> dict:
        return {"paper_id": self.paper_id, "page": self.page, "page_label": self.page_label, "section": self.section,
                "snippet": self.snippet, "match": [self.start, self.end], "exact": self.exact}


def query_words(text: str) -> list[str]:
    """The query as plain words (characters the full-text parser reads as syntax dropped)."""
    cleaned = "".join(ch if ch.isalnum() or ch in "-_'" else " " for ch in text)
    return cleaned.split()


def search_text(library: Library, query: str, *, limit: int = 200, papers: list[str] | None = None) -> list[TextHit]:
    """Places printing `query` in the library's finished papers: exact hits first, papers by BM25, pages in order."""
    words = query_words(query)
    table = library.chunks_table(CONTENT_CHUNKS)
    if not words or table is None:
        return []
    complete = library.complete_paper_ids()
    wanted = sorted(complete if papers is None else complete & set(papers))
    if not wanted:
        return []
    snap = snapshot(table)
    rows = _candidates(snap.dataset, words, wanted)
    found: list[tuple[TextHit, int]] = []
    kept: dict[tuple[str, int], list[int]] = {}  # offsets in the page of the hits listed, by paper and page
    for row in rows:
        for hit, place in _hits_in(row, query, words):
            # Overlapping chunks find one place twice; a second place inside the first's snippet adds nothing.
            offsets = kept.setdefault((hit.paper_id, hit.page), [])
            if all(abs(place - other) > SNIPPET_AFTER for other in offsets):
                offsets.append(place)
                found.append((hit, place))
        if sum(hit.exact for hit, _ in found) >= limit:
            break
    # Papers in the order of their best chunk (BM25), each paper's hits in page order; exact hits first.
    rank: dict[str, int] = {}
    for hit, _ in found:
        rank.setdefault(hit.paper_id, len(rank))
    found.sort(key=lambda f: (not f[0].exact, rank[f[0].paper_id], f[0].page, f[1]))
    return [hit for hit, _ in found[:limit]]

def _candidates(dataset, words: list[str], papers: list[str]) -> list[dict]:
    """Chunks holding every word, best first; a scan of the text when the index cannot answer."""
    where = in_list("paper_id", papers)
    try:
        found = dataset.to_table(columns=_COLUMNS, full_text_query=MatchQuery(" ".join(words), "text", operator=FullTextOperator.AND),
                                 filter=where, prefilter=True, limit=CANDIDATES, disable_scoring_autoprojection=True)
        if found.num_rows:
            return found.to_pylist()
        if not all(w.lower() in STOP_WORDS for w in words):
            return []  # a word the index keeps is printed nowhere: no need to read every chunk
    except (ValueError, OSError, RuntimeError):  # no index yet (a library whose import never finished), or a broken one
        log.warning("full-text index unusable for a text search; scanning the chunks", exc_info=True)
    # Only stop words ("the", "of"), which the index drops, or no index: read the text itself.
    scanned = dataset.to_table(columns=_COLUMNS, filter=where)
    text = scanned.column("text")
    mask = pc.match_substring(text, words[0], ignore_case=True)
    for word in words[1:]:
        mask = pc.and_(mask, pc.match_substring(text, word, ignore_case=True))
    return scanned.filter(mask).slice(0, CANDIDATES).to_pylist()


def _hits_in(row: dict, query: str, words: list[str]):
    """(hit, its offset in the page) for each place in the chunk printing the phrase, else one
    loose hit at the first of its words."""
    text = row.get("text") or ""
    base = int(row.get("char_start") or 0)
    literal = re.compile(r"\s+".join(re.escape(w) for w in query.split()), re.IGNORECASE)  # "Efron (1979)" as typed
    phrase = re.compile(r"\b" + r"\W{0,3}\s*".join(re.escape(w) for w in words), re.IGNORECASE)  # or across a hyphen
    spans = [m.span() for m in literal.finditer(text)] or [m.span() for m in phrase.finditer(text)]
    exact = bool(spans)
    if not exact:  # the words only: marked where the first of them (or another form of it) stands
        stem = re.escape(words[0][:max(3, len(words[0]) - 2)])
        first = re.search(rf"\b{stem}\w*", text, re.IGNORECASE)
        spans = [first.span() if first else (0, 0)]
    for start, end in spans:
        snippet, s, e = _snippet(text, start, end)
        yield TextHit(row["paper_id"], int(row.get("page") or 0), row.get("page_label") or "", row.get("section") or "",
                      snippet, s, e, exact), base + start


def _snippet(text: str, start: int, end: int) -> tuple[str, int, int]:
    """A one-line excerpt around text[start:end], cut at word boundaries, without markdown marks."""
    left = max(0, start - SNIPPET_BEFORE)
    right = min(len(text), end + SNIPPET_AFTER)
    if left > 0:
        space = text.find(" ", left, start)
        left = space + 1 if space >= 0 else left
    if right < len(text):
        space = text.rfind(" ", end, right)
        right = space if space > end else right
    before = ("…" if left > 0 else "") + _clean(text[left:start]).lstrip()
    match = _clean(text[start:end])
    after = _clean(text[end:right]).rstrip() + ("…" if right < len(text) else "")
    return before + match + after, len(before), len(before) + len(match)


def _clean(part: str) -> str:
    """Markdown marks out, line breaks and runs of spaces as one space (the hit stays on one line)."""
    return re.sub(r"\s+", " ", _MARKDOWN.sub("", part))
