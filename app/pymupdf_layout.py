"""Keep PyMuPDF's optional layout model from loading with PyMuPDF.

PyMuPDF 2 depends on pymupdf-layout and imports it, with its graph network model, whenever
`pymupdf` is imported: about 1.4 s of every process start (each CLI command, the window, each
worker process) and some 100 MB. The app never asks for it: tables are found by their ruling
lines and aligned text (`find_tables(use_layout=False)`, see app/core/pdf/tables/chunks.py), and
`Page.get_layout` is never called. Marking the module absent before PyMuPDF loads makes its own
`try: import pymupdf.layout` fall through, as on a PyMuPDF without the package.
"""

from __future__ import annotations

import os
import sys


def skip_layout_model() -> None:
    if "pymupdf" in sys.modules:  # a host process loaded PyMuPDF first: too late, and harmless
        return
    sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[arg-type] - None means "not installed"
    # Without the module PyMuPDF would print a suggestion to install it.
    os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")
