"""What reading a structured reply's opening with the prompt saves before the first claim.

`app/core/models/reply_opening.py` puts the claims schema's fixed opening (`{"claims": [{"text": "`)
into the prompt instead of letting the model write it token by token. This asks the product's
llama.cpp backend for the answer's first turn (the real prompt templates, a passage of
docs/lab/, one claim) with the opening read and written, alternated, each read from an
empty cache, and prints the medians of: the wait for the first piece (reading the prompt, with
the opening where it is read), the time from there to the claim's first word (writing the
opening, where the model writes it) and their sum. Whole replies are not compared: batch and
token-by-token evaluation differ in the last bits, so greedy replies may part ways.

    RESEARCH_DESK_MODELS_DIR=<starter models> .venv/bin/python bench/reply_opening.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PASSAGE = (REPO / "docs" / "lab" / "2026-11-23.md").read_text(encoding="utf-8")[2000:2900]  # ~the first turn's 300 tokens
QUESTION = "How does focusing choose the sentences the model reads, and why windows rather than single sentences?"


def ask(chat, messages, schema) -> tuple[float, float]:
    """(s to the first piece, s from there to the claim's first word) of a reply read from an empty cache."""
    from app.core.errors import Cancelled

    chat._llm.reset()
    started, first_piece, first_word, pieces = time.perf_counter(), None, None, []

    def on_token(piece: str) -> None:
        nonlocal first_piece, first_word
        now = time.perf_counter() - started
        pieces.append(piece)
        first_piece = first_piece if first_piece is not None else now
        text = "".join(pieces)
        if first_word is None and '"text": "' in text and not text.endswith('"text": "'):
            first_word = now

    try:  # stopped at the first word: the rest of the claim is not compared
        chat.chat(messages, max_tokens=40, temperature=0.0, json_schema=schema, on_token=on_token,
                  cancelled=lambda: first_word is not None)
    except Cancelled:
        pass
    return first_piece, first_word - first_piece


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    from app.core.desk import Desk
    from app.core.models import reply_opening
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.records import Evidence
    from app.core.research.answer.claims import claims_schema
    from app.core.research.answer.prompt import claims_prompt

    cfg = Desk().chat_config()
    chat = LlamaCppChat(cfg)
    evidence = [Evidence(1, "research-desk-docs", 3, "3", "How focusing works", PASSAGE, 0.8)]
    messages = claims_prompt(QUESTION, evidence, template="synthesis_first.md")
    schema = claims_schema([1], min_items=1, max_items=1)
    opening = reply_opening.forced_opening
    variants = {"opening read with the prompt": opening, "opening written by the model": lambda schema: ""}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    print(f"model: {Path(cfg.path).name}; prompt {chat.count_tokens(chr(10).join(m['content'] for m in messages))} tokens; "
          f"{args.runs} runs each, alternated")
    try:
        for run in range(args.runs):
            for name, how in (variants.items() if run % 2 == 0 else reversed(list(variants.items()))):
                reply_opening.forced_opening = how
                results[name].append(ask(chat, messages, schema))
    finally:
        reply_opening.forced_opening = opening
        chat.close()
    print("\n| reply | reading: to the first piece | writing the opening: to the first word | first word of the claim |")
    print("|---|---|---|---|")
    for name, rows in results.items():
        reads, writes = zip(*rows)
        total = [r + w for r, w in rows]
        print(f"| {name} | {statistics.median(reads):.2f} s | {statistics.median(writes):.2f} s | "
              f"{statistics.median(total):.2f} s ({', '.join(f'{t:.1f}' for t in total)}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
