"""Search at scale: 1k to 1M content chunks, latency, recall against exact search, index cost.

Per size it prints, each timing with the machine's load (`uptime`):

* **ANN search** (`table_reader.Snapshot.nearest`, the product's unfiltered vector leg, k=10):
  p50/p95 over the query set, and recall@10 against an exact (brute-force cosine) scan of
  the same table. Below `Library.VECTOR_INDEX_MIN_ROWS` the search is exact by design.
* **Stage 1+2** of the funnel (`evidence_only`, hybrid, real MiniLM query embedding
  included): p50/p95 and CPU time per question, as before.
* **Build**: seconds to write the rows, to build the full-text index, the bitmap + vector
  index (`Library._ensure_indices`) and to compact; disk size of the table and of its indices.

The vectors are not uniform noise (on which every ANN index looks broken and nearest
neighbours mean nothing): ~800 real corpus passages are embedded by MiniLM, and each
synthetic chunk is a mix of two of them plus noise, normalised,
`v = norm(e_a + 0.5 e_b + 0.4 g)`, so the table has the topical clusters a real library has.
The queries are other real passages, embedded the same way (50 by default). A chunk's
text is passage `a`'s text, so the full-text leg finds related rows too. 30 chunks and 3
summary chunks per paper, as in a real library.

Tables are built once and kept (`--keep`, default /tmp/research-desk-scale): 1M chunks take
a long time on 2 cores. `--nprobes/--refine/--ef` compare search settings on the same
index in the same run (the table_reader constants are set per variant); `--reindex` drops
and rebuilds the vector index with the library's current parameters (build time measured).

    nice .venv/bin/python bench/scale.py --sizes 100000 1000000 [--nprobes 20 40] [--refine 1 4]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.library import table_reader  # noqa: E402
from app.core.desk import Desk  # noqa: E402
from app.core.library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library  # noqa: E402
from app.core.library.schema import chunks_schema  # noqa: E402
from app.core.records import Paper  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "r-papers"
QUESTIONS = [
    "How are heteroskedasticity-consistent standard errors computed?",
    "What does the zoo package use as the index of a time series?",
    "How do I expose a C++ class to R?",
    "Which test statistics detect structural change?",
    "How are random effects estimated in linear mixed models?",
]
CHUNKS_PER_PAPER = 30
SUMMARIES_PER_PAPER = 3
BASE_PASSAGES = 800
DIM = 384
K = 10
BATCH = 50_000


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.split("load average:")[-1].strip()


def corpus_texts(limit: int) -> list[str]:
    import pymupdf

    texts: list[str] = []
    for pdf in sorted(CORPUS.glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            for page in doc:  # windows of 600 characters: passages of a chunk's size
                text = " ".join(page.get_text().split())
                texts += [text[i:i + 600] for i in range(0, len(text) - 300, 600)]
    if len(texts) < limit:
        raise SystemExit(f"only {len(texts)} passages in {CORPUS}; {limit} needed")
    # Interleaved so that base and query passages come from every paper, not the first ones only.
    rng = np.random.default_rng(3)
    return [texts[i] for i in rng.permutation(len(texts))[:limit]]


def base_vectors(keep: Path, desk: Desk, n_queries: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Real passages, their embeddings (the cluster centres), and query embeddings (other passages)."""
    texts = corpus_texts(BASE_PASSAGES + n_queries)
    cache = keep / f"base-{len(texts)}.npy"
    if cache.exists():
        vecs = np.load(cache)
    else:
        # Embedded from their first 300 characters: MiniLM on 2 cores does ~30 short texts/s.
        vecs = desk.embedder().embed([t[:300] for t in texts]).astype(np.float32)
        np.save(cache, vecs)
    return texts[:BASE_PASSAGES], vecs[:BASE_PASSAGES], vecs[BASE_PASSAGES:]


def synthetic(rng, base: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(0, len(base), n)
    b = rng.integers(0, len(base), n)
    noise = rng.standard_normal((n, base.shape[1])).astype(np.float32) / np.sqrt(base.shape[1])
    v = base[a] + 0.5 * base[b] + 0.4 * noise
    return a, (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def build_rows(root: Path, n: int, texts: list[str], base: np.ndarray, rng) -> Library:
    """Write the papers and both chunk tables straight as Arrow batches (the rows the library writes)."""
    lib = Library(root)
    n_papers = max(1, n // CHUNKS_PER_PAPER)
    lib.upsert_papers([Paper(f"paper-{i:05d}", f"Synthetic paper {i}", ["A. Author"], "2020", "", "", "", f"p{i}.pdf",
                             CHUNKS_PER_PAPER, [], f"h{i}", "now", status="indexed") for i in range(n_papers)])
    for name, total, per in ((CONTENT_CHUNKS, n, CHUNKS_PER_PAPER), (SUMMARY_CHUNKS, n_papers * SUMMARIES_PER_PAPER, SUMMARIES_PER_PAPER)):
        content = name == CONTENT_CHUNKS
        schema = chunks_schema(DIM, content=content)

        def batches(total=total, per=per, content=content, schema=schema):
            for start in range(0, total, BATCH):
                idx = np.arange(start, min(total, start + BATCH))
                a, vecs = synthetic(rng, base, len(idx))
                source = "content" if content else "abstract"
                papers = [f"paper-{(i // per) % n_papers:05d}" for i in idx]
                cols = {
                    "id": [f"{p}:{source}:{i}" for p, i in zip(papers, idx)],
                    "paper_id": papers,
                    "chunk_index": (idx % per).astype(np.int32),
                    "source_type": [source] * len(idx),
                    "section": [""] * len(idx),
                    "text": [texts[j] for j in a],
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), DIM),
                }
                if content:
                    cols.update(page=(1 + idx % per).astype(np.int32), page_label=[""] * len(idx),
                                char_start=np.zeros(len(idx), np.int32), char_end=np.zeros(len(idx), np.int32))
                yield pa.record_batch([pa.array(cols[f.name], type=f.type) if not isinstance(cols[f.name], pa.Array)
                                       else cols[f.name] for f in schema], schema=schema)

        # One streamed write: the table starts as few large fragments, as a compacted library's is
        # (compacting 20 fragments of a 1M-row table afterwards took longer than writing them).
        lib.chunks_table(name, DIM).add(pa.RecordBatchReader.from_batches(schema, batches()))
    return lib


def build_indices(lib: Library, full_text: bool = True) -> dict[str, float]:
    """What `Library.finish_writes` does, step by step, timed (`full_text=False`: no BM25 index)."""
    from lancedb.index import FTS

    times: dict[str, float] = {}
    for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
        table = lib.chunks_table(name)
        if full_text:
            t = time.perf_counter()
            table.create_index("text", config=FTS(), replace=True)
            times[f"{name} fts"] = time.perf_counter() - t
        t = time.perf_counter()
        lib._ensure_indices(table)
        times[f"{name} bitmap+vector"] = time.perf_counter() - t
        t = time.perf_counter()
        table.optimize()
        times[f"{name} compact"] = time.perf_counter() - t
    lib.papers_table().optimize()
    return times


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def exact_top(dataset, queries: np.ndarray) -> np.ndarray:
    """Row ids of the exact top K per query (cosine; the vectors are unit length), by a full scan."""
    best_s = np.full((len(queries), K), -np.inf, dtype=np.float32)
    best_r = np.zeros((len(queries), K), dtype=np.uint64)
    for batch in dataset.to_batches(columns=["vector"], with_row_id=True, batch_size=65536):
        m = table_reader.vector_matrix(pa.Table.from_batches([batch]))
        rows = batch.column("_rowid").to_numpy()
        s = np.concatenate([best_s, queries @ m.T], axis=1)
        r = np.concatenate([best_r, np.broadcast_to(rows, (len(queries), len(rows)))], axis=1)
        top = np.argpartition(-s, K - 1, axis=1)[:, :K]
        best_s, best_r = np.take_along_axis(s, top, 1), np.take_along_axis(r, top, 1)
    return best_r


def measure_ann(snap, queries: np.ndarray, truth: np.ndarray, repeats: int) -> tuple[float, float, float, float]:
    """p50 and p95 ms, mean recall@K, and the median CPU ms (all threads: on a busy machine
    the wall time is mostly waiting for a core, the CPU time is what the search costs)."""
    lat, recall, cpu = [], [], []
    snap.nearest(queries[0], K)  # warm: index files into the page cache
    for _ in range(repeats):
        for q, want in zip(queries, truth):
            c, t = time.process_time(), time.perf_counter()
            hits = snap.nearest(q, K)
            lat.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            recall.append(len(set(hits.column("_rowid").to_pylist()) & set(want.tolist())) / K)
    lat.sort()
    return (statistics.median(lat) * 1000, lat[min(len(lat) - 1, int(0.95 * len(lat)))] * 1000, float(np.mean(recall)),
            statistics.median(cpu) * 1000)


def measure_funnel(desk: Desk, repeats: int) -> tuple[float, float, float]:
    funnel = desk.funnel(overrides={"cutoff_summaries": -1.0, "cutoff_evidence": -1.0})
    funnel.run(QUESTIONS[0], evidence_only=True)  # warm caches
    lat, cpu = [], []
    for _ in range(repeats):
        for q in QUESTIONS:
            c, t = time.process_time(), time.perf_counter()
            funnel.run(q, evidence_only=True)
            lat.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    lat.sort()
    return statistics.median(lat) * 1000, lat[min(len(lat) - 1, int(0.95 * len(lat)))] * 1000, statistics.median(cpu) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--repeats", type=int, default=3, help="passes over the query set")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--keep", default="/tmp/research-desk-scale", help="where the tables are built and kept")
    ap.add_argument("--nprobes", type=int, nargs="+", default=[table_reader.ANN_NPROBES])
    ap.add_argument("--refine", type=int, nargs="+", default=[table_reader.ANN_REFINE])
    ap.add_argument("--ef", type=int, nargs="+", default=[table_reader.ANN_EF])
    ap.add_argument("--reindex", action="store_true", help="drop and rebuild the vector indices (timed)")
    ap.add_argument("--no-funnel", action="store_true", help="only the ANN search figures")
    ap.add_argument("--vector-only", action="store_true",
                    help="no full-text index and no funnel figures: the vector side alone (1M rows on 2 cores)")
    args = ap.parse_args()
    keep = Path(args.keep)
    keep.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    desk0 = Desk(library=str(keep / "embed-only"))
    texts, base, queries = base_vectors(keep, desk0, args.queries)
    desk0.close()
    print(f"{len(base)} base passages, {len(queries)} query passages; load {load()}")
    for n in args.sizes:
        root = keep / f"lib{n}"
        record_file = root / "build.json"
        record = json.loads(record_file.read_text()) if record_file.exists() else {}
        if "rows_s" not in record:
            t = time.perf_counter()
            build_rows(root, n, texts, base, rng)
            record = {"rows_s": time.perf_counter() - t, "rows_load": load()}
            record_file.write_text(json.dumps(record))
        lib = Library(root)
        if args.reindex:
            for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
                table = lib.chunks_table(name)
                if any(i.columns == ["vector"] for i in table.list_indices()):
                    table.drop_index(next(i.name for i in table.list_indices() if i.columns == ["vector"]))
            record.pop("index_s", None)
        if "index_s" not in record:
            record["index_s"] = build_indices(lib, full_text=not args.vector_only)
            record["index_load"] = load()
            record_file.write_text(json.dumps(record))
        content = lib.chunks_table(CONTENT_CHUNKS)
        table_dir = root / "index" / f"{CONTENT_CHUNKS}.lance"
        print(f"\n== {n:,} content chunks ({content.count_rows():,} rows; summary chunks {lib.chunks_table(SUMMARY_CHUNKS).count_rows():,})")
        print(f"   rows written in {record['rows_s']:.0f} s (load {record['rows_load']}); indices "
              + ", ".join(f"{k} {v:.1f} s" for k, v in record["index_s"].items()) + f" (load {record['index_load']})")
        print(f"   disk: content table {du(table_dir) / 2**20:,.0f} MiB, of which indices {du(table_dir / '_indices') / 2**20:,.0f} MiB; "
              f"indices {[f'{i.name}:{i.index_type}' for i in content.list_indices()]}")
        snap = table_reader.snapshot(content)
        truth_file = root / f"exact-{len(queries)}.npy"
        if truth_file.exists():
            truth = np.load(truth_file)
        else:
            truth = exact_top(snap.dataset, queries)
            np.save(truth_file, truth)
        saved = (table_reader.ANN_NPROBES, table_reader.ANN_REFINE, table_reader.ANN_EF)
        for nprobes, refine, ef in itertools.product(args.nprobes, args.refine, args.ef):
            table_reader.ANN_NPROBES, table_reader.ANN_REFINE, table_reader.ANN_EF = nprobes, refine, ef
            p50, p95, recall, cpu = measure_ann(table_reader.snapshot(content), queries, truth, args.repeats)
            print(f"   ANN k={K} nprobes={nprobes:<3} refine={refine} ef={ef}×k: p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
                  f"CPU {cpu:5.1f} ms  recall@10 {recall:.3f}   (load {load()})")
        table_reader.ANN_NPROBES, table_reader.ANN_REFINE, table_reader.ANN_EF = saved
        if not args.no_funnel and not args.vector_only:
            desk = Desk(library=str(root))
            desk._library = lib
            p50, p95, cpu = measure_funnel(desk, args.repeats)
            print(f"   stage 1+2 (query embedding included): p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  CPU {cpu:.0f} ms/question  (load {load()})")
            desk.close()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("RESEARCH_DESK_MODELS_DIR", "/tmp/mdl/starter")
    sys.exit(main())
