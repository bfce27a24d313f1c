"""How often the support check agrees with hand labels on (claim, cited passage) pairs.

`bench/questions/support-pairs.jsonl` holds pairs labelled by hand — supported, partial,
unsupported — a third of them misattributions that share the passage's topic (a number,
organism, gene, method or direction changed). For each judge (the rules alone, the chat
model alone, both as the product combines them) it prints agreement with the labels, the
share of misattributions it passes as supported, and the share of supported pairs it
accepts. The model sees each pair the way an answer's check shows it (claim + quote).

    .venv/bin/python bench/support.py [--limit N] [--batch 1] [--show]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.desk import Desk  # noqa: E402
from app.core.records import Evidence, Support  # noqa: E402
from app.core.research.support import Pair, check_specifics, model_verdicts, quote_for  # noqa: E402

MISATTRIBUTIONS = {"wrong-number", "wrong-organism", "wrong-gene-or-entity", "wrong-method", "wrong-direction"}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def score(name: str, rows: list[dict], verdicts: list[str]) -> None:
    agree = sum(v == r["label"] for r, v in zip(rows, verdicts))
    binary = sum((v == "supported") == (r["label"] == "supported") for r, v in zip(rows, verdicts))
    mis = [v for r, v in zip(rows, verdicts) if r.get("kind") in MISATTRIBUTIONS]
    sup = [v for r, v in zip(rows, verdicts) if r["label"] == "supported"]
    passed = sum(v == "supported" for v in mis)
    accepted = sum(v == "supported" for v in sup)
    print(f"| {name} | {agree}/{len(rows)} = {agree / len(rows):.0%} | {binary / len(rows):.0%} | "
          f"{passed}/{len(mis)} = {passed / max(1, len(mis)):.0%} | {accepted}/{len(sup)} = {accepted / max(1, len(sup)):.0%} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(REPO / "bench" / "questions" / "support-pairs.jsonl"))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch", type=int, default=1, help="pairs per model call (an answer's pairs share one call)")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()

    rows = load(Path(args.pairs))
    if args.limit:
        rows = rows[: args.limit]
    desk = Desk()
    chat = desk.chat()
    print(f"chat model: {desk.chat_config().describe()}; {len(rows)} pairs, labels {dict(Counter(r['label'] for r in rows))}")
    pairs = []
    for r in rows:
        e = Evidence(number=1, paper_id=Path(r["file"]).stem, page=int(r["page"]), page_label=str(r["page"]), section="", text=r["passage"], score=0.0)
        p = Pair(r["claim"], e)
        p.quote = quote_for(p.claim, e)
        p.rule = check_specifics(p.claim, e.text, quote=p.quote)[0]
        pairs.append(p)
    model: list[str] = []
    seconds = []
    for i in range(0, len(pairs), args.batch):
        batch = pairs[i : i + args.batch]
        t = time.monotonic()
        model += [v or Support.PARTIAL.value for v in model_verdicts(chat, batch)]
        seconds.append((time.monotonic() - t) / len(batch))
    rules = [p.rule for p in pairs]
    # As check_pairs combines them: the rules decide a pair they cap; the model judges the rest.
    combined = [r if r != Support.SUPPORTED.value else m for m, r in zip(model, rules)]
    print("\n| judge | agrees with hand label (3-way) | agrees on supported / not | misattributions passed as supported | supported pairs accepted |")
    print("|---|---|---|---|---|")
    score("rules only", rows, rules)
    score("model only", rows, model)
    score("combined (product)", rows, combined)
    print(f"\nmodel seconds per pair: p50 {statistics.median(seconds):.2f}, batch {args.batch}")
    if args.show:
        for r, m, ru, c in zip(rows, model, rules, combined):
            mark = "" if c == r["label"] else "  <-- disagrees"
            print(f"{r['id']} [{r['label']}/{r.get('kind')}] model={m} rules={ru} -> {c}{mark}\n   claim: {r['claim']}")
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
