"""How llama.cpp's OpenMP workers should wait: chat and embedding speed per wait policy.

`app/core/models/llamacpp.py` sets OMP_WAIT_POLICY=PASSIVE with GOMP_SPINCOUNT=1000
(a brief spin, then sleep). This runs the configured chat and embedding models in a
fresh process per policy (libgomp reads the setting once, at load), on an idle machine
and beside one busy loop (another program taking a core), and prints prompt reading
and answer writing speed (tokens/s) and chunk embedding speed (chunks/s).

    .venv/bin/python bench/wait_policy.py [--spins 0 1000 10000] [--tokens 48]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TEXT = (REPO / "docs" / "lab" / "2026-11-23.md").read_text(encoding="utf-8")


def child(tokens: int) -> dict:
    from app.core.desk import Desk
    from app.core.models.factory import make_chat, make_embedding

    desk = Desk()
    chat = make_chat(desk.chat_config())
    embedder = make_embedding(desk.embedding_config())
    prompt = TEXT[:1000]
    chunk = TEXT[:1500]
    embedder.embed_one(chunk)  # warm up
    chat.chat([{"role": "user", "content": "Say hello."}], max_tokens=4, temperature=0.0)
    out: dict[str, float] = {}
    read, write = [], []
    for run in range(2):
        times: list[float] = []
        start = time.perf_counter()
        # A different first line each time, so no prompt prefix is reused from a cache.
        chat.chat([{"role": "user", "content": f"Run {run} at {time.time()}.\n{prompt}\n\nSummarise the text above in detail."}],
                  max_tokens=tokens, temperature=0.0, on_token=lambda _t: times.append(time.perf_counter()))
        read.append(chat.count_tokens(prompt) / (times[0] - start))
        write.append((len(times) - 1) / (times[-1] - times[0]))
    out["read_tok_s"], out["write_tok_s"] = max(read), max(write)
    start = time.perf_counter()
    for _ in range(5):
        embedder.embed_one(chunk)
    out["embed_chunks_s"] = 5 / (time.perf_counter() - start)
    out["chat_model"] = Path(desk.chat_config().path).name
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spins", type=int, nargs="+", default=[0, 1000, 10000], help="GOMP_SPINCOUNT values (0: passive)")
    ap.add_argument("--tokens", type=int, default=48, help="tokens written per answer")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.tokens)))
        return 0
    print(f"{'GOMP_SPINCOUNT':>14} {'machine':>10} {'read tok/s':>11} {'write tok/s':>12} {'embed chunks/s':>15}")
    for busy in (False, True):
        for spins in args.spins:
            env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": str(spins)}
            load = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
            try:
                done = subprocess.run([sys.executable, __file__, "--child", "--tokens", str(args.tokens)],
                                      env=env, capture_output=True, text=True, check=True)
            finally:
                if load is not None:
                    load.kill()
                    load.wait()
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{spins:>14} {'busy core' if busy else 'idle':>10} {r['read_tok_s']:>11.1f} {r['write_tok_s']:>12.1f} "
                  f"{r['embed_chunks_s']:>15.1f}   ({r['chat_model']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
