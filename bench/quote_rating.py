"""What the key passages' rating buys for what it costs: gold facts quoted against candidates rated.

An answer's key passages are the focused sentences the model rates best for stating the answer
(`key_sentences.answer_quotes`): the best `quote_candidates` by focus score are each read by the
chat model ("does this sentence state the answer?"), one short read a candidate. With the
starter on 2 cores that rating is as long as the model's own writing, so this bench prints, for
several candidate counts, what the quotes hold and what the rating reads:

- questions whose quotes hold a gold fact (any fact group of the question) and every gold fact;
- fact groups held by the quotes, of all groups;
- tokens the rating reads (the candidates' own tokens: the question's part is read once).

Each question's evidence is run once (stages 1-2 and focusing, as an answer does), its best
candidates (as many as the largest policy reads) are rated once, and each policy's quotes are
chosen by `key_sentences` itself from those ratings, so the policies compare on the same reads. The quotes are chosen as if the model had written no claim
(an answer drops candidates its claims already say; that does not depend on the count).

    RESEARCH_DESK_MODELS_DIR=<starter + MiniLM> .venv/bin/python bench/quote_rating.py \\
        --library /tmp/rlib --questions bench/questions/r-papers.jsonl --split development --chat <GGUF> [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from answers import _norm  # noqa: E402
from retrieval import gold_pages, load_questions, spread_questions, split_questions  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.models.factory import make_chat  # noqa: E402
from app.core.research.answer.key_sentences import answer_probabilities, key_sentences, quotable  # noqa: E402
from app.core.research.answer.synthesis import focus_into  # noqa: E402
from app.core.research.text.question_reading import asks  # noqa: E402
from app.core.settings import ModelConfig  # noqa: E402


def groups_held(text: str, facts: list[list[str]]) -> int:
    body = _norm(text)
    return sum(any(_norm(alt) in body for alt in group) for group in facts)


def policy(spec: str) -> tuple[int, int]:
    """"8+4" -> (8, 4): `quote_candidates` 12 with `quote_candidates_first` 8; "12" -> (12, 0)."""
    first, _, more = spec.partition("+")
    return int(first), int(more or 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--questions", action="append", help="question files (repeatable; default r-papers.jsonl)")
    ap.add_argument("--split", choices=["development"], default="development")
    ap.add_argument("--chat", required=True, type=Path, help="the chat GGUF that rates")
    ap.add_argument("--counts", nargs="+", default=["0", "4", "6", "8", "12"],
                    help='candidates rated: N, or "N+M": N, and M more where none of the N reads as the answer (key_sentences._ratings)')
    ap.add_argument("--limit", type=int, help="questions, spread over the set")
    args = ap.parse_args()
    policies = [policy(c) for c in args.counts]
    most = max(first + more for first, more in policies)

    desk = Desk(library=args.library)
    by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
    questions = []
    for path in args.questions or [str(REPO / "bench" / "questions" / "r-papers.jsonl")]:
        questions += split_questions(load_questions(Path(path)), args.split)
    questions = [q for q in questions if gold_pages(q, by_file) and q.get("facts")]
    if args.limit:
        questions = spread_questions(questions, by_file, args.limit)
    chat = make_chat(ModelConfig(path=str(args.chat)))
    limit = desk.settings.research.key_sentences
    per_passage = desk.settings.research.quotes_per_passage

    any_fact = {n: [] for n in args.counts}
    all_facts = {n: [] for n in args.counts}
    held = {n: 0 for n in args.counts}
    tokens = {n: [] for n in args.counts}
    groups, seconds = 0, []
    for q in questions:
        funnel = desk.funnel()
        result = funnel.run(q["question"], evidence_only=True)
        focus_into(funnel, result)
        asked = asks(q["question"])
        top = quotable([], result.evidence, asked)[:most]
        started = time.monotonic()
        probs = answer_probabilities(chat, q["question"], [c.text for c in top]) or [0.0] * len(top)
        seconds.append(time.monotonic() - started)
        known = {c.text: p for c, p in zip(top, probs)}
        sizes = [chat.count_tokens(c.text) for c in top]
        facts = q["facts"]
        groups += len(facts)
        line = []
        for n, (first, more) in zip(args.counts, policies):
            asked_to_rate: list[str] = []  # what the shipped rule has the model read for this policy

            def rate(texts: list[str]) -> list[float]:
                asked_to_rate.extend(texts)
                return [known[t] for t in texts]

            quotes = key_sentences([], result.evidence, limit, rate=rate, rated=first + more, rated_first=first,
                                   per_passage=per_passage, asked=asked)
            count = len(asked_to_rate)
            text = "\n".join(c.text for c in quotes)
            got = groups_held(text, facts)
            any_fact[n].append(float(got > 0))
            all_facts[n].append(float(got == len(facts)))
            held[n] += got
            tokens[n].append(sum(sizes[:count]))
            line.append(f"{n}:{got}")
        print(f"{q['id']} fact groups {len(facts)}, held by the quotes with N rated: {' '.join(line)}", flush=True)

    print(f"\n{len(questions)} development questions, {groups} fact groups; chat {args.chat.name}; "
          f"rating p50 {statistics.median(seconds):.1f} s for {most} candidates")
    print("| candidates rated | a gold fact quoted | every gold fact quoted | fact groups quoted | rating tokens p50 | mean |")
    print("|---|---|---|---|---|---|")
    for n in args.counts:
        print(f"| {n} | {sum(any_fact[n]):.0f} ({statistics.mean(any_fact[n]):.0%}) | {sum(all_facts[n]):.0f} | "
              f"{held[n]} of {groups} | {statistics.median(tokens[n]):.0f} | {statistics.mean(tokens[n]):.0f} |")
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
