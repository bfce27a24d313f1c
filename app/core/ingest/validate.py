"""`validate`: is every paper's set of files and rows present and consistent?"""

from __future__ import annotations

from dataclasses import dataclass

from ..library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library, sql_str
from ..pdf.extract import DAMAGED
from ..records import PaperStatus


@dataclass
class Check:
    paper_id: str
    ok: bool
    problems: list[str]


def validate_library(library: Library) -> list[Check]:
    papers = library.list_papers()
    content = library.chunks_table(CONTENT_CHUNKS)
    summary_counts = library.chunk_counts(SUMMARY_CHUNKS)
    checks: list[Check] = []
    for paper in papers:
        problems: list[str] = []
        if paper.status == PaperStatus.FAILED.value:
            problems.append(f"import failed: {paper.status_reason}")
        elif not paper.complete:
            problems.append(f"import incomplete (status {paper.status}); run `add` again to finish it")
        elif paper.status_reason.startswith(DAMAGED):
            # Imported in part (ingest keeps the pages read before the damage): the rest is missing.
            problems.append(f"{paper.status_reason}; import a complete copy of the file to get the lost pages")
        if not library.pdf_path(paper.id).exists():
            problems.append("PDF missing from pdfs/")
        if paper.status != PaperStatus.FAILED.value:
            if not library.text_path(paper.id).exists():
                problems.append("extracted text missing from text/")
            pages = []
            if content is not None:
                pages = (
                    content.search()
                    .where(f"paper_id = {sql_str(paper.id)}")
                    .select(["page"])
                    .limit(1_000_000)
                    .to_arrow()
                    .column("page")
                    .to_pylist()
                )
            if not pages:
                problems.append("no content chunks in the index")
            elif min(pages) < 1 or max(pages) > paper.page_count:
                problems.append(f"content chunks cite pages outside 1..{paper.page_count}")
            if summary_counts.get(paper.id, 0) == 0:
                problems.append("no summary/abstract chunks in the index")
        if paper.summarized and not library.summary_path(paper.id).exists():
            problems.append("marked summarized but summaries/ file missing")
        if library.summary_path(paper.id).exists() and not paper.summarized:
            problems.append("summary file present but not indexed; run `summarize` again")
        checks.append(Check(paper.id, not problems, problems))
    known = {p.id for p in papers}
    for pdf in sorted(library.root.joinpath("pdfs").glob("*.pdf")):
        if pdf.stem not in known:
            checks.append(Check(pdf.stem, False, ["PDF in pdfs/ with no library entry (left by an interrupted import; `add` it again or delete it)"]))
    for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
        for pid in sorted(set(library.chunk_counts(name)) - known):
            checks.append(Check(pid, False, [f"{name} rows for a paper that is not in the library"]))
    return checks
