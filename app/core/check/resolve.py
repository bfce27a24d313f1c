"""Which library paper a citation key means.

The key's .bib entry is matched to a paper by, in order: its DOI; its title (normalised,
fuzzy) with the first author's surname or the year agreeing; then the key's own form
("smith2020deep" → first author Smith, 2020, a title word "deep"). A key with no .bib
entry (or no .bib at all) goes straight to the key's form; a `\\bibitem`'s text is read
for a DOI and a title the same way. What matches nothing is reported, never guessed.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from ..records import Paper

log = logging.getLogger(__name__)

TITLE_MATCH = 0.88  # SequenceMatcher ratio of normalised titles that counts as the same title
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>{},]+", re.I)


@dataclass
class BibEntry:
    key: str
    title: str = ""
    authors: list[str] = field(default_factory=list)  # surnames, lower case, first author first
    year: str = ""
    doi: str = ""
    arxiv: str = ""  # eprint field, version dropped
    text: str = ""  # a \bibitem's whole text (no fields)


@dataclass
class Resolution:
    paper_id: str = ""
    how: str = ""  # "doi" | "title" | "key" | "id"
    problem: str = ""  # why nothing matched, one line


def fold(text: str) -> str:
    """Lower case, accents and TeX markup gone, words separated by single spaces."""
    text = re.sub(r"\\[A-Za-z]+|[{}\\]", "", text)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def surname(name: str) -> str:
    """"Zeileis, Achim" / "Achim Zeileis" / "A. Zeileis" -> "zeileis"."""
    name = name.strip()
    if "," in name:
        return fold(name.split(",")[0]).split(" ")[-1] if fold(name.split(",")[0]) else ""
    words = fold(name).split()
    return words[-1] if words else ""


def doi_of(text: str) -> str:
    m = _DOI.search(text or "")
    return m.group().rstrip(".;").lower() if m else ""


# -- the .bib --------------------------------------------------------------------------

def read_bib(path: Path) -> tuple[dict[str, BibEntry], list[str]]:
    """The .bib's entries by key, and one line per block that did not parse."""
    import bibtexparser

    problems = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return {}, [f"{path.name}: cannot be read ({exc.strerror or exc}); keys resolve by their own form only"]
    parsed = bibtexparser.parse_string(text)
    for block in parsed.failed_blocks:
        first = (block.raw or "").strip().splitlines()[0][:60] if (block.raw or "").strip() else ""
        problems.append(f"{path.name}, line {block.start_line + 1}: an entry that does not parse ({first}); skipped")
    entries = {}
    for e in parsed.entries:
        fields = {k.lower(): str(f.value) for k, f in e.fields_dict.items()}
        authors = [surname(a) for a in re.split(r"\s+and\s+", fields.get("author", "") or fields.get("editor", "")) if a.strip()]
        year = re.search(r"\d{4}", fields.get("year", "") or fields.get("date", ""))
        entries[e.key] = BibEntry(
            key=e.key,
            title=fields.get("title", ""),
            authors=[a for a in authors if a],
            year=year.group() if year else "",
            doi=doi_of(fields.get("doi", "")) or doi_of(fields.get("url", "")),
            arxiv=re.sub(r"v\d+$", "", fields.get("eprint", "").strip().lower().removeprefix("arxiv:")),
        )
    return entries, problems


def bibitem_entries(items: dict[str, str]) -> dict[str, BibEntry]:
    return {key: BibEntry(key=key, text=text, doi=doi_of(text), year=(re.findall(r"(?:19|20)\d\d", text) or [""])[0]) for key, text in items.items()}


# -- matching ---------------------------------------------------------------------------

class Resolver:
    def __init__(self, papers: list[Paper]) -> None:
        self.papers = papers
        self.by_doi = {p.doi.lower(): p.id for p in papers if p.doi}
        self.ids = {p.id.lower(): p.id for p in papers}
        self.by_arxiv = {re.sub(r"v\d+$", "", (p.arxiv_id or p.id).lower()): p.id for p in papers}
        self.titles = [(fold(p.title), p) for p in papers if p.title]

    def resolve(self, key: str, entry: BibEntry | None, *, author_year: bool = False) -> Resolution:
        if not self.papers:
            return Resolution(problem="the library has no papers")
        if entry is not None:
            if entry.doi and entry.doi in self.by_doi:
                return Resolution(self.by_doi[entry.doi], "doi")
            if entry.arxiv and entry.arxiv in self.by_arxiv:
                return Resolution(self.by_arxiv[entry.arxiv], "arxiv")
            pid = self._by_title(entry)
            if pid:
                return Resolution(pid, "title")
        if key.lower() in self.ids:
            return Resolution(self.ids[key.lower()], "id")
        pid = self._by_key_form(key, entry)
        if pid:
            return Resolution(pid, "key")
        if entry is None:
            return Resolution(problem="no .bib entry for this key, and its form matches no library paper")
        described = entry.title or entry.text
        return Resolution(problem=f"its entry ({described[:70]}) matches no paper in the library")

    def _by_title(self, entry: BibEntry) -> str:
        if entry.title:
            want = fold(entry.title)
            best, best_ratio = None, 0.0
            for title, paper in self.titles:
                ratio = SequenceMatcher(None, want, title).ratio() if abs(len(want) - len(title)) < 0.4 * max(len(want), 1) else 0.0
                # A title cut at its colon (or a subtitle dropped) is the same paper when the author or year agrees.
                prefix = len(min(want, title, key=len)) >= 12 and (want.startswith(title) or title.startswith(want))
                if prefix and self._agrees(entry, paper):
                    ratio = max(ratio, TITLE_MATCH)
                if ratio > best_ratio:
                    best, best_ratio = paper, ratio
            if best is not None and best_ratio >= TITLE_MATCH and (best_ratio >= 0.97 or self._agrees(entry, best)):
                return best.id
        if entry.text:  # a \bibitem: the paper whose title the item's text contains
            text = fold(entry.text)
            hits = [p for title, p in self.titles if len(title) >= 12 and title in text]
            if len(hits) == 1:
                return hits[0].id
        return ""

    @staticmethod
    def _agrees(entry: BibEntry, paper: Paper) -> bool:
        names = {surname(a) for a in paper.authors}
        return bool(entry.authors and entry.authors[0] in names) or (bool(entry.year) and entry.year == paper.year)

    def _by_key_form(self, key: str, entry: BibEntry | None) -> str:
        """"smith2020deep", "Smith:2020", "Smith 2020" (a text citation) -> the one paper that fits."""
        m = re.match(r"^([A-Za-z\u00C0-\u024F'\-]+?)[\s:_\-]*((?:19|20)\d\d)[a-z]?[\s:_\-]*([A-Za-z]*)", key)
        if not m:
            return ""
        name, year, word = fold(m.group(1)).replace(" ", ""), m.group(2), fold(m.group(3))
        if entry is not None and entry.authors:
            name = entry.authors[0].replace(" ", "")
        fits = [p for p in self.papers if p.authors and surname(p.authors[0]).replace(" ", "") == name]
        if not fits:
            return ""
        dated = [p for p in fits if p.year == year]
        if word:
            titled = [p for p in (dated or fits) if word in fold(p.title).split()]
            if len(titled) == 1:
                return titled[0].id
        return dated[0].id if len(dated) == 1 else ""
