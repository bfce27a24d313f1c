"""A small, tested BibTeX writer for the library's papers.

Keys are stable across runs: first author's family name + year + first
significant title word (e.g. `zeileis2004econometric`), with a, b, … suffixes
on collisions decided by paper ID order, so the same library gives the same keys.
"""

from __future__ import annotations

import re
import unicodedata

from .records import Paper

_SKIP_WORDS = {"a", "an", "the", "on", "of", "in", "for", "and", "to", "with", "from", "by", "at"}
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$",
    "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def family_name(author: str) -> str:
    author = author.strip()
    if "," in author:
        return author.split(",")[0].strip()
    parts = author.split()
    return parts[-1] if parts else ""


def base_key(paper: Paper) -> str:
    family = re.sub(r"[^a-z]", "", _ascii(family_name(paper.authors[0])).lower()) if paper.authors else ""
    words = [w for w in re.findall(r"[a-z]+", _ascii(paper.title).lower()) if w not in _SKIP_WORDS]
    year = paper.year or "nd"
    return f"{family or 'anon'}{year}{words[0] if words else ''}"


def citation_keys(papers: list[Paper]) -> dict[str, str]:
    """paper id → BibTeX key, unique and stable for the given library."""
    by_base: dict[str, list[Paper]] = {}
    for p in sorted(papers, key=lambda p: p.id):
        by_base.setdefault(base_key(p), []).append(p)
    keys: dict[str, str] = {}
    for base, group in by_base.items():
        if len(group) == 1:
            keys[group[0].id] = base
        else:
            for i, p in enumerate(group):
                keys[p.id] = f"{base}{chr(ord('a') + i) if i < 26 else i}"
    return keys


def escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def entry(paper: Paper, key: str) -> str:
    fields: list[tuple[str, str]] = [("title", "{" + escape(paper.title) + "}")]
    if paper.authors:
        fields.append(("author", " and ".join(escape(a) for a in paper.authors)))
    if paper.year:
        fields.append(("year", paper.year))
    if paper.doi:
        fields.append(("doi", escape(paper.doi)))
    if paper.arxiv_id:
        fields += [("eprint", paper.arxiv_id), ("archivePrefix", "arXiv")]
    fields.append(("note", escape(f"Research Desk library id {paper.id}")))
    kind = "article" if paper.doi else "misc"
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{key},\n{body}\n}}\n"


def bibtex(papers: list[Paper], keys: dict[str, str] | None = None) -> str:
    keys = keys or citation_keys(papers)
    return "\n".join(entry(p, keys[p.id]) for p in sorted(papers, key=lambda p: keys[p.id]))
