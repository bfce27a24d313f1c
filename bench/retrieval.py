"""Retrieval quality and latency of the research funnel on the r-papers library.

Prints, for the funnel (stages 1+2) and, in the same run, a flat hybrid search over all
content chunks (no shortlist) as the baseline: stage-1 paper recall, page-recall@5 and @15,
hit@5/@15, MRR of the first right page, and stage 1+2 latency p50/p95 (query embedding
included). Also prints the cosine of the best right passage per question, which is how the
embedding model's cutoffs in models/catalog.json were calibrated.

    .venv/bin/python bench/retrieval.py --library /tmp/rlib        # builds it if empty
    .venv/bin/python bench/retrieval.py --library /tmp/mlib --questions bench/questions/mixed.jsonl \
        --split development --variant "name:key=value,…"

`--split development` (or `held-out`) takes that part of bench/questions/split.json: the questions
file's own, plus those of heldout.jsonl whose papers are in the library. Tune on development only;
held-out runs once, for totals (it names no question). `--variant` adds a funnel with these
ResearchParams to the comparison (as bench/answers.py's --variant).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.desk import Desk  # noqa: E402
from app.core.library.store import CONTENT_CHUNKS  # noqa: E402
from app.core.research.evidence import retrieval  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "r-papers"
QUESTIONS = REPO / "bench" / "questions"


def load_questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def gold_pages(q: dict, by_file: dict[str, str]) -> set[tuple[str, int]]:
    return {(by_file[a["file"]], p) for a in q["answers"] if a["file"] in by_file for p in a["pages"]}


def split_questions(questions: list[dict], split: str) -> list[dict]:
    """The questions of one part of split.json, with heldout.jsonl's (their library decides which are scored)."""
    ids = set(json.loads((QUESTIONS / "split.json").read_text())[split.replace("-", "_")])
    return [q for q in questions + load_questions(QUESTIONS / "heldout.jsonl") if q["id"] in ids]


def variant(spec: str) -> tuple[str, dict]:
    """`name:key=value,key=value` → (name, ResearchParams overrides)."""
    name, _, pairs = spec.partition(":")
    overrides: dict = {}
    for pair in filter(None, pairs.split(",")):
        key, _, value = pair.partition("=")
        overrides[key.strip()] = _value(value.strip())
    return name, overrides


def _value(text: str) -> bool | int | float | str:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def spread_questions(path: Path | list[dict], by_file: dict[str, str], limit: int) -> list[dict]:
    """`limit` answerable questions spread evenly over the set, a file or the questions themselves
    (for the slow, model-bound benches)."""
    questions = [q for q in (load_questions(path) if isinstance(path, Path) else path) if gold_pages(q, by_file)]
    step = max(1, len(questions) // limit)
    return questions[::step][:limit]


def score(ranked: list[tuple[str, int]], gold: set[tuple[str, int]]) -> dict[str, float]:
    out = {}
    for k in (5, 15):
        top = set(ranked[:k])
        out[f"recall@{k}"] = len(top & gold) / len(gold)
        out[f"hit@{k}"] = float(bool(top & gold))
    rr = 0.0
    for i, item in enumerate(ranked, 1):
        if item in gold:
            rr = 1.0 / i
            break
    out["mrr"] = rr
    return out


# Evidence counted in tokens (~4 characters each): what 5 and 15 passages held with the chunks
# before they were sized by the embedder's tokenizer (~310 tokens a passage; issue 49). Smaller
# chunks put fewer tokens in 5 passages, so recall@5 compares unequal amounts of text.
TOKEN_CUTS = (1500, 4500)


def token_recall(passages: list[tuple[str, int, str]], gold: set[tuple[str, int]]) -> dict[str, float]:
    """Gold pages among the passages (paper, page, text) that start within each of TOKEN_CUTS tokens."""
    out = {}
    for cut in TOKEN_CUTS:
        seen, spent = set(), 0.0
        for paper, page, text in passages:
            if spent >= cut:
                break
            seen.add((paper, page))
            spent += len(text) / 4
        out[f"recall@{cut / 1000:g}k tok"] = len(seen & gold) / len(gold)
    return out


def summarise(name: str, rows: list[dict[str, float]], latencies: list[float]) -> None:
    keys = ["paper_recall", "recall@5", "recall@15", *(f"recall@{c / 1000:g}k tok" for c in TOKEN_CUTS), "hit@5", "hit@15", "mrr",
            "passages", "tokens"]
    cells = []
    for k in keys:
        vals = [r[k] for r in rows if k in r]
        fmt = ".0f" if k in ("passages", "tokens") else ".3f"
        cells.append(f"{k} {statistics.mean(vals):{fmt}}" if vals else f"{k} -")
    lat = sorted(latencies)
    p50 = lat[len(lat) // 2] * 1000
    p95 = lat[min(len(lat) - 1, int(len(lat) * 0.95))] * 1000
    print(f"{name:28s} " + "  ".join(cells) + f"  p50 {p50:.0f} ms  p95 {p95:.0f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--limit", type=int, default=0, help="first N questions only")
    ap.add_argument("--split", choices=["development", "held-out"], help="that part of bench/questions/split.json")
    ap.add_argument("--variant", action="append", default=[], help='"name:key=value,…": a funnel with these ResearchParams too')
    ap.add_argument("--no-flat", action="store_true", help="skip the vector-only funnel and the flat searches")
    ap.add_argument("--lambda2", type=float, nargs="*", default=[],
                    help="also run the hybrid funnel with these stage-2 MMR lambdas (calibration)")
    args = ap.parse_args()

    desk = Desk(library=args.library)
    if not desk.library.list_papers():
        print(f"importing {CORPUS} …", file=sys.stderr)
        desk.add([CORPUS])
    papers = desk.library.list_papers()
    by_file = {p.source_file: p.id for p in papers if p.complete}
    questions = load_questions(Path(args.questions))
    if args.split:
        questions = split_questions(questions, args.split)
    if args.limit:
        questions = questions[: args.limit]
    print(f"library: {len(papers)} papers ({len(by_file)} indexed), "
          f"{desk.library.count_chunks(CONTENT_CHUNKS)} content chunks; {len(questions)} questions; "
          f"embedding {desk.embedding_config().describe()}")

    configs = {
        "funnel (hybrid)": {"hybrid": True},
        **({} if args.no_flat else {"funnel (vector only)": {"hybrid": False}}),
        **{f"funnel (hybrid, λ2 {lam:g})": {"hybrid": True, "mmr_lambda_evidence": lam} for lam in args.lambda2},
        **dict(variant(v) for v in args.variant),
    }
    flats = [] if args.no_flat else [("flat hybrid (baseline)", True), ("flat vector", False)]
    funnels = {name: desk.funnel(overrides=o) for name, o in configs.items()}
    print(f"cutoffs: {funnels['funnel (hybrid)'].cutoffs}")
    results: dict[str, tuple[list, list]] = {name: ([], []) for name in [*configs, *(n for n, _ in flats)]}
    best_gold_cos: list[float] = []
    skipped = 0
    embedder = desk.embedder()
    table = desk.library.chunks_table(CONTENT_CHUNKS)
    for q in questions:
        gold = gold_pages(q, by_file)
        if not gold:
            skipped += 1
            continue
        gold_papers = {pid for pid, _ in gold}
        for name, funnel in funnels.items():
            t = time.perf_counter()
            try:
                result = funnel.run(q["question"], evidence_only=True)
            except Exception as exc:  # noqa: BLE001 - a failed question scores zero
                print(f"  {'(held out)' if args.split == 'held-out' else q['id']} {name}: {exc}", file=sys.stderr)
                results[name][0].append({"paper_recall": 0.0, "recall@5": 0.0, "recall@15": 0.0, "hit@5": 0.0, "hit@15": 0.0, "mrr": 0.0})
                continue
            results[name][1].append(time.perf_counter() - t)
            row = score([(e.paper_id, e.page) for e in result.evidence], gold)
            row.update(token_recall([(e.paper_id, e.page, e.text) for e in result.evidence], gold))
            row["passages"] = len(result.evidence)
            row["tokens"] = sum(len(e.text) for e in result.evidence) / 4  # ~4 characters a token
            row["paper_recall"] = len(gold_papers & set(result.papers)) / len(gold_papers)
            results[name][0].append(row)
        for name, hybrid in flats:
            t = time.perf_counter()
            qvec = embedder.embed_one(q["question"])
            cands = retrieval.search(table, qvec, q["question"], limit=15, hybrid=hybrid)
            results[name][1].append(time.perf_counter() - t)
            row = score([(c.paper_id, c.page) for c in cands], gold)
            row["paper_recall"] = len(gold_papers & {c.paper_id for c in cands}) / len(gold_papers)
            results[name][0].append(row)
            if hybrid:
                wide = retrieval.search(table, qvec, q["question"], limit=200, hybrid=False)
                cos = [c.cosine for c in wide if (c.paper_id, c.page) in gold]
                best_gold_cos.append(max(cos) if cos else 0.0)

    print(f"questions scored: {len(questions) - skipped} (skipped {skipped} whose papers are not indexed)")
    for name, (rows, lat) in results.items():
        summarise(name, rows, lat)
    arr = np.array(best_gold_cos)
    if best_gold_cos:
        print("best right-passage cosine per question: "
              f"min {arr.min():.3f}  p5 {np.percentile(arr, 5):.3f}  p25 {np.percentile(arr, 25):.3f}  median {np.median(arr):.3f}")
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
