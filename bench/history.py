"""History at scale (issue 53): 10,000 answers in a library's history table; list, search, reopen.

    .venv/bin/python bench/history.py [--answers 10000] [--library /tmp/history-bench]

Builds a library folder holding only the history table (no papers, no models), its answers the
size of real ones (a 1,200-character answer, 3 claims, 6 citations, 15 evidence passages of
800 characters with their focused sentences: ~25 KB of JSON each). They are written 500 to a
commit, then compacted, as the store's own compaction every 50 answers leaves them; then 50
answers are added one by one as research adds them. Prints, in milliseconds (median of 5 unless
said): listing all answers from a fresh Desk (cold: the first read after opening the library),
listing again (kept per table version), searching (a word in the questions, a phrase in the
answers, a word nowhere), reopening one answer (core) and showing it in the answer view
(offscreen Qt), listing into the History tab, and one add. Targets: list and search ≤ 200 ms, reopen ≤ 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.desk import Desk  # noqa: E402
from app.core.history.store import _row, history_schema  # noqa: E402
from app.core.records import Citation, Claim, Evidence, Reference, ResearchResult, Sentence  # noqa: E402
from app.core.settings import Settings  # noqa: E402

WORDS = ("estimator variance bootstrap sample kestrel glacier retreat bias robust median interval regression "
         "prior posterior likelihood outlier migration departure coverage asymptotic efficiency").split()
BATCH = 500


def fake_result(rng: random.Random, i: int) -> ResearchResult:
    text = lambda n: " ".join(rng.choice(WORDS) for _ in range(n))  # noqa: E731
    evidence = []
    for n in range(1, 16):
        body = text(120)
        evidence.append(Evidence(n, f"paper{rng.randrange(300):03d}", rng.randrange(1, 30), "", "Results", body, 0.7,
                                 sentences=[Sentence(body[:200], 0, 200, 0.8), Sentence(body[300:500], 300, 500, 0.6)]))
    answer = text(180) + " [paper001, page 3]"
    claims = [Claim(text(25), [k + 1], "supported") for k in range(3)]
    citations = [Citation("[paper001, page 3]", evidence[k].paper_id, evidence[k].page, "verified", claim=k % 3,
                          quote=evidence[k].sentences[0].text) for k in range(6)]
    refs = [Reference(k + 1, c.paper_id, text(8), ["A. Author", "B. Author"], "2020") for k, c in enumerate(citations)]
    return ResearchResult(query=f"question {i}: " + text(10), papers=[e.paper_id for e in evidence[:6]], evidence=evidence,
                          answer=answer, claims=claims, citations=citations, references=refs,
                          timings={"stage1_s": 0.2, "stage2_s": 0.3, "total_s": 9.5})


def timed(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answers", type=int, default=10_000)
    ap.add_argument("--library", default="/tmp/history-bench")
    ap.add_argument("--reuse", action="store_true", help="measure the library a previous run built")
    args = ap.parse_args()
    root = Path(args.library)
    rng = random.Random(53)
    if not args.reuse:
        build(root, args.answers, rng)
    measure(root, rng)
    return 0


def build(root: Path, answers: int, rng: random.Random) -> None:
    shutil.rmtree(root, ignore_errors=True)
    desk = Desk(Settings(), library=str(root))
    store = desk._history()  # noqa: SLF001 - the bench builds the table in bulk
    table = desk.library.open_table("history", history_schema())
    t = time.perf_counter()
    built = 0
    while built < answers - 50:
        rows = [_row(fake_result(rng, built + k), "bench-model", built + k + 1) for k in range(min(BATCH, answers - 50 - built))]
        table.add(pa.Table.from_pylist(rows, schema=history_schema()))
        built += len(rows)
    table.optimize()
    adds = []
    for k in range(50):
        result = fake_result(rng, built + k)
        t0 = time.perf_counter()
        store.add(result, "bench-model")
        adds.append((time.perf_counter() - t0) * 1000)
    size = sum(f.stat().st_size for f in (root / "index").rglob("*") if f.is_file())
    print(f"built {desk.history_count()} answers in {time.perf_counter() - t:.0f} s; index {size / 2**20:.0f} MB; "
          f"one answer's JSON {len(json.dumps(fake_result(rng, 0).to_dict())) / 1024:.0f} KB")
    print(f"add one answer (as research does): median {statistics.median(adds):.0f} ms, max {max(adds):.0f} ms")
    desk.close()


def measure(root: Path, rng: random.Random) -> None:
    t = time.perf_counter()
    fresh = Desk(Settings(), library=str(root))
    fresh.library.papers_by_id()
    print(f"open the library (LanceDB connection, paper list): {(time.perf_counter() - t) * 1000:.0f} ms")
    store = fresh._history()  # noqa: SLF001 - its kept listing is dropped to time fresh reads

    def cold() -> list:
        store._listing = None  # noqa: SLF001
        return fresh.history()

    entries = cold()
    cpu = time.process_time()
    wall = timed(cold)
    cpu = (time.process_time() - cpu) * 1000 / 5  # this process's CPU: on a shared machine, wall time waits for a core
    print(f"list {len(entries)} answers, cold (read from the table; median of 5): {wall:.0f} ms (CPU {cpu:.0f} ms)")
    print(f"list again (kept per table version): {timed(lambda: fresh.history()):.0f} ms")
    for label, query in (("a word of the questions", "question 9876"), ("a phrase of the answers", "bootstrap sample"),
                         ("a word nowhere", "xylophone")):
        found = len(fresh.history(query))
        print(f"search {label} ({query!r}, {found} found): {timed(lambda q=query: fresh.history(q)):.0f} ms")
    print(f"first search after a fresh read (reads the answers' text): {timed(lambda: (cold(), fresh.history('bootstrap'))):.0f} ms")
    numbers = [e.number for e in rng.sample(entries, 5)]
    t = time.perf_counter()
    records = [fresh.history_record(n) for n in numbers]
    print(f"reopen one answer (core, 5 random): {(time.perf_counter() - t) * 1000 / 5:.0f} ms each")
    from PySide6.QtWidgets import QApplication

    from app.ui.research.answer_view import AnswerView

    app = QApplication.instance() or QApplication(["bench", "-platform", "offscreen"])
    view = AnswerView()
    shown = timed(lambda: [view.show_result(r.result) for r in records], repeat=1) / len(records)
    print(f"show a reopened answer in the answer view (offscreen): {shown:.0f} ms each")
    view.deleteLater()
    from app.ui.history.pane import HistoryPane

    pane = HistoryPane()
    pane.resize(1000, 700)
    pane.show()

    def listed_on_screen() -> None:
        store._listing = None  # noqa: SLF001 - a fresh read, as after another window added an answer
        entries = fresh.history()
        pane.set_entries(entries, len(entries))
        pane.repaint()  # the table asks for the rows it shows
        app.processEvents()

    print(f"list {len(entries)} answers cold and show them in the History tab (offscreen): {timed(listed_on_screen):.0f} ms")
    pane.deleteLater()
    app.processEvents()
    fresh.close()


if __name__ == "__main__":
    raise SystemExit(main())
