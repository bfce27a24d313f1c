"""Rebuild the index from the library's files (after an embedding model change).

The chunk tables are dropped (their vector size may change), every paper is
marked "importing", and the importer runs over pdfs/ again; it keeps each
paper's id, source name and summary. A crash half-way leaves papers marked
incomplete, and running the rebuild again finishes them.
"""

from __future__ import annotations

from .callbacks import IsCancelled, Progress
from .library import CONTENT_CHUNKS, SUMMARY_CHUNKS
from .records import PaperStatus


def rebuild_index(desk, *, progress: Progress | None = None, cancelled: IsCancelled | None = None) -> int:
    library = desk.library
    for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
        if name in library._table_names():
            library.db.drop_table(name)
    library.set_meta(embedding=None)
    papers = library.list_papers()
    for paper in papers:
        if paper.status != PaperStatus.FAILED.value:
            paper.status = PaperStatus.IMPORTING.value
            library.upsert_paper(paper)
    report = desk.add([library.root / "pdfs"], progress=progress, cancelled=cancelled)
    return report.count("added")
