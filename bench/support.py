"""How often the support check agrees with hand labels on (claim, cited passage) pairs.

`resources/judge/support-pairs.jsonl` (shipped with the app for `models calibrate`) holds pairs labelled by hand — supported, partial,
unsupported — from three sources. Constructed pairs (no `"source"`): a passage and a claim written
for it, a third of them misattributions that share the passage's topic (a number, organism, gene,
method or direction changed). Answer pairs (`"source": "answers"`): the starter model's own claims
and the passages they cite, from its answers to development questions (odd-numbered ids of both
question sets), labelled before the check's verdicts were looked at; the question is the rules'
context, as in an answer. The judge's cut-offs were chosen on those two. Held-out answer pairs
(`"source": "held-out answers"`): the same, from answers to other questions (even-numbered ids),
labelled after the cut-offs were chosen: the out-of-sample figure. For each judge (the rules
alone, the chat model alone, both as the product combines them) it prints agreement with the
labels, the share of misattributions it passes as supported, and the share of supported pairs it
accepts; the product's figures also for each source alone. The model sees each pair the way an
answer's check shows it (the claim, and the quote within up to `JUDGE_CHARS` of its passage).

Two model judges: P(yes) to a yes/no question, cut where the chat model's catalog entry says
(`"judge"`; else `support.DEFAULT_JUDGE`: what the product uses with llama.cpp), and the verdict
in words (what it uses with backends that give no probabilities). For P(yes) it also prints a
sweep of cut-offs and a split-half check: cut-offs chosen on half of the pairs (the best
agreement that passes at most one misattribution in ten), scored on the other.

The rules' families (research/check/support_rules.FAMILIES) can be switched off for a run
(`--without NAME,…`); `--ablate` switches each off in turn, the model reading each (claim, text) once
for all the rows (its P(yes) does not depend on the rules; only what the rules leave it does).

    .venv/bin/python bench/support.py [--limit N] [--batch 1] [--no-words] [--show] [--without NAME] [--ablate]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.desk import Desk  # noqa: E402
from app.core.models.catalog import JudgeCutoffs  # noqa: E402
from app.core.records import Support  # noqa: E402
from app.core.rating import labelled  # noqa: E402
from app.core.rating.labelled import GRID, MISATTRIBUTIONS, choose_cutoffs, pairs_of, product  # noqa: E402,F401 (the app's pairs and rule)
from app.core.research.check import support_rules  # noqa: E402
from app.core.research.check.support import (  # noqa: E402
    DEFAULT_JUDGE,
    ORDER,
    Pair,
    judge_beginning,
    judge_text,
    model_verdicts,
    support_probability,
    verdict_for,
)


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


def sweep(rows: list[dict], pairs: list[Pair], p_asked: list[float]) -> None:
    """Agreement and misattributions passed for other cut-offs, and a split-half check that
    the chosen cut-off is not fitted to these pairs (chosen on one half, scored on the other)."""
    def combined(cut_s: float, cut_p: float, idx: list[int]) -> tuple[float, int, int, int, int]:
        verdicts = [product(pairs[i], p_asked[i], JudgeCutoffs(cut_s, cut_p)) for i in idx]
        sub = [rows[i] for i in idx]
        agree = sum(v == r["label"] for r, v in zip(sub, verdicts)) / len(sub)
        mis = [v for r, v in zip(sub, verdicts) if r.get("kind") in MISATTRIBUTIONS]
        sup = [v for r, v in zip(sub, verdicts) if r["label"] == "supported"]
        return agree, sum(v == "supported" for v in mis), len(mis), sum(v == "supported" for v in sup), len(sup)

    everything = list(range(len(rows)))
    print("\n| P(yes) cut for supported | for partial | agrees (3-way) | misattributions passed | supported accepted |")
    print("|---|---|---|---|---|")
    grid = GRID
    for cs, cp in grid:
        agree, passed, nmis, acc, nsup = combined(cs, cp, everything)
        print(f"| {cs:.2f} | {cp:.2f} | {agree:.0%} | {passed}/{nmis} | {acc}/{nsup} |")
    halves = [everything[0::2], everything[1::2]]
    for name, fit, test in (("even", halves[0], halves[1]), ("odd", halves[1], halves[0])):
        # The rule `models calibrate` uses too (labelled.choose_cutoffs): the best agreement passing at
        # most one misattribution and one unsupported pair in ten.
        chosen = choose_cutoffs(rows, pairs, p_asked, fit)
        best = (chosen.supported, chosen.partial)
        agree, passed, nmis, acc, nsup = combined(*best, test)
        print(f"split-half: cut-offs {best} chosen on the {name} pairs score on the others: agrees {agree:.0%}, "
              f"misattributions passed {passed}/{nmis}, supported accepted {acc}/{nsup}")


def rule_pairs(rows: list[dict], off: set[str]) -> list[Pair]:
    """The rows as the check's pairs with the families `off` switched off."""
    support_rules.OFF.clear()
    support_rules.OFF.update(off)
    try:
        return pairs_of(rows)
    finally:
        support_rules.OFF.clear()


def ablate(rows: list[dict], base: list[Pair], base_final: list[str], off: set[str], read, cuts: JudgeCutoffs) -> None:
    """One row of the ablation table per family: each switched off in turn (and those of `off`)."""
    sources = sorted({r.get("source", "constructed") for r in rows})
    print(f"\n| family off | decides | agrees (3-way) | misattributions passed | unsupported passed | supported accepted | "
          f"verdicts changed | agrees by source ({', '.join(sources)}) | pairs it decides (right by label) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, decides, _ in [("none (baseline)", "", None), *support_rules.FAMILIES]:
        pairs = base if name.startswith("none") else rule_pairs(rows, off | {name})
        final = [product(p, read(p), cuts) for p in pairs]
        s = labelled.score(rows, final)
        by_source = []
        for source in sources:
            idx = [i for i, r in enumerate(rows) if r.get("source", "constructed") == source]
            by_source.append(f"{sum(final[i] == rows[i]['label'] for i in idx)}/{len(idx)}")
        changed = [rows[i]["id"] for i in range(len(rows)) if final[i] != base_final[i]]
        # The pairs this family decides with every family on: the rules' finding moves when it is off. Right by
        # label: a cap (partial, unsupported) on a pair not labelled supported; a settled pair labelled supported.
        moved = [i for i, (a, b) in enumerate(zip(base, pairs)) if (a.rule, a.judged, a.settled) != (b.rule, b.judged, b.settled)]
        right = sum((rows[i]["label"] == "supported") == base[i].settled for i in moved)
        decided = f"{len(moved)} ({right})" if not name.startswith("none") else str(sum(not p.for_model or bool(p.judged) for p in pairs))
        print(f"| {name} | {decides} | {round(s.agreement * s.pairs)}/{s.pairs} | {s.misattributions_passed}/{s.misattributions} | "
              f"{s.unsupported_passed}/{s.unsupported} | {s.supported_accepted}/{s.supported} | "
              f"{len(changed)}{' (' + ' '.join(changed) + ')' if changed else ''} | {' · '.join(by_source)} | {decided} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(REPO / "resources" / "judge" / "support-pairs.jsonl"))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch", type=int, default=1, help="pairs per call of the word judge (an answer's pairs share one call)")
    ap.add_argument("--no-words", action="store_true", help="skip the word judge (the path of backends without probabilities)")
    ap.add_argument("--show", action="store_true")
    names = [name for name, _, _ in support_rules.FAMILIES]
    ap.add_argument("--without", default="", help=f"comma-separated rule families switched off: {', '.join(names)}")
    ap.add_argument("--ablate", action="store_true",
                    help="switch each rule family off in turn (P(yes) judge only), at the model's cut-offs and at those "
                         "`models calibrate` would choose for it with every family on")
    ap.add_argument("--decided", action="store_true",
                    help="only the pairs some rule family decides (every row's difference, not its total)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="a JSON file of the model's P(yes) per (claim, text), read and kept between runs: an ablation "
                         "reads the model only where no earlier run did. Not for timings, nor for the run-to-run noise")
    args = ap.parse_args()
    off = {n for n in args.without.split(",") if n}
    if off - set(names):
        ap.error(f"no rule family {', '.join(sorted(off - set(names)))}; the families: {', '.join(names)}")
    if off:
        print(f"rule families off: {', '.join(sorted(off))}")

    rows = load(Path(args.pairs))
    if args.limit:
        rows = rows[: args.limit]
    if args.decided:  # only the pairs some family decides: the ablation's differences, for a slow model
        rows = [r for r, p in zip(rows, rule_pairs(rows, off)) if not p.for_model or p.judged]
    desk = Desk()
    chat = desk.chat()
    print(f"chat model: {desk.chat_config().describe()}; {len(rows)} pairs, labels {dict(Counter(r['label'] for r in rows))}")
    pairs = rule_pairs(rows, off)
    rules = [p.rule for p in pairs]
    words: list[str] = []
    word_seconds = []
    if not args.no_words:
        for i in range(0, len(pairs), args.batch):
            batch = pairs[i : i + args.batch]
            t = time.monotonic()
            words += [v or Support.PARTIAL.value for v in model_verdicts(chat, batch)]
            word_seconds.append((time.monotonic() - t) / len(batch))
    p_yes: list[float] = []
    prob_seconds = []
    chat.prefill(judge_beginning())
    read_before: dict[str, float | None] = {}
    if args.cache and args.cache.exists():
        read_before = json.loads(args.cache.read_text())

    def read(p: Pair, text: str = "") -> float | None:
        """P(yes) that the pair's passage states `text` (else what the rules leave the model), read once."""
        key = json.dumps([chat.name, text or p.asked, judge_text(p)])
        if key not in read_before:
            read_before[key] = support_probability(chat, text or p.asked, judge_text(p))
        return read_before[key]

    for p in pairs:
        t = time.monotonic()
        value = read(p, p.claim)
        prob_seconds.append(time.monotonic() - t)
        if value is None:
            print("this backend gives no probabilities: only the word judge is measured")
            break
        p_yes.append(value)
    # Where the rules left only part of a claim to the model, the product asks about that part.
    p_asked = [read(p) if p.judged and p_yes else v for p, v in zip(pairs, p_yes)]
    cuts = chat.judge_cutoffs or DEFAULT_JUDGE
    probs = [verdict_for(v, cuts) for v in p_yes]
    print("\n| judge | agrees with hand label (3-way) | agrees on supported / not | misattributions passed as supported | supported pairs accepted |")
    print("|---|---|---|---|---|")
    score("rules only", rows, rules)
    if words:
        score("model, in words", rows, words)
        # As check_pairs combines them: the rules decide a pair they cap; the model judges the rest.
        score("rules + model in words (other backends)", rows,
              [min(w, p.rule, key=ORDER.__getitem__) if p.for_model else p.rule for w, p in zip(words, pairs)])
    if p_yes:
        score(f"model, P(yes) cut at {cuts.supported}/{cuts.partial}", rows, probs)
        final = [product(p, v, cuts) for p, v in zip(pairs, p_asked)]
        score("rules + P(yes) (product, llama.cpp)", rows, final)
        for source in sorted({r.get("source", "constructed") for r in rows}):
            idx = [i for i, r in enumerate(rows) if r.get("source", "constructed") == source]
            score(f"product, {source} pairs only", [rows[i] for i in idx], [final[i] for i in idx])
        sweep(rows, pairs, p_asked)
        if args.ablate:
            print(f"\nAblation at the model's cut-offs {cuts.supported}/{cuts.partial}:")
            ablate(rows, pairs, final, off, read, cuts)
        if args.ablate and not args.decided:  # cut-offs chosen on the decided pairs alone would mean nothing
            chosen = choose_cutoffs(rows, pairs, p_asked)
            print(f"\nAblation at the cut-offs `models calibrate` chooses with these families on: "
                  f"{chosen.supported}/{chosen.partial}:")
            ablate(rows, pairs, [product(p, v, chosen) for p, v in zip(pairs, p_asked)], off, read, chosen)
        if args.cache:
            args.cache.write_text(json.dumps(read_before))
    if word_seconds:
        print(f"\nword judge seconds per pair: p50 {statistics.median(word_seconds):.2f}, batch {args.batch}")
    if prob_seconds:
        print(f"P(yes) judge seconds per pair: p50 {statistics.median(prob_seconds):.2f} (load {os.getloadavg()[0]:.1f})")
    if args.show:
        for i, r in enumerate(rows):
            py = f" P(yes)={p_yes[i]:.2f}" if i < len(p_yes) else ""
            if i < len(p_asked) and pairs[i].judged:
                py += f" P(yes of “{pairs[i].judged}”)={p_asked[i]:.2f}"
            word = f" words={words[i]}" if words else ""
            print(f"{r['id']} [{r['label']}/{r.get('kind')}] rules={rules[i]}{word}{py}\n   claim: {r['claim']}")
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
