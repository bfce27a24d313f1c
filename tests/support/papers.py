"""Small papers the tests build and the records that stand for them."""

from __future__ import annotations

from app.core.records import Paper

# Two small papers whose facts sit on known pages: (title, authors, pages) by file name
# (the `fact_pdfs` and `fact_library` fixtures build them).
FACT_PAPERS = {
    "kestrel.pdf": (
        "Kestrel Migration Timing in Alpine Valleys",
        ["Maria Lindqvist", "Tomas Berg"],
        [
            "# Abstract\n\nWe study when kestrels leave alpine valleys in autumn using ten years of ringing data.",
            "# Methods\n\nBirds were fitted with 4 gram GPS loggers. The loggers recorded a position every 30 minutes.",
            "# Results\n\nThe median departure date was 14 September. Young birds departed 9 days later than adults.",
        ],
    ),
    "glacier.pdf": (
        "Glacier Retreat Measured by Drone Photogrammetry",
        ["Anil Gupta"],
        [
            "# Abstract\n\nDrone photogrammetry measures glacier retreat at centimetre accuracy.",
            "# Method\n\nWe flew a quadcopter at 120 metres altitude and processed images with structure from motion.",
            "# Findings\n\nThe glacier front retreated 38 metres per year between 2015 and 2021.",
        ],
    ),
}


def paper(pid: str = "p1", title: str = "T", **fields) -> Paper:
    """A Paper record as the library lists an imported one; any field can be given by name."""
    record = {"authors": ["A. Author"], "published": "2020", "abstract": "", "doi": "", "arxiv_id": "",
              "source_file": "f.pdf", "page_count": 1, "page_labels": ["1"], "content_hash": "h" + pid,
              "imported_at": "", "status": "indexed", **fields}
    return Paper(id=pid, title=title, **record)
