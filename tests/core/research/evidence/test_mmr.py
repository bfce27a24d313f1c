"""MMR (research/evidence/mmr.py) and stage 2's page groups it diversifies over."""

from __future__ import annotations

import numpy as np

from app.core.research.evidence.mmr import mmr, scale01


def test_mmr_lambda_one_is_relevance_order():
    rel = np.array([0.2, 0.9, 0.5])
    vecs = np.eye(3)
    assert mmr(rel, vecs, 3, 1.0) == [1, 2, 0]


def test_mmr_skips_near_duplicates():
    # 0 and 1 are the same passage; 2 is different and a bit less relevant.
    vecs = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    rel = np.array([1.0, 0.99, 0.8])
    assert mmr(rel, vecs, 2, 0.5) == [0, 2]
    assert mmr(rel, vecs, 2, 0.95) == [0, 1]


def test_mmr_puts_another_pages_chunk_before_a_second_chunk_of_the_same_page():
    # 0 and 1 are two chunks of one page (their text differs); 2 is another page, a little less relevant.
    vecs = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    rel = np.array([1.0, 0.95, 0.9])
    pages = [("p", 4), ("p", 4), ("p", 7)]
    assert mmr(rel, vecs, 3, 0.75) == [0, 1, 2]
    assert mmr(rel, vecs, 3, 0.75, pages, 1.5) == [0, 2, 1]
    assert mmr(np.array([1.0, 0.95, 0.1]), vecs, 3, 0.75, pages, 1.5) == [0, 1, 2]  # unless far more relevant


def test_stage_two_groups_a_pages_text_chunks_but_never_a_tables_units():
    from app.core.research.evidence.retrieval import Candidate, page_groups

    def found(page, source_type="content"):
        return Candidate("p", np.zeros(2), 0.5, 0.5, 0, page=page, source_type=source_type)

    groups = page_groups([found(4), found(4), found(4, "table_row"), found(4, "table_row"), found(4, "table"), found(7)])
    assert groups[0] == groups[1] != groups[5]
    assert len({repr(g) for g in groups[2:5]} | {repr(groups[0])}) == 4  # each unit its own, none the page's


def test_mmr_edge_cases():
    assert mmr(np.array([]), np.zeros((0, 2)), 5, 0.5) == []
    assert mmr(np.array([0.3]), np.ones((1, 2)), 5, 0.5) == [0]
    assert list(scale01(np.array([2.0, 2.0]))) == [1.0, 1.0]
