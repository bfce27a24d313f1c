"""Stage 1+2 latency of the funnel on synthetic libraries of 1k, 10k and 100k content chunks.

Vectors are random unit vectors of the real dimension (384); texts are real passages from the
r-papers corpus, cycled; 30 chunks per paper and 3 summary chunks per paper, like a real
library. The query is embedded by the real MiniLM model each time (included in the figure).
Prints p50/p95 per size, the CPU time per question (all threads; on 2 cores, more than
twice the wall time means threads fighting for the cores), the same p50 in the same run
with the query embedded on every core instead of one (the behaviour before
`llamacpp.SINGLE_THREAD_TOKENS`; runs alternate question by question), and the indices each table has
(the library creates a vector index above Library.VECTOR_INDEX_MIN_ROWS rows; below that,
searches are exact, from the vectors held in memory: see app/core/table_reader.py).

    .venv/bin/python bench/scale.py [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.desk import Desk  # noqa: E402
from app.core.library import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library  # noqa: E402
from app.core.models import llamacpp  # noqa: E402
from app.core.records import Chunk, Paper  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "r-papers"
QUESTIONS = [
    "How are heteroskedasticity-consistent standard errors computed?",
    "What does the zoo package use as the index of a time series?",
    "How do I expose a C++ class to R?",
    "Which test statistics detect structural change?",
    "How are random effects estimated in linear mixed models?",
]
CHUNKS_PER_PAPER = 30


def corpus_texts(limit: int = 2000) -> list[str]:
    import pymupdf

    texts: list[str] = []
    for pdf in sorted(CORPUS.glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            for page in doc:
                for para in page.get_text().split("\n\n"):
                    if len(para) > 200:
                        texts.append(para[:1500])
        if len(texts) >= limit:
            break
    return texts


def build(root: Path, n_chunks: int, dim: int, texts: list[str], rng) -> Library:
    lib = Library(root)
    n_papers = max(1, n_chunks // CHUNKS_PER_PAPER)
    lib.upsert_papers([Paper(f"paper-{i:05d}", f"Synthetic paper {i}", ["A. Author"], "2020", "", "", "", f"p{i}.pdf",
                             CHUNKS_PER_PAPER, [], f"h{i}", "now", status="indexed") for i in range(n_papers)])
    batch = 5000
    for name, total, per in ((CONTENT_CHUNKS, n_chunks, CHUNKS_PER_PAPER), (SUMMARY_CHUNKS, n_papers * 3, 3)):
        for start in range(0, total, batch):
            rows = range(start, min(total, start + batch))
            chunks = [Chunk(f"paper-{(i // per) % n_papers:05d}", i, texts[i % len(texts)], page=1 + (i % per),
                            source_type="content" if name == CONTENT_CHUNKS else "abstract") for i in rows]
            vecs = rng.standard_normal((len(chunks), dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            lib.append_chunks(name, chunks, vecs)
    lib.finish_writes()
    return lib


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--keep", metavar="DIR", help="build the libraries in DIR and reuse them on the next run")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    texts = corpus_texts()
    p50s = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            t = time.perf_counter()
            root = Path(args.keep or tmp) / f"lib{n}"
            if args.keep and (root / "index" / f"{CONTENT_CHUNKS}.lance").is_dir():
                lib = Library(root)  # built by an earlier run
            else:
                lib = build(root, n, 384, texts, rng)
            build_s = time.perf_counter() - t
            desk = Desk(library=str(root))
            desk._library = lib
            funnel = desk.funnel(overrides={"cutoff_summaries": -1.0, "cutoff_evidence": -1.0})
            funnel.embedder.embed_one("warm up")
            funnel.run(QUESTIONS[0], evidence_only=True)  # warm caches
            lat, cpu, all_cores = [], [], []
            single = llamacpp.SINGLE_THREAD_TOKENS
            for _ in range(args.repeats):
                for q in QUESTIONS:
                    c, t = time.process_time(), time.perf_counter()
                    funnel.run(q, evidence_only=True)
                    lat.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
                    llamacpp.SINGLE_THREAD_TOKENS = 0  # baseline: every text on all threads
                    t = time.perf_counter()
                    funnel.run(q, evidence_only=True)
                    all_cores.append(time.perf_counter() - t)
                    llamacpp.SINGLE_THREAD_TOKENS = single
            lat.sort()
            p50 = statistics.median(lat) * 1000
            p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] * 1000
            p50s[n] = p50
            embed = []
            for q in QUESTIONS:  # the floor every size shares: the query embedding alone
                t = time.perf_counter()
                funnel.embedder.embed_one(q)
                embed.append(time.perf_counter() - t)
            indices = {name: [f"{i.name}:{i.index_type}" for i in lib.chunks_table(name).list_indices()] for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS)}
            print(f"{n:>7} content chunks: stage 1+2 p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
                  f"CPU {statistics.median(cpu) * 1000:6.1f} ms/question  (query embedding alone {statistics.median(embed) * 1000:.1f} ms; "
                  f"baseline with the query embedded on all cores: p50 {statistics.median(all_cores) * 1000:.1f} ms)   "
                  f"(built in {build_s:.0f} s; indices {indices})")
            desk.close()
    sizes = sorted(p50s)
    if len(sizes) >= 2:
        a, b = sizes[-2], sizes[-1]
        print(f"growth {a}→{b}: ×{p50s[b] / p50s[a]:.2f} latency for ×{b / a:.0f} data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
