"""Does the judge's hidden state tell supported claims from the rest better than its P(yes)?

The support check cuts the chat model's P(yes) to a yes/no question (`support.py`). On the
hand-labelled pairs of `bench/support.py` the starter model gives right paraphrases and
misattributions that share the topic much the same P(yes). P(yes) is one direction (the "yes"
and "no" rows of the output layer) in the model's last hidden state at the answer's position; a
linear probe reads every direction of that state. If the state held the distinction, a probe
trained on labelled pairs would find it: the ceiling of any judge built on this model's reading.

For each pair it reads the judge's prompt once more through a second llama.cpp context that
returns the last token's hidden state, trains an L2 logistic probe for "supported" on the pairs of
all papers but one and scores the pairs of that one (leave one paper out: pairs that share a
passage never sit on both sides). It prints, for P(yes) and the probe: the AUC of supported against
the rest, and the 3-way agreement with the labels where the rules and the score combine as in the
product, with cut-offs chosen on half of the pairs (the best agreement that passes at most one
misattribution in ten) and scored on the other half.

    .venv/bin/python bench/judge_probe.py [--limit N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import llama_cpp  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.research.check.support import ORDER, Pair, judge_beginning, judge_text, pair_messages, support_probability  # noqa: E402
from support import MISATTRIBUTIONS, load, pairs_of  # noqa: E402

PENALTIES = (1.0, 10.0, 100.0, 1000.0)  # the probe's L2 weights tried (all printed: none is chosen on the test pairs)


def hidden_states(chat, pairs) -> np.ndarray:
    """The last hidden state of each pair's judge prompt (the tokens the judge reads, chat template included)."""
    # A lab measure of the llama.cpp backend: its model file and prompt tokens, read by a second
    # context made to return hidden states (the product's context returns logits).
    reader = llama_cpp.Llama(chat._llm.model_path, embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_LAST,
                             n_ctx=1024, n_batch=1024, n_ubatch=1024, verbose=False)
    out = []
    for p in pairs:
        tokens = chat._prompt_tokens(pair_messages(p.asked, judge_text(p)))
        reader._batch.reset()
        reader._ctx.kv_cache_clear()
        reader._batch.add_sequence(tokens, 0, True)
        reader._ctx.decode(reader._batch)
        out.append(np.array(llama_cpp.llama_get_embeddings_seq(reader._ctx.ctx, 0)[: reader.n_embd()]))
    reader.close()
    return np.array(out)


def logistic(x: np.ndarray, y: np.ndarray, penalty: float) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression by Newton's method (the intercept unpenalised)."""
    x1 = np.hstack([x, np.ones((len(x), 1))])
    reg = penalty * np.eye(x1.shape[1])
    reg[-1, -1] = 1e-6
    w = np.zeros(x1.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(x1 @ w, -30, 30)))
        step = np.linalg.solve(x1.T @ (x1 * (p * (1 - p))[:, None]) + reg, x1.T @ (p - y) + reg @ w)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w[:-1], w[-1]


def probe_scores(states: np.ndarray, y: np.ndarray, papers: list[str], penalty: float) -> np.ndarray:
    """Each pair's P(supported) from a probe trained on the other papers' pairs."""
    out = np.zeros(len(y))
    for paper in sorted(set(papers)):
        test = np.array([p == paper for p in papers])
        mu, sd = states[~test].mean(0), states[~test].std(0) + 1e-6
        w, b = logistic((states[~test] - mu) / sd, y[~test], penalty)
        out[test] = 1 / (1 + np.exp(-np.clip((states[test] - mu) / sd @ w + b, -30, 30)))
    return out


def verdicts(score: np.ndarray, pairs: list[Pair], cut_s: float, cut_p: float) -> list[str]:
    """As the product combines them (bench/support.py's `product`): the rules decide a pair they
    cap unless they left part of it to the model; else the stricter of the score's verdict and theirs."""
    own = ["supported" if s >= cut_s else "partial" if s >= cut_p else "unsupported" for s in score]
    return [min(v, p.rule, key=ORDER.__getitem__) if p.for_model else p.rule for v, p in zip(own, pairs)]


def figures(rows, v, idx) -> tuple[float, int, int, int, int]:
    agree = sum(v[i] == rows[i]["label"] for i in idx) / len(idx)
    mis = [i for i in idx if rows[i].get("kind") in MISATTRIBUTIONS]
    sup = [i for i in idx if rows[i]["label"] == "supported"]
    return agree, sum(v[i] == "supported" for i in mis), len(mis), sum(v[i] == "supported" for i in sup), len(sup)


def report(name: str, score: np.ndarray, rows: list[dict], pairs: list[Pair]) -> None:
    y = np.array([r["label"] == "supported" for r in rows])
    auc = np.mean([a > b for a in score[y] for b in score[~y]])
    grid = [(s, p) for s in np.arange(0.2, 0.91, 0.05) for p in np.arange(0.1, 0.91, 0.05) if p <= s + 1e-9]
    everything = list(range(len(rows)))
    cells = [f"{auc:.3f}"]
    for fit, test in ((everything[0::2], everything[1::2]), (everything[1::2], everything[0::2])):
        at = {g: figures(rows, verdicts(score, pairs, *g), fit) for g in grid}
        within = [g for g in grid if at[g][1] <= 0.1 * at[g][2]] or grid
        best = max(within, key=lambda g: at[g][0])
        agree, passed, nmis, acc, nsup = figures(rows, verdicts(score, pairs, *best), test)
        cells.append(f"{agree:.0%}, {passed}/{nmis} passed, {acc}/{nsup} accepted (cuts {best[0]:.2f}/{best[1]:.2f})")
    print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(REPO / "resources" / "judge" / "support-pairs.jsonl"))
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    rows = load(Path(args.pairs))[: args.limit or None]
    desk = Desk()
    chat = desk.chat()
    if not hasattr(chat, "_llm"):
        print("the hidden state needs the in-process llama.cpp backend")
        return 1
    pairs = pairs_of(rows)
    chat.prefill(judge_beginning())
    p_yes = np.array([support_probability(chat, p.asked, judge_text(p)) for p in pairs])
    states = hidden_states(chat, pairs)
    y = np.array([r["label"] == "supported" for r in rows], dtype=float)
    papers = [r["file"] for r in rows]
    print(f"chat model: {desk.chat_config().describe()}; {len(rows)} pairs from {len(set(papers))} papers, "
          f"hidden state {states.shape[1]} values")
    print("\n| judge | AUC (supported vs the rest) | cut-offs from the even pairs, on the odd | from the odd, on the even |")
    print("|---|---|---|---|")
    report("P(yes)", p_yes, rows, pairs)
    for penalty in PENALTIES:
        report(f"probe of the hidden state, L2 {penalty:g} (leave one paper out)", probe_scores(states, y, papers, penalty), rows, pairs)
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
