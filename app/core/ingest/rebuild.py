"""Rebuild the index from the library's files (after an embedding model change).

The chunk tables are dropped (their vector size may change), every paper is
marked "importing", and the importer runs over pdfs/ again; it keeps each
paper's id, source name and summary. A crash half-way leaves papers marked
incomplete, and running the rebuild again finishes them.
"""

from __future__ import annotations

from dataclasses import replace

from ..events import Task
from ..library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS
from ..records import PaperStatus


def rebuild_index(desk, *, task: Task) -> int:
    library = desk.library
    for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
        library.drop_table(name)
    library.set_meta(embedding=None)
    library.upsert_papers([replace(p, status=PaperStatus.IMPORTING.value)
                           for p in library.list_papers() if p.status != PaperStatus.FAILED.value])
    report = desk.add([library.local_folder("pdfs")], task)  # a remote library fetches its PDFs first
    return report.count("added")
