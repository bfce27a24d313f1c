"""How fast the chat model writes a structured answer: grammar-first against grammar-last sampling.

llama-cpp-python runs a JSON schema's grammar over the whole vocabulary before every token;
`app/core/models/grammar_sampling.py` draws first and asks the grammar about that one token.
This writes the same claim-bound answer (the answer prompt's JSON schema, a real passage of
docs/lab/) with the stock `Llama` and with `GrammarLastLlama`, alternated, plus a free-text
reply as the floor, and prints milliseconds per written token (median of the runs) and whether
the greedy replies are identical.

    RESEARCH_DESK_MODELS_DIR=<starter models> .venv/bin/python bench/grammar_sampling.py [--runs 3] [--tokens 120]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PASSAGES = (REPO / "docs" / "lab" / "2026-11-23.md").read_text(encoding="utf-8")[2000:3200]


def write(llm, messages, tokens: int, schema: dict | None) -> tuple[float, str]:
    """(ms per written token after the first, the reply) of one greedy reply read from scratch."""
    llm.reset()
    times: list[float] = []
    pieces: list[str] = []
    extra = {"response_format": {"type": "json_object", "schema": schema}} if schema else {}
    for chunk in llm.create_chat_completion(messages=messages, max_tokens=tokens, temperature=0.0, stream=True, **extra):
        piece = chunk["choices"][0].get("delta", {}).get("content")
        if piece:
            times.append(time.perf_counter())
            pieces.append(piece)
    return 1000 * (times[-1] - times[0]) / max(1, len(times) - 1), "".join(pieces)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=120)
    args = ap.parse_args()

    import llama_cpp

    from app.core.desk import Desk
    from app.core.models.grammar_sampling import GrammarLastLlama
    from app.core.models.llamacpp import _threads
    from app.core.research.answer.claims import claims_schema

    cfg = Desk().chat_config()
    threads = _threads(cfg)
    kwargs = dict(model_path=cfg.path, n_ctx=2048, n_threads=threads, n_threads_batch=threads, verbose=False)
    models = {"grammar first (llama-cpp-python)": llama_cpp.Llama(**kwargs), "grammar last (Research Desk)": GrammarLastLlama(**kwargs)}
    messages = [{"role": "system", "content": "You answer from numbered passages and cite them."},
                {"role": "user", "content": f"[1] {PASSAGES}\n\nQuestion: How does focusing choose the sentences the "
                                            "model reads? Reply with JSON claims citing [1]."}]
    schema = claims_schema([1], min_items=1, max_items=3)
    print(f"model: {Path(cfg.path).name}, {threads} threads, {args.runs} runs of up to {args.tokens} tokens each")
    ms: dict[str, list[float]] = {name: [] for name in models}
    replies: dict[str, set[str]] = {name: set() for name in models}
    free: list[float] = []
    for run in range(args.runs):
        for name, llm in (models.items() if run % 2 == 0 else reversed(list(models.items()))):
            per_token, reply = write(llm, messages, args.tokens, schema)
            ms[name].append(per_token)
            replies[name].add(reply)
        free.append(write(models["grammar last (Research Desk)"], messages, args.tokens, None)[0])
    print("\n| sampling | ms per written token (median) | runs |\n|---|---|---|")
    for name, values in ms.items():
        print(f"| {name} | {statistics.median(values):.0f} | {', '.join(f'{v:.0f}' for v in values)} |")
    print(f"| free text, no grammar (the floor) | {statistics.median(free):.0f} | {', '.join(f'{v:.0f}' for v in free)} |")
    first, last = (replies[n] for n in models)
    print(f"\ngreedy replies identical: {first == last and len(first) == 1}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
