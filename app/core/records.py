"""Typed records that flow between the stages of import and research.

Plain dataclasses so that the core stays free of Qt and the records can be
turned into JSON (`asdict`) for the CLI's `--json` output and the state file.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class PaperStatus(str, Enum):
    """Processing status of a paper. Stored as its string value in LanceDB."""

    IMPORTING = "importing"  # row written, not all stages finished: never shown as complete
    EXTRACTED = "extracted"
    # Text, chunks and summary rows written: listed and searchable by its words (BM25); its
    # vectors are still to be computed (ingest/vectors.py), and then it is "indexed".
    WORDS = "words"
    INDEXED = "indexed"
    SUMMARIZED = "summarized"  # indexed and summarized
    FAILED = "failed"


@dataclass
class PageText:
    """Text of one PDF page, as markdown, with its printed label."""

    page: int  # 1-based PDF page number
    label: str  # the page label printed on the page ("iv", "12"), or str(page)
    markdown: str


# Statuses of a paper whose every part is written (a frozenset: checked for thousands of papers per question).
_COMPLETE_STATUSES = frozenset({PaperStatus.WORDS.value, PaperStatus.INDEXED.value, PaperStatus.SUMMARIZED.value})


@dataclass
class PaperMeta:
    """Bibliographic metadata found in a PDF (metadata dictionary and first pages)."""

    title: str = ""
    authors: list[str] = field(default_factory=list)
    published: str = ""  # ISO date or year, as precise as the source allows
    abstract: str = ""
    doi: str = ""
    arxiv_id: str = ""
    venue: str = ""  # journal, proceedings or series, as printed
    # Fields whose value the reader was not sure of ("title", "authors", "year", …): the
    # paper panel marks them so the user checks them first.
    unsure: list[str] = field(default_factory=list)


@dataclass
class Paper:
    """One paper in the library: a row of the `papers` table."""

    id: str
    title: str
    authors: list[str]
    published: str
    abstract: str
    doi: str
    arxiv_id: str
    source_file: str
    page_count: int
    page_labels: list[str]
    content_hash: str
    imported_at: str
    status: str = PaperStatus.IMPORTING.value
    status_reason: str = ""
    summarized: bool = False
    venue: str = ""
    tags: list[str] = field(default_factory=list)  # the user's or Zotero's tags
    # Where the paper came from when not a bare file: "zotero:<library>:<item key>",
    # "bibtex:<citation key>", "ris:<id>". A later sync matches on it.
    source_key: str = ""
    unsure: list[str] = field(default_factory=list)  # metadata fields to check (see PaperMeta)
    collections: list[str] = field(default_factory=list)  # "Parent/Child" paths (Zotero's, or the user's)
    # The tags and collections its source set at the last sync ("tag:x", "collection:A/B"), so a
    # sync replaces those and keeps the ones the user added by hand; None: not recorded (older libraries).
    source_labels: list[str] | None = None

    @property
    def year(self) -> str:
        return self.published[:4] if self.published else ""

    @property
    def complete(self) -> bool:
        """Every part a search needs is written (a "words" paper's vectors may still be pending)."""
        return self.status in _COMPLETE_STATUSES

    @property
    def vectors_pending(self) -> bool:
        """Searchable by its words only: the vectors phase of import has not reached it yet."""
        return self.status == PaperStatus.WORDS.value

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Chunk:
    """A passage of a paper's text (or summary/notes) with where it came from."""

    paper_id: str
    chunk_index: int
    text: str
    page: int = 0  # 1-based PDF page; 0 for summary/notes chunks
    page_label: str = ""
    section: str = ""
    char_start: int = 0  # span in the page's markdown text
    char_end: int = 0
    source_type: str = "content"  # content | summary | notes | abstract


@dataclass
class Sentence:
    """One kept sentence (or table/equation block) of an evidence passage.

    The span is in the page's markdown, like the passage's own, so the viewer can
    highlight exactly the sentences a claim rests on.
    """

    text: str
    char_start: int
    char_end: int
    score: float = 0.0  # how well it bears on the question (focus.py)


@dataclass
class Evidence:
    """A retrieved passage offered to the model as evidence."""

    number: int  # 1-based number shown to the model ("Source 3")
    paper_id: str
    page: int
    page_label: str
    section: str
    text: str
    score: float  # similarity (cosine) of the passage to the query
    stage: str = "evidence"  # which stage/search found it
    query: str = ""  # the query that found it
    char_start: int = 0
    char_end: int = 0
    llm_score: float | None = None  # relevance score from the model (deep mode)
    summary: str = ""  # query-aware summary (deep mode)
    sentences: list[Sentence] = field(default_factory=list)  # focused sentences sent to the model; empty: whole text

    @property
    def focus_text(self) -> str:
        """The kept sentences in page order, "…" where sentences were skipped; the whole text if none were kept."""
        return self.kept_text()

    def kept_text(self, texts: "list[str] | None" = None, *, line_breaks: bool = False) -> str:
        """`focus_text`, or `texts` (one for each kept sentence) put in the kept sentences' places.
        `line_breaks`: a line break between two kept units stays one, as a table's rows are set."""
        if not self.sentences:
            return self.text.strip()
        texts = texts or [s.text for s in self.sentences]
        parts = [texts[0]]
        for prev, cur, text in zip(self.sentences, self.sentences[1:], texts[1:]):
            gap = self.text[prev.char_end - self.char_start : cur.char_start - self.char_start]
            if line_breaks and "\n" in gap:
                parts.append("\n…\n" if gap.strip() else "\n")
            else:
                parts.append(" … " if gap.strip() else " ")
            parts.append(text)
        return "".join(parts)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Evidence":
        d = dict(d)
        d["sentences"] = [Sentence(**s) for s in d.get("sentences") or []]
        return cls(**d)


class CitationStatus(str, Enum):
    VERIFIED = "verified"  # the support check found the claim supported by the cited sentences
    PARTIAL = "partial"  # supported in part (a detail the passage does not state): doubtful
    PAGE_MISMATCH = "page-mismatch"  # paper in evidence, page not
    NOT_IN_EVIDENCE = "not-in-evidence"  # paper not in evidence at all
    UNSUPPORTED = "unsupported"  # the cited passage does not support the claim


class Support(str, Enum):
    """The support check's verdict on one (claim, cited passage) pair."""

    SUPPORTED = "supported"
    PARTIAL = "partial"
    UNSUPPORTED = "unsupported"


@dataclass
class Citation:
    """One citation found in the answer text and the result of checking it."""

    raw: str  # the text as the model wrote it, e.g. "[2301.12345v1, p. 5]"
    paper_id: str
    page: int
    status: str
    start: int = 0  # span of `raw` in the answer markdown
    end: int = 0
    evidence_number: int | None = None  # the evidence passage that supports it
    reference_number: int | None = None  # number in the References section
    note: str = ""
    support: str = ""  # Support value once checked; "" before the check
    quote: str = ""  # the exact sentences of the passage that support the claim (highlighted)
    printed_page: str = ""  # the page number printed on the page, where the PDF defines one
    claim: int | None = None  # index of the claim in ResearchResult.claims it belongs to


@dataclass
class Claim:
    """One claim of an answer with the evidence passages it rests on (structured synthesis)."""

    text: str
    sources: list[int] = field(default_factory=list)  # evidence numbers the model bound it to
    support: str = ""  # the best verdict over its citations ("" while unchecked)
    quoted: bool = False  # a sentence of its passage quoted as is (key_sentences.py), not written by the model
    answers: float | None = None  # the model's P(yes) that it states the answer asked for (answer_check.py); None: not rated
    off_point: str = ""  # why it does not answer what was asked, though supported (answer/check.py); "": it answers, or unchecked


@dataclass
class Reference:
    number: int
    paper_id: str
    title: str
    authors: list[str]
    published: str

    def line(self) -> str:
        authors = ", ".join(self.authors) if self.authors else "Unknown authors"
        date = self.published or "n.d."
        return f"{self.number}. {self.paper_id} – {self.title}, {authors}, {date}"


@dataclass
class ResearchResult:
    """Everything one research run produced; serialised for `--json` and the state file."""

    query: str
    papers: list[str] = field(default_factory=list)  # stage 1 shortlist
    evidence: list[Evidence] = field(default_factory=list)
    answer: str = ""
    claims: list[Claim] = field(default_factory=list)  # structured synthesis; empty for free-text answers
    citations: list[Citation] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    unmentioned: list[str] = field(default_factory=list)  # the question's words no paper contains (research/answer/unmentioned.py)
    caution: str = ""  # shown above the answer: the library may not hold it
    withdrawn: list[str] = field(default_factory=list)  # the model's claims the support check took out (named in the notes)
    open_parts: list[str] = field(default_factory=list)  # parts of the question nothing in the answer speaks to (research/text/question_reading.py)
    mode: str = "standard"
    feedback: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # deep mode: loop decisions, etc.

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        extra = d.pop("extra")
        d.update(extra)
        return d

    def model_claims(self) -> list[Claim]:
        """The sentences the model wrote: the answer itself (quoted sentences are evidence)."""
        return [c for c in self.claims if not c.quoted]

    def model_citations(self) -> list[Citation]:
        """The citations of the model's claims (a key passage's citation is supported as quoted)."""
        return [c for c in self.citations if c.claim is None or c.claim >= len(self.claims) or not self.claims[c.claim].quoted]

    def claim_counts(self) -> dict[str, int]:
        """What the answer's header counts: the model's claims by the check's verdict, and the key
        passages apart (a quote is supported by construction, so it never counts as a claim)."""
        mine = self.model_claims()
        return {"claims": len(mine),
                "supported": sum(c.support == Support.SUPPORTED.value and not c.off_point for c in mine),
                # supported, but not an answer to what was asked (Claim.off_point): never counted as supported
                "off_point": sum(c.support == Support.SUPPORTED.value and bool(c.off_point) for c in mine),
                "partial": sum(c.support == Support.PARTIAL.value for c in mine),
                "unsupported": sum(c.support == Support.UNSUPPORTED.value for c in mine),
                "key_passages": len(self.claims) - len(mine)}

    def key_passages_view(self) -> list[dict[str, Any]]:
        """`key_passages: [{paper_id, page, printed_page, text}]` for `--json`: the papers' own
        sentences shown beneath the answer as evidence, never counted as the model's claims."""
        out = []
        for i, claim in enumerate(self.claims):
            if not claim.quoted:
                continue
            for c in (x for x in self.citations if x.claim == i):
                out.append({"paper_id": c.paper_id, "page": c.page, "printed_page": c.printed_page or str(c.page),
                            "text": c.quote or claim.text.strip("“”")})
        return out

    def claims_view(self) -> list[dict[str, Any]]:
        """`claims: [{text, support, answers_question, citations: [{paper_id, page, printed_page, support, quote}]}]`
        for `--json`: the model's own sentences only (the quoted ones are `key_passages_view`);
        `answers_question` is the model's P(yes) that the claim states what was asked (None: not rated);
        `answers` is false for a supported claim that does not answer the question (`answers_note` says
        why), true for one that does, None where the claim is not supported or not checked.

        Free-text answers (improve, fallback) have no claims: each cited sentence stands in.
        """
        if self.claims:
            groups = [(c.text, c.support, c.answers, c.off_point, [x for x in self.citations if x.claim == i])
                      for i, c in enumerate(self.claims) if not c.quoted]
        else:
            from itertools import groupby

            groups = []
            for _, cits in groupby(sorted(self.citations, key=lambda c: c.start), key=lambda c: c.start):
                cits = list(cits)
                groups.append((self.answer[: cits[0].start].rsplit(". ", 1)[-1].strip(), cits[0].support, None, "", cits))
        return [
            {
                "text": text,
                "support": support,
                "answers_question": answers,
                "answers": (not off_point) if support == Support.SUPPORTED.value else None,
                "answers_note": off_point,
                "citations": [
                    {"paper_id": c.paper_id, "page": c.page, "printed_page": c.printed_page or str(c.page),
                     "support": c.support or c.status, "quote": c.quote}
                    for c in cits
                ],
            }
            for text, support, answers, off_point, cits in groups
        ]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ResearchResult":
        known = {f for f in cls.__dataclass_fields__}
        extra = {k: v for k, v in d.items() if k not in known}
        return cls(
            query=d["query"],
            papers=list(d.get("papers", [])),
            evidence=[Evidence.from_dict(e) for e in d.get("evidence", [])],
            answer=d.get("answer", ""),
            claims=[Claim(**c) for c in d.get("claims", [])],
            citations=[Citation(**c) for c in d.get("citations", [])],
            references=[Reference(**r) for r in d.get("references", [])],
            timings=dict(d.get("timings", {})),
            messages=list(d.get("messages", [])),
            unmentioned=list(d.get("unmentioned", [])),
            caution=d.get("caution", ""),
            withdrawn=list(d.get("withdrawn", [])),
            open_parts=list(d.get("open_parts", [])),
            mode=d.get("mode", "standard"),
            feedback=list(d.get("feedback", [])),
            extra={**dict(d.get("extra", {})), **extra},
        )
