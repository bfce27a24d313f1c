"""What sharing hands on from stage to stage: the answer as shared, each citation with its
quoted sentences and paper, a page crop with its highlight boxes, a verification's findings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

Rect = tuple[float, float, float, float]  # PDF points, the page as displayed (top left origin)

CLAIM = "claim"  # a sentence the model wrote
KEY_PASSAGE = "key passage"  # a sentence of a paper quoted beneath the answer, as evidence


@dataclass
class QuotedSentence:
    """One sentence of a quote (a table row, for a table), with its span in the page's text."""

    text: str
    char_start: int = -1  # in the page's markdown (the library's text/<paper_id>.md, that page); -1: unknown
    char_end: int = -1


@dataclass
class SharedPaper:
    """A cited paper as the page and the manifest name it: its reference and its file's hash."""

    paper_id: str
    reference: int | None  # number in the answer's References
    title: str
    authors: list[str]
    published: str
    doi: str = ""
    arxiv_id: str = ""
    venue: str = ""
    sha256: str = ""  # of the PDF file as the library holds it ("" where the library no longer has it)
    file_name: str = ""  # the file it was imported from
    page_labels: list[str] = field(default_factory=list)
    pdf: Path | None = None  # the library's copy, where it is there to read (never written)

    def printed(self, page: int) -> str:
        """The page number printed on PDF page `page`, where the PDF defines one that differs."""
        label = self.page_labels[page - 1] if 0 < page <= len(self.page_labels) else ""
        return label if label and label != str(page) else ""

    def manifest(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("pdf")
        d.pop("page_labels")
        return d


@dataclass
class SharedCitation:
    """One citation of the answer: the claim (or key passage) and the sentences of its page it rests on."""

    number: int  # 1-based, in the answer's order: the page's [n] and verify's "citation n"
    kind: str  # CLAIM | KEY_PASSAGE
    claim: str  # the claim's text (a key passage: the quoted sentence)
    paper_id: str
    page: int  # 1-based PDF page
    printed_page: str  # "" where the page prints no other number
    quote: str  # the cited sentences as the paper has them ("" where the citation names no passage)
    sentences: list[QuotedSentence] = field(default_factory=list)
    verdict: str = ""  # the support check's: supported | partial | unsupported ("" unchecked)
    status: str = ""  # the citation check's (CitationStatus): verified, page-mismatch, not-in-evidence, …
    note: str = ""
    card: int = 0  # the evidence card that shows its page (the citations of one page share one)

    @property
    def char_span(self) -> tuple[int, int]:
        known = [s for s in self.sentences if s.char_start >= 0]
        return (min(s.char_start for s in known), max(s.char_end for s in known)) if known else (-1, -1)


@dataclass
class SharedClaim:
    """A sentence of the answer as the page shows it, with the citations it carries."""

    text: str
    kind: str  # CLAIM | KEY_PASSAGE
    verdict: str  # "" where it was not checked
    citations: list[int] = field(default_factory=list)  # SharedCitation numbers


@dataclass
class SharedAnswer:
    """An answer ready to share: what it says, what it rests on and how it was made."""

    question: str
    asked_at: str  # ISO 8601
    mode: str
    answer: str  # the answer's markdown, citations as the model wrote them
    claims: list[SharedClaim]  # empty for a free-text answer (improve, fallback)
    citations: list[SharedCitation]
    papers: list[SharedPaper]  # the References, in their order
    model: str
    judge: str
    settings: dict[str, Any]
    settings_recorded: bool  # False: the settings at export time (the answer predates recording them)
    scope: str = "all papers"
    history: int | None = None  # its number in the library's history
    caution: str = ""
    withdrawn: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    citation_spans: list[tuple[int, int]] = field(default_factory=list)  # of each citation's tag in `answer`

    def paper(self, paper_id: str) -> SharedPaper | None:
        return next((p for p in self.papers if p.paper_id == paper_id), None)

    def counts(self) -> dict[str, int]:
        mine = [c for c in self.claims if c.kind == CLAIM]
        return {"claims": len(mine), **{v: sum(c.verdict == v for c in mine) for v in ("supported", "partial", "unsupported")},
                "key_passages": len(self.claims) - len(mine)}


@dataclass
class Crop:
    """A band of a PDF page as a PNG, with the boxes of the cited sentences on it."""

    paper_id: str
    page: int
    png: bytes
    clip: Rect  # the band, in points of the page as displayed
    boxes: list[list[Rect]]  # per quoted sentence, one rectangle a line, in the same points
    width_px: int
    height_px: int

    @property
    def found(self) -> bool:
        return any(self.boxes)

    def relative(self, r: Rect) -> tuple[float, float, float, float]:
        """(left, top, width, height) of `r` in percent of the crop, as the page places a box."""
        x0, y0, x1, y1 = self.clip
        w, h = x1 - x0, y1 - y0
        return (100 * (r[0] - x0) / w, 100 * (r[1] - y0) / h, 100 * (r[2] - r[0]) / w, 100 * (r[3] - r[1]) / h)


@dataclass
class EvidenceCard:
    """A cited page on the shared page: its crop, the cited sentences on it and the citations resting on each."""

    number: int
    paper_id: str
    page: int
    printed_page: str
    citations: list[int]  # SharedCitation numbers, in the answer's order
    sentences: list[QuotedSentence] = field(default_factory=list)  # each cited sentence of the page once
    cited_by: list[list[int]] = field(default_factory=list)  # per sentence: the citations that quote it
    crop: Crop | None = None
    missing: str = ""  # why there is no crop, or why it shows the whole page


@dataclass
class Finding:
    """Whether one citation's quote stands on its page of the PDF with its hash."""

    citation: int
    paper_id: str
    page: int
    ok: bool
    message: str
    skipped: bool = False  # a citation that names no passage: nothing to check

    def line(self) -> str:
        mark = "–" if self.skipped else ("✓" if self.ok else "✗")
        return f"{mark} citation {self.citation} ({self.paper_id}, page {self.page}): {self.message}"


@dataclass
class VerifyReport:
    """`verify BUNDLE`: a finding per citation and one about the page itself."""

    bundle: str
    question: str
    findings: list[Finding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # about the bundle as a whole (its page changed, …)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and all(f.ok or f.skipped for f in self.findings)

    @property
    def failed(self) -> list[Finding]:
        return [f for f in self.findings if not (f.ok or f.skipped)]

    def lines(self) -> list[str]:
        checked = [f for f in self.findings if not f.skipped]
        held = sum(f.ok for f in checked)
        out = [f.line() for f in self.findings] + [f"✗ {p}" for p in self.problems]
        out.append(f"{held} of {len(checked)} quote{'s' if len(checked) != 1 else ''} stand on their pages"
                   + ("" if self.ok else "; the bundle does not verify"))
        return out
