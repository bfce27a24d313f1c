"""bench/library_scale.py (issue 80, item 6) runs at a tiny size, and its generated papers are what it says."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pymupdf
import pytest

from tests.support.paths import REPO

sys.path.insert(0, str(REPO / "bench"))

import scale_papers as gen  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    sentences = gen.corpus_sentences(tmp_path_factory.mktemp("sentences") / "sentences.json")
    return sentences, gen.title_words(sentences)


def test_generated_papers_are_deterministic_distinct_and_readable(corpus, tmp_path):
    sentences, vocab = corpus
    a, again = gen.make_spec(7, 1, sentences, vocab), gen.make_spec(7, 1, sentences, vocab)
    assert a == again, "the same seed and index must give the same paper"
    specs = [gen.make_spec(i, 1, sentences, vocab) for i in range(40)]
    for field in ("title", "doi"):
        assert len({getattr(s, field) for s in specs}) == 40, field
    assert len({s.year for s in specs}) > 10 and len({s.authors[0] for s in specs}) > 20
    assert any(s.table for s in specs) and not all(s.table for s in specs)
    assert {s.columns for s in specs} == {1, 2}
    path = tmp_path / "p.pdf"
    pages = gen.write_pdf(a, path)
    with pymupdf.open(path) as doc:
        text = " ".join(p.get_text() for p in doc)
        assert doc.page_count == pages and 5 <= pages <= 24  # a page budget, not an exact count
        assert doc.metadata["title"] == a.title
    words = " ".join(text.split())
    assert a.title.split(":")[0] in words and "References" in words and a.doi in words
    # The prose is the corpus's own sentences.
    assert any(s[:60] in words for s in sentences[a.topic])


@pytest.mark.slow
def test_bench_runs_tiny_and_every_check_holds(tmp_path):
    out = tmp_path / "figures.json"
    env = {**os.environ}
    env.setdefault("RESEARCH_DESK_MODELS_DIR", str(REPO.parent / "nowhere"))
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "library_scale.py"), "--papers", "30", "--sample", "3", "--embed-sample", "1",
         "--bases", "2", "--questions", "3", "--kill-seeds", "1", "--kill-papers", "3", "--kill-pages", "1",
         "--kill-window", "1", "3", "--keep", str(tmp_path / "keep"), "--json", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(out.read_text())
    words = figures["import"]["words"]
    assert words["papers"] == words["listed"] == words["found"] == 3, words
    assert figures["import"]["embedded"]["papers"] == 1
    assert figures["bulk"]["papers"] == 30 and figures["bulk"]["chunks"] > 30 * 5
    opened = figures["measure"]["open"]
    assert opened["papers"] == 30 and opened["filter_hits"] == opened["sql_filter_hits"] >= 1
    assert figures["measure"]["evidence"]["n"] == 3 and figures["measure"]["evidence"]["evidence"] > 0
    (kill,) = figures["kill"]
    assert kill["ok"], kill
    assert "extrapolated" in done.stdout and "load" in done.stdout
