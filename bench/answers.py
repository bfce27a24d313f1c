"""Answer quality of standard research with the configured chat model: does it cite, and rightly?

For questions spread over the eval set, runs the whole funnel (stages 1–4) and reports: the share
of answers with at least one citation, citations per answer, the share of citations verified by
the checker, the share of answers citing a right page (one of the question's gold pages), and the
wall time per answer. Compare prompt or model changes by running it before and after.

    .venv/bin/python bench/answers.py --library /tmp/rlib [--limit 8] [--show] [--citation-style numbers|tags]
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

from retrieval import gold_pages, spread_questions  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.research.citations import ATTRIBUTED_NOTE  # noqa: E402
from app.core.settings import CITATION_STYLES  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--questions", default=str(REPO / "bench" / "questions" / "r-papers.jsonl"))
    ap.add_argument("--limit", type=int, default=8, help="questions (spread over the set)")
    ap.add_argument("--show", action="store_true", help="print each answer")
    ap.add_argument("--citation-style", choices=CITATION_STYLES, help="override the setting (compare prompts)")
    args = ap.parse_args()

    desk = Desk(library=args.library)
    by_file = {p.source_file: p.id for p in desk.library.list_papers() if p.complete}
    questions = spread_questions(Path(args.questions), by_file, args.limit)
    style = args.citation_style or desk.settings.research.citation_style
    print(f"chat model: {desk.chat_config().describe()}; {len(questions)} questions; citation style: {style}")
    desk.chat()  # loaded once, outside the timings

    cited, own, per_answer, verified_share, right_page, walls = [], [], [], [], [], []
    for q in questions:
        gold = gold_pages(q, by_file)
        started = time.monotonic()
        try:
            result = desk.funnel(overrides={"citation_style": args.citation_style}).run(q["question"])
        except Exception as exc:  # noqa: BLE001 - a failed question counts as uncited
            print(f"  {q['id']}: {exc}", file=sys.stderr)
            cited.append(0.0)
            own.append(0.0)
            per_answer.append(0)
            right_page.append(0.0)
            continue
        walls.append(time.monotonic() - started)
        citations = result.citations
        cited.append(float(bool(citations)))
        own.append(float(any(c.note != ATTRIBUTED_NOTE for c in citations)))
        per_answer.append(len(citations))
        if citations:
            verified_share.append(sum(c.status == "verified" for c in citations) / len(citations))
        right_page.append(float(any((c.paper_id, c.page) in gold for c in citations)))
        if args.show:
            print(f"--- {q['id']}: {q['question']}\n{result.answer}\n")
    print(f"answers citing anything: {statistics.mean(cited):.2f} (with the model's own citations: "
          f"{statistics.mean(own):.2f}; the rest attributed by key terms); citations per answer: mean "
          f"{statistics.mean(per_answer):.1f}; verified: {statistics.mean(verified_share) if verified_share else 0:.2f} "
          f"of citations; answers citing a right page: {statistics.mean(right_page):.2f}; "
          f"wall p50 {statistics.median(walls) if walls else 0:.0f} s")
    desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
