"""Section types and their default ("starting") queries.

Built from the context fields that the drafting seed lists for each section
(seeds/003, "Section-Specific Query Construction"), mapped onto the context
file's keys: the experiment's plan/code → `method`, its stdout/metrics/plots
→ `results`, its verdict/reasoning → `verdict`, the hypothesis' method
combination → `hypothesis`. The seed has no related-work entry; it gets two
queries, the problem (concept + open questions) and the approach (method +
hypothesis), because prior work is usually found along both lines.

This module is imported by the CLI's argument parser, so it stays free of
heavy imports.
"""

from __future__ import annotations

from .context import DraftContext

SECTIONS: dict[str, str] = {
    "introduction": "Introduction",
    "related-work": "Related Work",
    "methods": "Methods",
    "results": "Results",
    "discussion": "Discussion",
    "abstract": "Abstract",
    "conclusion": "Conclusion",
}

# Each section: a list of queries, each query the concatenation of these fields.
QUERY_FIELDS: dict[str, list[tuple[str, ...]]] = {
    "introduction": [("concept", "open_questions", "hypothesis")],
    "related-work": [("concept", "open_questions"), ("method", "hypothesis")],
    "methods": [("method", "hypothesis")],
    "results": [("results",)],
    "discussion": [("verdict", "results")],
    "abstract": [("concept", "results")],
    "conclusion": [("verdict", "concept")],
}

# What the evidence is for (the seed's "Focus"), shown to the search agent.
FOCUS: dict[str, str] = {
    "introduction": "background, the problem and why it matters, what is known and what is still open",
    "related-work": "prior approaches to the same problem, competing methods and how they differ, the gap this study fills",
    "methods": "similar methodologies, technical approaches, implementation details, parameter choices, evaluation protocols",
    "results": "comparable results, benchmarks, baselines and the metrics they report",
    "discussion": "related findings that agree or conflict, alternative interpretations, limitations of similar work, future directions",
    "abstract": "the positioning of the study in its field and its key contribution",
    "conclusion": "implications of the findings, connections to other work, future work",
}

QUERY_CHARS = 500  # a query longer than this is clipped at a word boundary


def section_title(section: str) -> str:
    return SECTIONS[normalise_section(section)]


def normalise_section(section: str) -> str:
    from ..errors import ResearchDeskError

    key = section.strip().lower().replace("_", "-").replace(" ", "-")
    key = {"related": "related-work", "relatedwork": "related-work", "method": "methods", "intro": "introduction"}.get(key, key)
    if key not in SECTIONS:
        raise ResearchDeskError(f"Unknown section {section!r}.", "Choose one of: " + ", ".join(SECTIONS) + ".")
    return key


def _sentence(part: str) -> str:
    text = " ".join(part.split())
    return text if text.endswith(("?", "!")) else text.rstrip(".") + "."


def _join(parts: list[str]) -> str:
    text = " ".join(_sentence(p) for p in parts if p.strip())
    if len(text) > QUERY_CHARS:
        text = text[:QUERY_CHARS].rsplit(" ", 1)[0]
    return text


def default_queries(section: str, context: DraftContext) -> tuple[list[str], list[str]]:
    """The section's starting queries and notes on fields that were missing.

    A query whose fields are all empty is skipped; if that leaves none, the
    concept alone is the query (it is the one required field).
    """
    section = normalise_section(section)
    queries: list[str] = []
    notes: list[str] = []
    for combo in QUERY_FIELDS[section]:
        parts = [context.get(k) for k in combo]
        missing = [k for k, v in zip(combo, parts) if not v.strip()]
        if missing and len(missing) < len(combo):
            notes.append(f"the {section} query would also use {', '.join(missing)}, which the context leaves empty")
        query = _join(parts)
        if query and query not in queries:
            queries.append(query)
    if not queries:
        wanted = sorted({k for combo in QUERY_FIELDS[section] for k in combo})
        notes.append(f"the context has none of {', '.join(wanted)} for the {section} queries; searching with the concept instead")
        queries.append(_join([context.concept]))
    return queries, notes
