"""A question's scope: the papers it may read and cite (issue 53).

A scope names chosen papers, a tag, a collection, or several of these (a paper must then
meet every one). The funnel gets the scope resolved to paper ids and narrows every search
to them (a LanceDB prefilter), its paper map and so its references too, so a scoped answer
never cites a paper outside it. A collection takes in its sub-collections ("Birds" holds
"Birds/Raptors"), the way a Zotero user reads a collection tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from .errors import ResearchDeskError
from .records import Paper


@dataclass(frozen=True)
class Scope:
    papers: tuple[str, ...] = ()  # chosen paper ids
    tag: str = ""
    collection: str = ""  # "Parent/Child"
    names: tuple[str, ...] = field(default=(), compare=False)  # the chosen papers' titles, for the label

    @property
    def empty(self) -> bool:
        return not (self.papers or self.tag or self.collection)

    def describe(self) -> str:
        """How the research pane and the history name it: "tag “robust”", "3 chosen papers"."""
        parts = []
        if self.papers:
            one = self.names[0] if len(self.papers) == 1 and self.names else self.papers[0]
            parts.append(f"“{_short(one)}”" if len(self.papers) == 1 else f"{len(self.papers)} chosen papers")
        if self.tag:
            parts.append(f"tag “{self.tag}”")
        if self.collection:
            parts.append(f"collection “{self.collection}”")
        return " and ".join(parts) if parts else "all papers"

    def to_dict(self) -> dict[str, Any]:
        return {"papers": list(self.papers), "tag": self.tag, "collection": self.collection, "names": list(self.names)}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "Scope":
        d = d or {}
        return cls(tuple(d.get("papers") or ()), d.get("tag") or "", d.get("collection") or "", tuple(d.get("names") or ()))


def in_collection(paper: Paper, collection: str) -> bool:
    want = collection.strip("/")
    return any(c == want or c.startswith(want + "/") for c in paper.collections)


def resolve(scope: Scope, papers: Iterable[Paper]) -> frozenset[str]:
    """The ids of the papers within `scope`; an error that says why when none are."""
    by_id = {p.id: p for p in papers}
    unknown = [pid for pid in scope.papers if pid not in by_id]
    if unknown:
        raise ResearchDeskError(f"No paper with id {', '.join(map(repr, unknown))} in the library.", "See `research-desk list`.")
    chosen = [by_id[pid] for pid in scope.papers] if scope.papers else list(by_id.values())
    if scope.tag:
        chosen = [p for p in chosen if scope.tag.casefold() in (t.casefold() for t in p.tags)]
    if scope.collection:
        chosen = [p for p in chosen if in_collection(p, scope.collection)]
    if not chosen:
        raise ResearchDeskError(f"No paper in the library is within {scope.describe()}.",
                                "See the tags and collections with `research-desk list`, or clear the scope.")
    return frozenset(p.id for p in chosen)


def labels(papers: Iterable[Paper]) -> tuple[list[str], list[str]]:
    """(tags, collections) used in the library, sorted, each once; a collection's parents listed too."""
    tags: dict[str, str] = {}
    collections: set[str] = set()
    for p in papers:
        for t in p.tags:
            tags.setdefault(t.casefold(), t)
        for c in p.collections:
            parts = c.split("/")
            collections.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return sorted(tags.values(), key=str.casefold), sorted(collections, key=str.casefold)


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"
