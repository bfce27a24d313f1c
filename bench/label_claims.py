"""Hand labels of the model's own claims: a sheet to label, and the support figure from the labels.

    .venv/bin/python bench/answers.py ... --split development --save /tmp/answers.jsonl
    .venv/bin/python bench/label_claims.py sheet /tmp/answers.jsonl > /tmp/sheet.txt
    .venv/bin/python bench/label_claims.py score /tmp/answers.jsonl bench/questions/claim-labels.jsonl

`sheet` prints each claim the model wrote (quoted key passages left out: a quote is supported by
construction) with the program's verdict and the focused sentences of every passage it cites,
numbered `<question id>/<pipeline>/<claim index>`. A label line is
`{"claim": "q05/claims/0", "label": "supported" | "partial" | "unsupported", "answers": true|false, "text": "…"}`
— "supported": the cited sentences state everything the claim says; "answers": the claim states
what the question asks (the figure, name or direction), right or wrong. Development answers only.

`score` prints the share of labelled claims supported, partly and unsupported, the share that
answer the question, and how often the program's verdict agrees with the label.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections import Counter
from pathlib import Path


def claims_of(row: dict) -> list[tuple[str, dict, list[dict]]]:
    """(key, claim, cited evidence) for each claim the model wrote in one saved answer."""
    result = row["result"]
    evidence = {e["number"]: e for e in result.get("evidence", [])}
    out = []
    for i, claim in enumerate(result.get("claims", [])):
        if claim.get("quoted"):
            continue
        out.append((f"{row['id']}/{row['pipeline']}/{i}", claim, [evidence[n] for n in claim.get("sources", []) if n in evidence]))
    return out


def sheet(rows: list[dict]) -> None:
    wrap = lambda s: textwrap.fill(" ".join(s.split()), 110, initial_indent="      ", subsequent_indent="      ")  # noqa: E731
    for row in rows:
        print(f"=== {row['id']} [{row['pipeline']}] {row['question']}\n    gold: {row['gold']}")
        for key, claim, cited in claims_of(row):
            print(f"  {key}  (program: {claim.get('support') or 'unchecked'})\n{wrap(claim['text'])}")
            for e in cited:
                sentences = [s["text"] for s in e.get("sentences") or []] or [e["text"]]
                print(f"    [{e['number']}] {e['paper_id']} p.{e['page']}:")
                print(wrap(" … ".join(sentences)[:1500]))
        print()


def score(rows: list[dict], labels: list[dict]) -> None:
    # A label names its claim by key and by text: two saved runs number their claims alike.
    known = {(key, claim["text"]): claim for row in rows for key, claim, _ in claims_of(row)}
    labelled = [(lab, known[(lab["claim"], lab["text"])]) for lab in labels if (lab["claim"], lab.get("text")) in known]
    if not labelled:
        print("no label matches a claim of these answers")
        return
    n = len(labelled)
    counts = Counter(lab["label"] for lab, _ in labelled)
    answers = sum(bool(lab.get("answers")) for lab, _ in labelled)
    agree = sum((claim.get("support") or "unsupported") == lab["label"] for lab, claim in labelled)
    print(f"{n} model claims labelled by hand (of {len(known)} in these answers)")
    for label in ("supported", "partial", "unsupported"):
        print(f"- {label}: {counts[label]} ({counts[label] / n:.0%})")
    print(f"- state what the question asks: {answers} ({answers / n:.0%})")
    print(f"- the program's verdict equals the label: {agree} ({agree / n:.0%})")
    for label in ("supported", "partial", "unsupported"):
        said = Counter(claim.get("support") or "unsupported" for lab, claim in labelled if lab["label"] == label)
        print(f"  labelled {label}: the program said " + ", ".join(f"{k} {v}" for k, v in said.most_common()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["sheet", "score"])
    ap.add_argument("answers", type=Path, nargs="+", help="the JSON lines of bench/answers.py --save (score: then the label lines)")
    args = ap.parse_args(argv)
    labels_path = args.answers.pop() if args.command == "score" and len(args.answers) > 1 else None
    rows = [json.loads(line) for path in args.answers for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    held = set(json.loads((Path(__file__).parent / "questions" / "split.json").read_text(encoding="utf-8"))["held_out"])
    if any(row["id"] in held for row in rows):
        print("held-out answers are never labelled (bench/questions/README.md)", file=sys.stderr)
        return 2
    if args.command == "sheet":
        sheet(rows)
        return 0
    if labels_path is None:
        ap.error("score needs the answers and then the labels file")
    score(rows, [json.loads(line) for line in labels_path.read_text(encoding="utf-8").splitlines() if line.strip()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
