"""Bibliographic metadata read from a PDF's first pages (layout first, PDF metadata as a check).

Modules: `layout` (positioned lines with font statistics), `title`, `authors`, `abstract`,
`dates`, `identifiers` (DOI, arXiv), `venue`, and `reconcile`, which weighs the page against
the PDF's info dictionary and marks unsure fields.
"""

from __future__ import annotations

import pymupdf

from ...records import PaperMeta
from .reconcile import read


def extract_meta(doc: pymupdf.Document, filename: str) -> PaperMeta:
    """Title, authors, date, abstract, DOI, arXiv ID and venue, with the unsure fields named."""
    return read(doc, filename)


__all__ = ["extract_meta"]
