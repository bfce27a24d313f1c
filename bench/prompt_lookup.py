"""What prompt-lookup drafts save while the model writes an answer's first turn.

`app/core/models/prompt_lookup.py` drafts the reply's next tokens from the prompt it is copying,
and llama.cpp reads each draft in one batch. This builds the answer's first turn for each
question as the product does (funnel, focusing, the first turn's passages, the claims schema),
and has the product's llama.cpp backend write it with drafts and token by token, alternated
(the prompt is read first, so both write from the same cache). It prints the medians over the
questions of the seconds spent writing (from the first piece to the end) and of the time per
written token, their ratio, and how many passes the drafts saved. Replies are sampled as in
the product (temperature 0.2), so the two replies to a question may differ in length: compare
the time per token.

    RESEARCH_DESK_MODELS_DIR=<starter models> .venv/bin/python bench/prompt_lookup.py \\
        --library <r-papers library> --questions bench/questions/r-papers.jsonl --limit 12
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def first_turn(funnel, question: str):
    """The answer's first-turn messages and schema for `question`, as synthesis builds them."""
    from app.core.research.answer.claims import claims_schema
    from app.core.research.evidence.first_turn_size import fit_within, split_first
    from app.core.research.answer.prompt import claims_prompt, prompt_cost
    from app.core.research.answer.prompt import first_turn as turn_template
    from app.core.research.answer.synthesis import focus_into

    result = funnel.run(question, evidence_only=True)
    chat = funnel.load_chat()
    focus_into(funnel, result)
    evidence = fit_within(result.evidence, funnel.evidence_budget(chat), prompt_cost(chat))
    first, _ = split_first(evidence, funnel.params.first_claim_tokens, prompt_cost(chat))
    template, fields = turn_template(funnel.params)
    numbers = [e.number for e in first]
    return chat, claims_prompt(question, first, template=template, **fields), claims_schema(numbers, max_items=funnel.params.first_turn_claims)


def write(chat, messages, schema, temperature: float) -> tuple[float, int]:
    """(s from the first piece to the end, tokens written) of one reply."""
    started: list[float] = []
    reply = chat.chat(messages, max_tokens=300, temperature=temperature, json_schema=schema,
                      on_token=lambda piece: started or started.append(time.perf_counter()))
    return time.perf_counter() - started[0], chat.count_tokens(reply)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--limit", type=int, default=12)
    args = ap.parse_args()

    from app.core.desk import Desk

    questions = [json.loads(line) for line in open(args.questions, encoding="utf-8") if line.strip()][: args.limit]
    desk = Desk(library=args.library)
    rows = {"drafts": [], "token by token": []}
    passes = []
    try:
        for k, q in enumerate(questions):
            funnel = desk.funnel()
            chat, messages, schema = first_turn(funnel, q["question"])
            drafts = chat.drafts
            chat.chat(messages, max_tokens=1, temperature=0.0)  # read the prompt once: both write from the cache
            for mode in (("drafts", "token by token") if k % 2 == 0 else ("token by token", "drafts")):
                chat.drafts = drafts if mode == "drafts" else None
                calls = drafts.calls
                seconds, tokens = write(chat, messages, schema, funnel.params.temperature)
                rows[mode].append((seconds, tokens))
                if mode == "drafts":  # the drafter is asked once after each pass over written tokens
                    passes.append(drafts.calls - calls)
            chat.drafts = drafts
            (d, dt), (p, pt) = rows["drafts"][-1], rows["token by token"][-1]
            print(f"{q['id']}: drafts {d:.1f} s / {dt} tokens, token by token {p:.1f} s / {pt} tokens", flush=True)
    finally:
        desk.close()

    def ms(mode: str) -> float:
        return statistics.median(1000 * s / max(1, n) for s, n in rows[mode])

    print(f"\n{len(questions)} questions, the answer's first turn")
    print("| writing | s p50 | ms a token p50 |\n|---|---|---|")
    for mode in rows:
        print(f"| {mode} | {statistics.median(s for s, _ in rows[mode]):.1f} | {ms(mode):.0f} |")
    print(f"\ndrafts / token by token, per token: {ms('drafts') / ms('token by token'):.2f}; "
          f"with drafts, {sum(n for _, n in rows['drafts'])} tokens in {sum(passes)} passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
