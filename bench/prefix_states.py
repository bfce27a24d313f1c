"""A fresh process's first token with and without the saved prompt states (models/prefix_store.py).

Each try is a fresh Python process that loads the chat model, reads ahead the beginnings an
answer reads ahead (the answer prompt's, the quote rating's and the check's, as `Funnel.load_chat`,
key_sentences.py and support.py do) and asks one answer-shaped prompt: the time from the
process's start to its first token, and the reply, with the states loaded from disk against
read anew. The two alternate; the replies must be the same.

    nice -n 10 .venv/bin/python bench/prefix_states.py [--chat GGUF] [--tries 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
started = time.monotonic()
sys.path.insert(0, sys.argv[1])
from app.core.models.llamacpp import LlamaCppChat
from app.core.paths import load_prompt
from app.core.research.answer.prompt import answer_beginning, first_turn_beginning
from app.core.research.check.support import judge_beginning
from app.core.settings import ModelConfig, ResearchParams

chat = LlamaCppChat(ModelConfig(path=sys.argv[2], threads=int(sys.argv[3])))
loaded = time.monotonic() - started
params = ResearchParams()
template, fields, earlier = first_turn_beginning(chat, params)
beginning = answer_beginning(template, fields, earlier=earlier)
read = chat.prefill(beginning) + chat.prefill(judge_beginning())
prompt = beginning[:-1] + [{"role": "user", "content": beginning[-1]["content"]
          + "\n\nQuestion: how long after the adults did the young birds leave?\n\n[1] Young birds departed 9 days later than adults."}]
first = []
reply = chat.chat(prompt, max_tokens=12, temperature=0.0, on_token=lambda t: first or first.append(time.monotonic() - started))
print(json.dumps({"load_s": loaded, "first_token_s": first[0] if first else None, "read": read, "reply": reply}))
chat.close()
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chat", type=Path, default=Path(os.environ.get("RESEARCH_DESK_MODELS_DIR", "")) / "smollm2-135m-instruct-q4_1.gguf")
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    states = tempfile.mkdtemp(prefix="prefix-states-bench-")
    print(f"chat model: {args.chat.name}; load: {os.getloadavg()[0]:.2f}")

    def child(folder: str) -> dict:
        out = subprocess.run([sys.executable, "-c", CHILD, str(REPO), str(args.chat), str(args.threads)], capture_output=True,
                             text=True, env={**os.environ, "RESEARCH_DESK_PREFIX_STATES_DIR": folder}, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    first_save = child(states)  # the first process ever: reads and saves
    print(f"first process (saves): first token {first_save['first_token_s']:.2f} s, {first_save['read']} tokens read ahead")
    rows: dict[str, list[dict]] = {"loaded": [], "read": []}
    for n in range(args.tries):
        for name in (("loaded", "read") if n % 2 == 0 else ("read", "loaded")):
            rows[name].append(child(states if name == "loaded" else ""))
    for name, got in rows.items():
        firsts = [r["first_token_s"] for r in got]
        print(f"{name:>7}: first token p50 {statistics.median(firsts):.2f} s (load {statistics.median(r['load_s'] for r in got):.2f} s), "
              f"tokens read ahead {got[0]['read']}")
    same = {r["reply"] for r in rows["loaded"] + rows["read"] + [first_save]}
    print(f"replies the same: {len(same) == 1} ({sorted(same)[0]!r})")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
