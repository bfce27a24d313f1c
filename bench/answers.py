"""The answer bench: today's free-text pipeline, prose over focused evidence and the claim-bound engine, in one run.

For questions spread over the eval sets (bench/questions/r-papers.jsonl and mixed.jsonl,
each with gold pages and gold facts), every pipeline answers every question, alternating
which goes first. `--split development` or `--split held-out` takes the questions of that part
of bench/questions/split.json instead, from r-papers.jsonl, mixed.jsonl and heldout.jsonl (an
h-question's "corpus" says which library answers it). The held-out part runs whole, once at the
end of a session, and prints totals only: no line names a question, no --show, no table after
each question (bench/questions/README.md). It prints per pipeline:

- answers right: every gold fact group is in the answer (a group is a list of accepted
  spellings of one fact — the number, the named method or organism, the direction); and the
  same for the model's own sentences alone and for the quotes alone (the quoted sentences of
  the papers, key passages): a quote copies a fact from the page, the model has to write it;
- claims cited: share of claims (structured) or factual sentences (free text) with a citation;
- citations supported: judged by the same support check for both pipelines (for the old
  one after the fact, untimed), so the two are scored alike; and the same for the citations of
  the model's own claims (a quoted sentence of a passage is supported by construction);
- gold page cited: the answer cites one of the question's gold pages;
- time to evidence on screen, to the first words of the first claim (it streams word by word),
  to the first whole claim, to the whole answer: p50 and p95;
- the model's own time to read 1,000 tokens and write 100 on this machine, and the answer
  time as a ratio to it.

    .venv/bin/python bench/answers.py --library /tmp/rlib [--mixed-library /tmp/mlib] [--limit 12] [--mixed-limit 6] [--show]
    .venv/bin/python bench/answers.py --library /tmp/rlib --mixed-library /tmp/mlib --split held-out

Build the libraries first: `research-desk --library /tmp/rlib add ../shared/corpus/r-papers`
(and `/tmp/mlib` from `../shared/corpus/mixed`).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
import unicodedata
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval import gold_pages, load_questions, spread_questions  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.records import ResearchResult  # noqa: E402
from app.core.research.text.citations import claim_before  # noqa: E402
from app.core.research.evidence.first_turn_size import reading_speed  # noqa: E402
from app.core.research.evidence.not_evidence import is_back_matter_section, is_back_matter_unit, is_bibliography, is_entry  # noqa: E402
from app.core.research.check.support import Pair, check_pairs  # noqa: E402

QUESTIONS = REPO / "bench" / "questions"

PIPELINES = {
    "today (free text)": {"structured_answers": False, "focus_prose": False, "check_support": False},
    "prose (focused)": {"structured_answers": False},
    "claims (new)": {},
    # The claims engine before key sentences: the first claim, then the model reads the other passages.
    "second turn (claims, then the model's second turn)": {"first_turn_claims": 1, "key_sentences": 0},
}


def variant(spec: str) -> tuple[str, dict]:
    """`--variant "name:key=value,key=value"`: a claims pipeline with these ResearchParams."""
    name, _, pairs = spec.partition(":")
    overrides: dict = {}
    for pair in filter(None, pairs.split(",")):
        key, _, value = pair.partition("=")
        if value.lower() in ("true", "false"):
            overrides[key.strip()] = value.lower() == "true"
        else:
            overrides[key.strip()] = float(value) if "." in value else int(value)
    return name, overrides


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("−", "-").replace("–", "-")
    return " ".join(text.split())


# A citation, "[paper-id, page 4]": only these are stripped. A bracket of the text itself stays,
# as in "provide c(), length(), [, ORDER() and MATCH() methods", where stripping every bracket
# up to the citation's "]" removed the answer.
_CITATION = re.compile(r"\[[^\[\]\n]{1,200}?,\s*pages?\s*\d+[^\[\]\n]{0,40}\]", re.I)


def answer_right(answer: str, facts: list[list[str]]) -> bool:
    """Every fact group has one accepted spelling in the answer (citations stripped)."""
    body = _norm(_CITATION.sub(" ", answer))
    return bool(facts) and all(any(_norm(alt) in body for alt in group) for group in facts)


def answer_parts(result: ResearchResult) -> tuple[str, str]:
    """The model's own sentences and the quotes (key passages, quoted claims), to grade apart."""
    passages = [k.text for k in getattr(result, "key_passages", [])]
    quoted = [c.text for c in result.claims if getattr(c, "quoted", False)]
    if not result.claims and not passages:  # a free-text answer: every sentence is the model's
        return result.answer, ""
    mine = " ".join(c.text for c in result.claims if not getattr(c, "quoted", False))
    return mine, " ".join(passages + quoted)


def not_evidence(result: ResearchResult, i: int) -> bool:
    """Quoted claim `i` is a reference-list entry or back matter (acknowledgements, contributions,
    funding, download stamps), by the text quoted or the section of the passage it came from."""
    text = result.claims[i].text.strip("“”")
    sections = [e.section for e in result.evidence if e.number in result.claims[i].sources]
    return (is_entry(text) or is_back_matter_unit(text) or any(is_back_matter_section(s) or is_bibliography(s)
                                                               for s in sections))


def split_questions(split: str, r_path: Path, m_path: Path) -> tuple[list[dict], list[dict]]:
    """The r-papers and the mixed questions of one part of split.json, from all three question files."""
    ids = set(json.loads((QUESTIONS / "split.json").read_text())[split.replace("-", "_")])
    heldout = load_questions(QUESTIONS / "heldout.jsonl")
    r = load_questions(r_path) + [q for q in heldout if q["corpus"] == "r-papers"]
    m = load_questions(m_path) + [q for q in heldout if q["corpus"] == "mixed"]
    return [q for q in r if q["id"] in ids], [q for q in m if q["id"] in ids]


def model_speed(desk: Desk) -> tuple[float, float]:
    """Seconds to read 1,000 new tokens and to write 100, measured on the loaded chat model."""
    chat = desk.chat()
    text = (REPO / "docs" / "lab" / "2026-11-23.md").read_text() * 4
    words = text.split()
    prompt = " ".join(words[:700])
    while chat.count_tokens(prompt) < 1000:
        words = words[700:] + words[:700]
        prompt += " " + " ".join(words[:100])
    nonce = f"Session {time.time_ns()}. "  # a fresh start: nothing of it is in the KV cache
    t = time.monotonic()
    chat.chat([{"role": "user", "content": nonce + prompt + "\nReply with OK."}], max_tokens=1, temperature=0.0)
    read = time.monotonic() - t
    pieces: list[str] = []
    # The model's own writing speed, one token a pass: drafts from the prompt (prompt_lookup.py)
    # are part of what the answer's time is measured against, not of the unit.
    drafts = getattr(chat, "drafts", None)
    if drafts is not None:
        chat.drafts = None
    t = time.monotonic()
    try:
        chat.chat([{"role": "user", "content": "Count from 1 to 300, separated by commas."}], max_tokens=100,
                  temperature=0.0, on_token=pieces.append)
    finally:
        if drafts is not None:
            chat.drafts = drafts
    write = (time.monotonic() - t) * 100 / max(1, len(pieces))
    return read, write


def judge_citations(desk: Desk, result: ResearchResult) -> list[str]:
    """The support verdicts of a free-text answer's citations, by the product's check (untimed)."""
    by_number = {e.number: e for e in result.evidence}
    usable = [c for c in result.citations if c.evidence_number in by_number]
    pairs = [Pair(claim_before(result.answer, c.start), by_number[c.evidence_number]) for c in usable]
    check_pairs(pairs, desk.chat(), context=result.query)
    return [p.verdict for p in pairs] + ["unsupported"] * (len(result.citations) - len(usable))


def cited_share(result: ResearchResult) -> float:
    if result.claims:
        return sum(bool(c.sources) for c in result.claims) / len(result.claims)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", re.sub(r"\n+", " ", result.answer)) if len(s.split()) >= 4]
    return sum(bool(re.search(r"\[[^\]]+\]", s)) for s in sentences) / max(1, len(sentences))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def run(desk: Desk, questions: list[dict], by_file: dict[str, str], stats: dict, show: bool, flip: int, progress=None,
        seeded: bool = False, quiet: bool = False, save: Path | None = None) -> None:
    """quiet: held-out questions, whose ids and answers are never shown (a failure is counted, not named).
    save: a JSON line per answer (question, gold, the whole result, the verdicts), for hand labels."""
    for n, q in enumerate(questions):
        gold = gold_pages(q, by_file)
        order = list(PIPELINES.items())
        if (n + flip) % 2:
            order.reverse()  # alternate which pipeline runs first (the KV cache, the OS page cache)
        for name, overrides in order:
            s = stats[name]
            started = time.monotonic()
            try:
                funnel = desk.funnel(overrides=overrides)
                s["first_tokens"].append(funnel.params.first_claim_tokens)
                if seeded and hasattr(desk.chat(), "reseed"):  # llama.cpp: the same words for the same prompt
                    desk.chat().reseed(zlib.crc32(q["id"].encode()))
                result = funnel.run(q["question"])
                s["reading"].append(reading_speed(desk.chat()) or 0.0)
            except Exception as exc:  # noqa: BLE001 - a failed question counts as wrong
                print(f"  [{name}]: a question failed" if quiet else f"  {q['id']} [{name}]: {exc}", file=sys.stderr)
                for key in ("right", "right_model", "right_quotes", "has_model"):
                    s[key].append(0.0)
                if q.get("table"):
                    s["table_model"].append(0.0)
                continue
            wall = time.monotonic() - started
            checked = result.claims or any(c.support for c in result.citations)  # checked in the run
            verdicts = [c.support for c in result.citations] if checked else judge_citations(desk, result)
            facts = q.get("facts") or []
            mine, quotes = answer_parts(result)
            s["right"].append(float(answer_right(result.answer, facts)))
            s["right_model"].append(float(answer_right(mine, facts)))
            if q.get("table"):  # the held-out questions answered only in a table row (issue 49)
                s["table_model"].append(float(answer_right(mine, facts)))
            s["right_quotes"].append(float(answer_right(quotes, facts)))
            s["has_model"].append(float(bool(mine.strip())))
            s["bad_quotes"].append(float(sum(not_evidence(result, i) for i, c in enumerate(result.claims) if c.quoted)))
            s["cited"].append(cited_share(result))
            s["supported"].extend(float(v == "supported") for v in verdicts)
            # The model's own claims: a quoted sentence of a passage is supported by construction.
            s["written"].extend(float(v == "supported") for c, v in zip(result.citations, verdicts)
                                if not (result.claims and result.claims[c.claim].quoted))
            s["gold"].append(float(any((c.paper_id, c.page) in gold for c in result.citations)))
            s["evidence"].append(result.timings.get("evidence_s", result.timings.get("stage1_s", 0) + result.timings.get("stage2_s", 0)))
            s["first"].append(result.timings.get("first_claim_s", wall))
            s["words"].append(result.timings.get("first_words_s", result.timings.get("first_claim_s", wall)))
            s["total"].append(wall)
            s["length"].append(len(re.sub(r"\[[^\]]*\]", " ", result.answer).split()))  # words, citations left out
            s["timings"].append({k: round(v, 1) for k, v in result.timings.items() if k.endswith("_s")})
            if save is not None:
                with save.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({"id": q["id"], "pipeline": name, "question": q["question"], "gold": q["answer"],
                                          "facts": facts, "verdicts": verdicts, "result": result.to_dict()}, default=str) + "\n")
            if show:
                print(f"--- {q['id']} [{name}] right={answer_right(result.answer, facts)} (model's sentences "
                      f"{answer_right(mine, facts)}, quotes {answer_right(quotes, facts)}) {wall:.0f}s\n"
                      f"Q: {q['question']}\nGold: {q['answer']}\n{result.answer}\ntimings: {s['timings'][-1]}\n"
                      f"verdicts: {[f'{c.paper_id} p{c.page}: ' + (v or 'unchecked') for c, v in zip(result.citations, verdicts)]}\n"
                      + "".join(f"{m}\n" for m in result.messages if "withdrew" in m or "in place of" in m or "written again" in m or "repeated the question" in m))
        if progress is not None:
            progress()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True, help="a library of ../shared/corpus/r-papers")
    ap.add_argument("--mixed-library", help="a library of ../shared/corpus/mixed")
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--mixed-questions", default=str(REPO / "bench" / "questions" / "mixed.jsonl"))
    ap.add_argument("--limit", type=int, default=40, help="r-papers questions (spread over the set)")
    ap.add_argument("--mixed-limit", type=int, default=10)
    ap.add_argument("--show", action="store_true", help="print each answer")
    ap.add_argument("--corpora", choices=["both", "mixed"], default="both",
                    help="mixed: only the mixed-field questions (a run that must fit a short session; say so with its totals)")
    ap.add_argument("--split", choices=["development", "held-out"],
                    help="the questions of this part of bench/questions/split.json (held-out: all of them, totals only)")
    ap.add_argument("--only", nargs="+", choices=["today", "prose", "claims", "second", "variants"],
                    help="run only these pipelines (e.g. --only today claims; one alone: timings without the others' cache effects; "
                         "variants: only the --variant pipelines, to add one to a saved run of the same questions)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE,…",
                    help='another claims pipeline, e.g. --variant "quotes3:key_sentences=3" (repeatable)')
    ap.add_argument("--focus-tokens", type=int, help="evidence tokens after focusing (Settings focus_tokens) for the focused pipelines")
    ap.add_argument("--fixed-first-turn", action="store_true",
                    help="every claims pipeline reads first_claim_tokens in its first turn (not what the model read in "
                         "first_claim_read_s of recent answers) and samples from the same seed for each question: two "
                         "pipelines then write the same first claims, and a comparison of what follows is not blurred")
    ap.add_argument("--save", type=Path, metavar="FILE", help="append each answer as a JSON line (development questions only)")
    args = ap.parse_args()
    held_out = args.split == "held-out"
    if held_out and (args.show or args.save or not args.mixed_library):
        ap.error("--split held-out prints totals only (no --show, no --save) and needs --mixed-library (its totals span both sets)")
    if args.focus_tokens:
        for name, overrides in PIPELINES.items():
            if overrides.get("focus_prose", True):
                overrides["focus_tokens"] = args.focus_tokens
    if args.only:
        for name in [n for n in PIPELINES if not n.startswith(tuple(args.only))]:
            del PIPELINES[name]
    PIPELINES.update(variant(v) for v in args.variant)
    if args.fixed_first_turn:
        for name, overrides in PIPELINES.items():
            if overrides.get("structured_answers", True):
                overrides.setdefault("first_claim_read_s", 0.0)

    stats = {name: {k: [] for k in ("right", "right_model", "right_quotes", "has_model", "bad_quotes", "cited", "supported", "written", "gold", "evidence", "words", "first", "total", "timings",
                                          "first_tokens", "reading", "length", "table_model")} for name in PIPELINES}
    r_questions, m_questions = Path(args.questions), Path(args.mixed_questions)
    if args.split:
        r_questions, m_questions = split_questions(args.split, r_questions, m_questions)
    sets = [(args.library, r_questions, args.limit)] if args.corpora != "mixed" else []
    if args.mixed_library:
        sets.append((args.mixed_library, m_questions, args.mixed_limit))
    read = write = 0.0
    count = 0
    for flip, (library, path, limit) in enumerate(sets):
        desk = Desk(library=library)
        by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
        # held out: every question once; otherwise `limit` of them, spread over the set
        questions = spread_questions(path, by_file, max(1, len(path)) if held_out else limit)
        count += len(questions)
        if not read:
            print(f"chat model: {desk.chat_config().describe()}")
            read, write = model_speed(desk)
        done = [0]

        def progress() -> None:  # the table so far after each question: a long run can be stopped and still report
            done[0] += 1
            table(stats, done[0] + (count - len(questions)), read, write)

        # held out: no table after each question either (two tables in a row tell one answer's grade)
        run(desk, questions, by_file, stats, args.show, flip, None if held_out else progress,
            seeded=args.fixed_first_turn, quiet=held_out, save=args.save)
        desk.close()

    table(stats, count, read, write)
    return 0


def table(stats: dict, count: int, read: float, write: float) -> None:
    unit = read + write
    print(f"\n{count} questions. Model on this machine: read 1,000 tokens {read:.1f} s, write 100 tokens {write:.1f} s "
          f"(unit = {unit:.1f} s)\n")
    print("| pipeline | answers right | right by the model's sentences | right by the quotes | claims cited | "
          "citations supported | of the model's claims | gold page cited | "
          "evidence p50/p95 | first words p50/p95 | first claim p50/p95 | answer p50/p95 | answer p50 / unit |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    mean = lambda xs: statistics.mean(xs) if xs else float("nan")  # noqa: E731
    for name, s in stats.items():
        right = " | ".join(f"{mean(s[k]):.0%} ({int(sum(s[k]))}/{len(s[k])})" for k in ("right", "right_model", "right_quotes"))
        print(f"| {name} | {right} | {mean(s['cited']):.0%} | "
              f"{mean(s['supported']):.0%} | {mean(s['written']):.0%} | {mean(s['gold']):.0%} | {pct(s['evidence'], .5):.1f} / {pct(s['evidence'], .95):.1f} s | "
              f"{pct(s['words'], .5):.1f} / {pct(s['words'], .95):.1f} s | "
              f"{pct(s['first'], .5):.1f} / {pct(s['first'], .95):.1f} s | {pct(s['total'], .5):.1f} / {pct(s['total'], .95):.1f} s | "
              f"{pct(s['total'], .5) / unit:.2f} |")
    for name, s in stats.items():  # every answer should have the model's own answer; no quote should be a reference or back matter
        if s["has_model"]:
            print(f"- {name}: a sentence of the model's in {mean(s['has_model']):.0%} of answers; quotes from a reference "
                  f"list or back matter: {int(sum(s['bad_quotes']))}")
    for name, s in stats.items():
        if s["table_model"]:
            print(f"- {name}: questions answered only in a table row: right by the model's sentences "
                  f"{int(sum(s['table_model']))}/{len(s['table_model'])}")
    # A longer answer holds a gold fact more easily ("right" looks for its spellings): say how long.
    for name, s in stats.items():
        if s["length"]:
            print(f"- {name}: answer {pct(s['length'], .5):.0f} words p50, {pct(s['length'], .95):.0f} p95 (citations left out)")
    # The first turn grows with the model's measured reading speed (research/evidence/first_turn_size.py).
    sized = [(name, s) for name, s in stats.items() if s["first_tokens"] and not name.startswith("today")]
    for name, s in sized:
        print(f"- {name}: first turn {pct(s['first_tokens'], .5):.0f} tokens p50 ({min(s['first_tokens'])}–"
              f"{max(s['first_tokens'])}); the model's first turns read {pct(s['reading'], .5):.0f} tokens/s")


if __name__ == "__main__":
    sys.exit(main())
