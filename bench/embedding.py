"""Embedding throughput: the app's one-text-per-call MiniLM against the alternatives, in one run.

Embeds the same real chunk texts (a library's `content_chunks`, e.g. the r-papers bench library)
with each way and prints, per way, wall-clock chunks/s, chunks per CPU-second (the process's CPU
time, all threads: on a shared machine the steadier figure) and the lowest cosine of its vectors
against the app's. Ways:

- `app`: `LlamaCppEmbedding` as the import runs it (one text per llama_decode, all threads);
- `pack:N`: N texts in one llama_decode, a sequence id each, pooled per sequence;
- `split:N`: N contexts of one thread each, the texts dealt between them (Python threads: llama_decode
  releases the GIL);
- any of them on another GGUF: `q8_0/app`, `q8_0/pack:4` (the file beside the f16 one).

The ways run in turn, `--rounds` times, so that a change of load hits them all; medians are printed.

    .venv/bin/python bench/embedding.py --library /tmp/rlib --chunks 60 --ways app,pack:4,split:2,q8_0/app
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.library.store import CONTENT_CHUNKS  # noqa: E402
from app.core.models import provision  # noqa: E402
from app.core.models.base import l2_normalise  # noqa: E402
from app.core.models.llamacpp_embedding import LlamaCppEmbedding  # noqa: E402
from app.core.settings import ModelConfig  # noqa: E402


def chunk_texts(library: str, n: int, seed: int) -> list[str]:
    """`n` content chunks of the library, drawn at random (read only)."""
    import lancedb

    table = lancedb.connect(str(Path(library) / "index")).open_table(CONTENT_CHUNKS)
    texts = table.to_arrow().column("text").to_pylist()
    random.Random(seed).shuffle(texts)
    return texts[:n]


class Raw:
    """Bare llama.cpp contexts for the ways the app does not take (packing, one context per thread)."""

    def __init__(self, path: Path, n_seq: int, n_ctx: int, threads: int) -> None:
        import llama_cpp

        self.n_seq = n_seq
        self.inline = False
        tokens = 512 * n_seq
        self.llms = [
            llama_cpp.Llama(model_path=str(path), embedding=True, n_ctx=tokens, n_batch=tokens, n_ubatch=tokens,
                            n_threads=threads, n_threads_batch=threads, verbose=False)
            for _ in range(n_ctx)
        ]
        self.dim = self.llms[0].n_embd()

    def tokens(self, text: str) -> list[int]:
        tokens = self.llms[0].tokenize(text.encode("utf-8"), add_bos=True, special=False)
        return tokens[:511] + tokens[-1:] if len(tokens) > 512 else tokens

    def embed(self, texts: list[str]) -> np.ndarray:
        import llama_cpp

        toks = [self.tokens(t) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)

        def work(k: int) -> None:
            llm = self.llms[k]
            rows = list(range(k * self.n_seq, len(toks), self.n_seq * len(self.llms)))
            for start in rows:
                group = range(start, min(start + self.n_seq, len(toks)))
                llm._batch.reset()
                for seq, row in enumerate(group):
                    llm._batch.add_sequence(toks[row], seq, True)
                llm._ctx.kv_cache_clear()
                llm._ctx.decode(llm._batch)
                for seq, row in enumerate(group):
                    ptr = llama_cpp.llama_get_embeddings_seq(llm._ctx.ctx, seq)
                    out[row] = np.ctypeslib.as_array(ptr, shape=(self.dim,))

        if len(self.llms) == 1 and self.inline:
            work(0)
            return l2_normalise(out)
        workers = [threading.Thread(target=work, args=(k,)) for k in range(len(self.llms))]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return l2_normalise(out)

    def close(self) -> None:
        for llm in self.llms:
            llm.close()


class InThread:
    """Runs another way's embed on a fresh Python thread (`way@thread`)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def embed(self, texts: list[str]) -> np.ndarray:
        box: list[np.ndarray] = []
        worker = threading.Thread(target=lambda: box.append(self.inner.embed(texts)))
        worker.start()
        worker.join()
        return box[0]

    def close(self) -> None:
        self.inner.close()


def make(way: str, f16: Path, threads: int):
    way, _, where = way.partition("@")
    if where == "thread":
        return InThread(make(way, f16, threads))
    if where == "main":
        raw = make(way, f16, threads)
        raw.inline = True
        return raw
    model, _, kind = way.rpartition("/")
    path = f16.with_name(f16.name.replace("f16", model)) if model else f16
    name, _, n = kind.partition(":")
    if name == "app":
        return LlamaCppEmbedding(ModelConfig(path=str(path), context_length=512, threads=threads))
    if name == "pack":
        return Raw(path, int(n), 1, threads)
    if name == "split":
        return Raw(path, 1, int(n), 1)
    raise SystemExit(f"unknown way: {way}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", default="/tmp/rlib", help="a library whose content chunks are embedded (read only)")
    ap.add_argument("--model", default="all-minilm-l6-v2-f16", help="catalog id or GGUF path of the f16 model")
    ap.add_argument("--chunks", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="threads of the app way and of pack (0: all cores)")
    ap.add_argument("--ways", default="app,pack:4,split:2,q8_0/app")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    f16 = Path(args.model) if Path(args.model).exists() else provision.require(args.model)
    texts = chunk_texts(args.library, args.chunks, args.seed)
    ways = args.ways.split(",")
    models = {w: make(w, f16, args.threads) for w in ways}
    for m in models.values():
        m.embed(texts[:2])  # warm up
    wall: dict[str, list[float]] = {w: [] for w in ways}
    cpu: dict[str, list[float]] = {w: [] for w in ways}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for w in ways:
            t, c = time.perf_counter(), time.process_time()
            vectors[w] = models[w].embed(texts)
            wall[w].append(len(texts) / (time.perf_counter() - t))
            cpu[w].append(len(texts) / (time.process_time() - c))
    for m in models.values():
        m.close()

    base = ways[0]
    print(f"{len(texts)} chunks of {args.library}, {args.rounds} rounds, model {f16.name}")
    for w in ways:
        ww, cc = statistics.median(wall[w]), statistics.median(cpu[w])
        cos = float((vectors[w] * vectors[base]).sum(axis=1).min())
        print(f"{w:>14}: {ww:6.2f} chunks/s ({ww / statistics.median(wall[base]):.2f}×)   "
              f"{cc:6.2f} chunks per CPU-s ({cc / statistics.median(cpu[base]):.2f}×)   min cosine vs {base} {cos:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
