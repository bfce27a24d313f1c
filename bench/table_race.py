"""Writers that create a table at the same moment: rows lost, with and without the creation lock.

    nice .venv/bin/python bench/table_race.py [--trials 15] [--writers 4] [--spread 0.3]

Each trial starts a fresh library prefix on a local moto S3 server (the tests' extra) and
`--writers` processes that, after a random delay up to `--spread` s, open the content chunks
table (creating it when missing) and add one chunk of their own. Two pipelines run in the same
bench, trial for trial:

* `library` — the product's path, `Library.append_chunks` (table_creation.py's lock);
* `unlocked` — what it did before: look for the table, else `create_table(exist_ok=True)`.

It prints, for each: trials, rows lost (added without an error, then missing), writers that
failed, and trials whose table had more versions than one create and one append per writer
(a create that landed as an Overwrite of another writer's table).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import queue
import random
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DIM = 8


def _writer(mode: str, uri: str, index: int, start_at: float, spread: float, seed: int, results) -> None:
    import numpy as np

    from app.core.library.store import Library
    from app.core.library.schema import CONTENT_CHUNKS
    from app.core.records import Chunk

    random.seed(seed)
    try:
        library = Library(uri)
        while time.time() < start_at:
            time.sleep(0.005)
        time.sleep(random.random() * spread)
        chunk = Chunk(paper_id=f"p{index}", chunk_index=0, text=f"writer {index}", page=1)
        vectors = np.ones((1, DIM), dtype=np.float32)
        if mode == "unlocked":
            _unlocked_append(library, chunk, vectors)
        else:
            library.append_chunks(CONTENT_CHUNKS, [chunk], vectors)
        results.put((index, ""))
    except Exception as exc:  # noqa: BLE001 - counted and printed
        results.put((index, str(exc).splitlines()[0][:160]))


def _unlocked_append(library, chunk, vectors) -> None:
    """The path before the creation lock: check, then create with exist_ok."""
    import pyarrow as pa

    from app.core.library.schema import CONTENT_CHUNKS, chunks_schema

    db = library.db
    if CONTENT_CHUNKS in library._table_names():
        table = db.open_table(CONTENT_CHUNKS)
    else:
        table = db.create_table(CONTENT_CHUNKS, schema=chunks_schema(DIM, content=True), exist_ok=True)
    row = {"id": f"{chunk.paper_id}:content:0", "paper_id": chunk.paper_id, "chunk_index": 0,
           "source_type": "content", "section": "", "text": chunk.text, "vector": vectors[0].tolist(),
           "page": 1, "page_label": "", "char_start": 0, "char_end": 0}
    table.add(pa.Table.from_pylist([row], schema=table.schema))



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--spread", type=float, default=0.3)
    args = parser.parse_args()

    import boto3
    from moto.server import ThreadedMotoServer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1",
                      AWS_ENDPOINT_URL=url)
    os.environ.setdefault("RESEARCH_DESK_CACHE_DIR", f"/tmp/table-race-cache-{os.getpid()}")
    boto3.client("s3", endpoint_url=url).create_bucket(Bucket="table-race")

    import lancedb

    from app.core.library import storage

    context = mp.get_context("spawn")  # lancedb's runtime is not fork-safe
    totals = {mode: {"lost": 0, "failed": 0, "overwritten": 0} for mode in ("library", "unlocked")}
    for trial in range(args.trials):
        for mode in totals:
            uri = f"s3://table-race/{mode}-{trial}"
            results = context.Queue()
            start_at = time.time() + 4.0  # after every process has imported and opened the library
            procs = [context.Process(target=_writer, args=(mode, uri, i, start_at, args.spread,
                                                                   trial * 100 + i, results))
                     for i in range(args.writers)]
            for proc in procs:
                proc.start()
            reports = []  # read before joining: a child exits only once its report is read
            for proc in procs:
                try:
                    reports.append(results.get(timeout=120))
                except queue.Empty:  # a writer died without a word
                    reports.append((-1, "a writer ended without a report"))
            for proc in procs:
                proc.join()
            errors = [err for _, err in reports if err]
            options = storage.attach(uri).lance_options
            table = lancedb.connect(f"{uri}/index", storage_options=options).open_table("content_chunks")
            rows, versions = table.count_rows(), len(table.list_versions())
            added = args.writers - len(errors)
            totals[mode]["lost"] += added - rows
            totals[mode]["failed"] += len(errors)
            totals[mode]["overwritten"] += versions > 1 + added
            print(f"trial {trial:2d} {mode:9s} rows {rows}/{added} versions {versions}"
                  + (f" errors: {errors[0]}" if errors else ""), flush=True)
    print(f"\n{args.trials} trials × {args.writers} writers, random start within {args.spread} s")
    print(f"{'pipeline':10s} {'rows lost':>9s} {'writers failed':>14s} {'trials with a create as Overwrite':>34s}")
    for mode, t in totals.items():
        print(f"{mode:10s} {t['lost']:9d} {t['failed']:14d} {t['overwritten']:34d}")
    server.stop()


if __name__ == "__main__":
    main()
