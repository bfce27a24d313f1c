"""Fixtures shared by the core's tests in more than one package (deep research and drafting)."""

from __future__ import annotations

import pytest

MIGRATION = [
    "Kestrels ringed in the alpine valleys left for the south in autumn, most of them in the second half of September.",
    "Young kestrels departed from the valleys several days later than the adults, which left first after the breeding season.",
    "Departure from the alpine valleys followed the first cold nights, when voles became hard to catch in the meadows.",
    "GPS loggers carried by the kestrels recorded their positions every half hour during the autumn departure.",
    "Kestrels that bred at high altitude left the valleys earlier in autumn than those breeding near the valley floor.",
    "Autumn departure dates of the kestrels varied little between years, despite large differences in the weather.",
]


@pytest.fixture(scope="module")
def wide_library(tmp_path_factory, tiny_models):
    """Eight short papers on kestrel migration: more passages than a budget can read."""
    from tests.support.library import desk_on, tiny_settings

    papers = {}
    for n in range(8):
        pages = [f"# Abstract\n\nA study of kestrel migration from alpine valleys, site {chr(65 + n)}."]
        pages += [f"# Results {k}\n\n{MIGRATION[(n + k) % len(MIGRATION)]} {MIGRATION[(n + 2 * k + 1) % len(MIGRATION)]}"
                  for k in range(4)]
        papers[f"kestrel{n}.pdf"] = (f"Kestrel Departure at Site {chr(65 + n)}", [f"Author {chr(65 + n)}"], pages)
    with desk_on(tmp_path_factory.mktemp("wide"), papers, tiny_settings(tiny_models)) as desk:
        yield desk
