"""An answer bound by hand to the real evidence of the fact library (plus an owl paper whose
pages print other numbers): what the sharing tests export, verify and annotate."""

from __future__ import annotations

from app.core.desk import Desk
from app.core.events import Task
from app.core.records import Citation, Claim, Reference, ResearchResult


OWL = ("Barn Owls Hunt by Sound", ["Ines Duarte"], [
    "# Abstract\n\nBarn owls hunt by sound in complete darkness.",
    "# Methods\n\nWe recorded 40 owls in a dark flight tunnel. Each owl struck a speaker hidden under foam.",
    "# Results\n\nOwls located the sound within 2 degrees of azimuth. Accuracy fell when one ear was plugged.",
])
QUESTION = "When do kestrels leave, how fast do glaciers retreat, and how do owls find prey?"
# (claim, the sentences it rests on, verdict); a claim in “quotes” is a key passage.
CLAIMS = [
    ("Kestrels leave alpine valleys in mid-September.", "The median departure date was 14 September.", "supported"),
    ("Young kestrels leave later than adults.", "Young birds departed 9 days later than adults.", "partial"),
    ("The glacier front retreated 38 metres a year.", "The glacier front retreated 38 metres per year between 2015 and 2021.", "supported"),
    ("Owls locate a sound to within two degrees, less well with one ear plugged.",
     "Owls located the sound within 2 degrees of azimuth. Accuracy fell when one ear was plugged.", "supported"),
    ("“We recorded 40 owls in a dark flight tunnel.”", "We recorded 40 owls in a dark flight tunnel.", "supported"),
]
DOI = "10.5555/kestrel.2019.14"


def cited_answer(desk: Desk, bound: list[tuple[str, str, str]] = CLAIMS) -> ResearchResult:
    """An answer whose claims (claim, the sentences it rests on, verdict) cite the real evidence
    passages that hold their sentences."""
    result = desk.research(QUESTION, Task(), evidence_only=True,
                           overrides={"cutoff_summaries": 0.0, "cutoff_evidence": 0.0, "k_evidence": 40})
    answer, claims, citations = "", [], []
    for i, (claim, quote, verdict) in enumerate(bound):
        e = next(e for e in result.evidence if quote in " ".join(e.text.split()))
        tag = f"[{e.paper_id}, page {e.page}]"
        quoted = claim.startswith("“")
        start = len(answer) + len(claim) + 1
        answer += f"{claim} {tag}\n"
        claims.append(Claim(claim, [e.number], verdict, quoted=quoted))
        citations.append(Citation(tag, e.paper_id, e.page, "verified" if verdict == "supported" else verdict, start,
                                  start + len(tag), e.number, None, "", verdict, quote, e.page_label, i))
    papers = {p.id: p for p in desk.papers()}
    cited = sorted({c.paper_id for c in citations})
    for c in citations:
        c.reference_number = cited.index(c.paper_id) + 1
    result.answer, result.claims, result.citations = answer.strip(), claims, citations
    result.references = [Reference(n, pid, papers[pid].title, papers[pid].authors, papers[pid].published)
                         for n, pid in enumerate(cited, 1)]
    return result
