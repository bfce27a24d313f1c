"""Import throughput and memory against raw llama.cpp embedding throughput, in one run.

Imports ../shared/corpus/r-papers into a temporary library with the starter embedding model,
prints pages/s, chunks/s and peak RSS; then embeds the very same chunk texts with the same
model directly (no extraction, no LanceDB) and prints that throughput and the ratio.
Target: import ≥ 0.85 × raw embedding throughput, peak RSS < 1.5 GB.

Also prints when each paper was reported added (listed and word-searchable: its `PaperImported`
event) and when it was embedded (its `PaperUpdated` event with status "indexed"; an importer
without a vectors phase embeds before it reports a paper added, so there the two are one time):
the last paper's word-searchable time as a share of the whole import (issue 80's target: ≤ 35 %
for a 12-paper import) and the pages made searchable per second (target ≥ 20).

    .venv/bin/python bench/ingest.py [--model all-minilm-l6-v2-f16|all-minilm-l6-v2-q8_0|PATH]
                                     [--corpus FOLDER] [--skip-raw]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.desk import Desk  # noqa: E402
from app.core.events import PaperImported, PaperUpdated, Task  # noqa: E402
from app.core.library.store import CONTENT_CHUNKS  # noqa: E402
from app.core.models import provision  # noqa: E402
from app.core.settings import ModelConfig, Settings  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "r-papers"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="all-minilm-l6-v2-f16", help="catalog id or GGUF path")
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--skip-raw", action="store_true", help="no raw-embedding comparison (half the time)")
    args = ap.parse_args()

    path = Path(args.model)
    if not path.exists():
        path = provision.require(args.model)
    settings = Settings(embedding=ModelConfig(path=str(path), context_length=512, threads=args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        desk = Desk(settings, library=str(Path(tmp) / "lib"))
        embedder = desk.embedder()
        embedder.embed(["warm up the model"])
        added_at: list[float] = []
        words_at: dict[str, float] = {}  # paper id → seconds until listed and word-searchable
        embedded_at: dict[str, float] = {}  # paper id → seconds until its vectors were written

        def record(event: object) -> None:
            if isinstance(event, PaperImported) and event.outcome.status == "added":
                added_at.append(time.perf_counter() - t)
                words_at[event.outcome.paper_id] = added_at[-1]
            elif isinstance(event, PaperUpdated) and event.paper is not None and event.paper.status == "indexed":
                embedded_at[event.paper.id] = time.perf_counter() - t

        t = time.perf_counter()
        report = desk.add([args.corpus], task=Task(sink=record))
        ingest_s = time.perf_counter() - t
        rss_after_import = peak_rss_mb()

        texts = desk.library.chunks_table(CONTENT_CHUNKS).to_arrow().column("text").to_pylist()
        names = {p.id: p.source_file for p in desk.library.list_papers()}
        batch = settings.ingest.batch_size
        t = time.perf_counter()
        if not args.skip_raw:
            for i in range(0, len(texts), batch):
                embedder.embed(texts[i : i + batch])
        raw_s = time.perf_counter() - t
        desk.close()

    n_chunks = len(texts)
    print(f"model: {path.name}")
    print(f"import: {report.count('added')} papers added, {report.count('failed')} failed, "
          f"{report.pages} pages, {report.chunks} chunks in {ingest_s:.1f} s")
    print(f"import throughput: {report.pages / ingest_s:.2f} pages/s, {report.chunks / ingest_s:.2f} chunks/s")
    if not args.skip_raw:
        print(f"raw embedding of the same {n_chunks} chunk texts (batch {batch}): {raw_s:.1f} s, {n_chunks / raw_s:.2f} chunks/s")
        print(f"ratio import/raw: {(report.chunks / ingest_s) / (n_chunks / raw_s):.2f} (target ≥ 0.85)")
    print("per paper, seconds from the start: word-searchable / embedded")
    for pid, at in words_at.items():
        print(f"  {names.get(pid, pid):28s} {at:7.1f} / {embedded_at.get(pid, at):7.1f}")
    if embedded_at or words_at:
        print(f"all embedded at {max([*embedded_at.values(), *words_at.values()]):.1f} s")
    if added_at:
        print(f"searchable (reported added): first paper at {added_at[0]:.1f} s, last at {added_at[-1]:.1f} s "
              f"= {added_at[-1] / ingest_s:.0%} of the import (target ≤ 35 %); "
              f"{report.pages / added_at[-1]:.1f} pages/s searchable (target ≥ 20)")
    print(f"peak RSS: {rss_after_import:.0f} MB during import (target < 1500 MB)")
    for o in report.outcomes:
        if o.status == "failed":
            print(f"  failed: {o.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
