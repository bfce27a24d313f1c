"""A library of 10,000 papers (issue 80, item 6): import rates, open, list, filter, evidence, memory, kill.

Targets (2 cores): the library opens ≤ 2 s, evidence (stage 1+2) ≤ 2 s, peak memory ≤ 2 GB, a killed
import resumes with nothing lost or duplicated. Every figure is printed with the load (`uptime`).

Steps (`--steps`, all by default):

* `import`: the real importer (`Importer`: extraction, chunking, rows, full-text index) on
  `--sample` generated PDFs, twice: with the real MiniLM (`--embed-sample` of them: the import a
  user waits for today), and with a bench-side embedder that returns synthetic vectors at once
  (the words phase alone: what "searchable as soon as read" costs). Per-paper rates, then both
  extrapolated to the library size: until all papers are word-searchable, until all are embedded.
* `bulk`: the library of `--papers` papers built through the library's own writers
  (`Library.upsert_papers`, `append_chunks`, `finish_writes`: the rows, full-text and vector
  indices import makes), from the generator's page text (no PDF extraction: 140,000 pages at
  ~30 pages/s are hours) and with synthetic vectors (bench/scale.py's method: real MiniLM
  embeddings of corpus passages, mixed with noise; a chunk's vector is drawn around a passage of
  the corpus paper its sentences mostly come from). Chunked by the app's `chunk_pages`.
* `measure`: each in a fresh process: open (`Desk.open_library` until the list is ready), list and
  filters (year range + author on the list, the same as a LanceDB `where` built with sql_filter,
  a tag through `scope.resolve`), a text search, evidence latency (stage 1+2, hybrid, real MiniLM
  query embedding) on 20 development questions of bench/questions/r-papers.jsonl; peak RSS each.
* `kill`: a real CLI import (`research-desk add`) of `--kill-papers` short generated PDFs, SIGKILLed
  at a random moment (one per seed), then run again: papers and chunks counted, no paper lost, no
  duplicate chunk id or (paper, chunk_index), every status final.

With `--papers` under 10,000 the figures that grow with the library are extrapolated to 10,000
and the output says so. PDFs, sentences, base vectors and built libraries are kept in `--keep`.

    nice -n 15 .venv/bin/python bench/library_scale.py --papers 10000 [--steps bulk measure]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from scale import du, load  # noqa: E402  (bench/scale.py)
import scale_papers as gen  # noqa: E402

TARGET_PAPERS = 10_000
BASE_PER_TOPIC = 20
WRITE_PAPERS = 200  # papers per LanceDB commit in the bulk build


def _status_mb(field: str) -> float | None:
    """A memory figure of this process from /proc/self/status, in MB (None where there is none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def peak_mb() -> float:
    """This process's peak resident memory. VmHWM, not getrusage's ru_maxrss: a child started
    by subprocess reports its parent's peak there (kept across fork and exec)."""
    peak = _status_mb("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), beside the peak: where in a build it grows."""
    return _status_mb("VmRSS") or 0.0


def say(text: str) -> None:
    print(f"{text}   (load {load()})", flush=True)


# -- synthetic vectors -------------------------------------------------------------
def topic_bases(keep: Path, sentences: dict[str, list[str]], embedder, per_topic: int = BASE_PER_TOPIC) -> dict[str, np.ndarray]:
    """Real MiniLM embeddings of `per_topic` passages of each corpus paper, cached."""
    cache = keep / f"bases-{per_topic}.npz"
    if cache.exists():
        return dict(np.load(cache))
    out = {}
    for name, sents in sentences.items():
        rng = random.Random(name)
        texts = [" ".join(rng.sample(sents, 3))[:600] for _ in range(per_topic)]
        out[name] = embedder.embed(texts).astype(np.float32)
    np.savez(cache, **out)
    return out


def topic_vectors(rng: np.random.Generator, bases: dict[str, np.ndarray], topic: str, n: int) -> np.ndarray:
    """bench/scale.py's v = norm(e_a + 0.5 e_b + 0.4 g), e_a a passage of the paper's topic."""
    own = bases[topic][rng.integers(0, len(bases[topic]), n)]
    every = np.concatenate(list(bases.values()))
    other = every[rng.integers(0, len(every), n)]
    noise = rng.standard_normal(own.shape).astype(np.float32) / np.sqrt(own.shape[1])
    v = own + 0.5 * other + 0.4 * noise
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


class TopicEmbedder:
    """The bench's hook into the importer: the real model's name and tokenizer (so chunks are
    sized as in a real import), synthetic vectors instead of its embeddings (no model time)."""

    def __init__(self, real, bases: dict[str, np.ndarray]) -> None:
        self.real, self.bases = real, bases
        self.name, self.dimension, self.max_tokens = real.name, real.dimension, real.max_tokens
        self.rng = np.random.default_rng(0)

    def embed(self, texts: list[str]) -> np.ndarray:
        return topic_vectors(self.rng, self.bases, next(iter(self.bases)), len(texts))

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def count_tokens(self, text: str) -> int:
        return self.real.count_tokens(text)

    def tokenizer_counter(self):
        return self.real.tokenizer_counter()

    def leave_cores(self, cores: int) -> None:
        pass  # no model threads: the vectors are synthetic

    def close(self) -> None:
        pass


# -- step: import on a sample --------------------------------------------------------
def step_import(args, keep: Path, sentences, vocab, desk_factory) -> dict:
    from app.core.events import PaperImported, Task
    from app.core.ingest.pipeline import Importer

    pdfs = gen.ensure_pdfs(keep / "pdfs", args.seed, range(args.sample), sentences, vocab)
    out = {}
    for mode, files in (("words", pdfs), ("embedded", pdfs[:args.embed_sample])):
        root = keep / f"import-{mode}"
        shutil.rmtree(root, ignore_errors=True)
        desk = desk_factory(root)
        real = desk.embedder()
        real.embed(["warm up"])
        embedder = TopicEmbedder(real, topic_bases(keep, sentences, real, args.bases)) if mode == "words" else real
        added: list[float] = []
        task = Task(sink=lambda e: added.append(time.perf_counter() - t) if isinstance(e, PaperImported) else None)
        t, c = time.perf_counter(), time.process_time()
        report = Importer(desk.library, embedder, embedding_identity=desk.embedding_identity(), task=task).run(files)
        seconds, cpu = time.perf_counter() - t, time.process_time() - c  # CPU: all threads, llama.cpp's too
        # Word-searchable: listed, and a text search for a phrase of its title finds it.
        listed = {p.id: p for p in desk.papers()}
        found = sum(1 for p in listed.values() if any(h.paper_id == p.id for h in desk.search_text(p.title.split(":")[0], limit=50)))
        n = report.count("added")
        out[mode] = dict(papers=n, pages=report.pages, chunks=report.chunks, seconds=seconds, cpu_s=cpu, added_at=added,
                         per_paper=seconds / max(1, n), chunks_per_s=report.chunks / seconds, found=found, listed=len(listed))
        say(f"import ({'real MiniLM' if mode == 'embedded' else 'words phase: synthetic vectors'}) of {n} generated papers, "
            f"{report.pages} pages, {report.chunks} chunks: {seconds:.1f} s = {seconds / max(1, n):.2f} s/paper, "
            f"{report.pages / seconds:.1f} pages/s, {report.chunks / seconds:.1f} chunks/s; CPU {cpu / max(1, n):.2f} s/paper; "
            f"{len(listed)} listed, {found} found by a text search of their title; first reported added at "
            f"{added[0] if added else 0:.1f} s, last at {added[-1] if added else 0:.1f} s; peak RSS {peak_mb():.0f} MB")
        desk.close()
    words, emb = out["words"], out["embedded"]
    chunks_per_paper = words["chunks"] / max(1, words["papers"])
    words_h = TARGET_PAPERS * words["per_paper"] / 3600
    embed_h = TARGET_PAPERS * chunks_per_paper / emb["chunks_per_s"] / 3600
    say(f"extrapolated to {TARGET_PAPERS:,} papers ({chunks_per_paper:.0f} chunks/paper): word-searchable after "
        f"{words_h:.1f} h (words phase, {words['per_paper']:.2f} s/paper); all embedded after {embed_h:.1f} h "
        f"(real MiniLM, {emb['chunks_per_s']:.1f} chunks/s; today's import makes a paper searchable only then)")
    # Wall time on a shared machine is mostly waiting for a core; CPU seconds over 2 cores is what
    # an idle 2-core machine would take (an upper bound on its speed: no thread waits for another).
    cores = os.cpu_count() or 2
    say(f"from CPU time over {cores} cores (the machine idle): word-searchable after "
        f"{TARGET_PAPERS * words['cpu_s'] / max(1, words['papers']) / cores / 3600:.1f} h, all embedded after "
        f"{TARGET_PAPERS * chunks_per_paper * emb['cpu_s'] / max(1, emb['chunks']) / cores / 3600:.1f} h")
    return out


# -- step: bulk build through the library's writers ----------------------------------------
def step_bulk(args, keep: Path, sentences, vocab, desk_factory) -> Path:
    from app.core.ingest.chunking import chunk_pages
    from app.core.ingest.summary_index import profile_chunks
    from app.core.library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS
    from app.core.records import PageText, Paper
    from app.core.units import page_marker

    root = keep / f"lib{args.papers}"
    done = root / "bulk.json"
    if done.exists():
        say(f"bulk library of {args.papers:,} papers kept from an earlier run: {json.loads(done.read_text())}")
        return root
    shutil.rmtree(root, ignore_errors=True)
    desk = desk_factory(root)
    real = desk.embedder()
    bases = topic_bases(keep, sentences, real, args.bases)
    lib = desk.library
    lib.set_meta(embedding=desk.embedding_identity())
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    n_chunks = 0
    for start in range(0, args.papers, WRITE_PAPERS):
        papers, content, content_vecs, summary, summary_vecs = [], [], [], [], []
        for i in range(start, min(args.papers, start + WRITE_PAPERS)):
            spec = gen.make_spec(i, args.seed, sentences, vocab)
            pid = f"paper-{args.seed}-{i:05d}"
            paper = Paper(pid, spec.title, spec.authors, str(spec.year), spec.abstract, spec.doi, "", f"{pid}.pdf",
                          len(spec.pages), [], f"hash-{pid}", "2026-12-07T00:00:00Z", status="indexed",
                          venue=spec.journal, tags=spec.tags)
            pages = [PageText(page=n, label="", markdown=md) for n, md in enumerate(spec.pages, 1)]
            # The estimate, not the model's tokenizer: llama.cpp's tokenize was 90 % of this loop's
            # time (60,000 calls for 30 papers); chunk sizes differ from a real import's by a few %.
            chunks = list(chunk_pages(pid, pages))
            for k, c in enumerate(chunks):
                c.chunk_index, c.source_type = k, "content"
            side = profile_chunks(paper, [h for h, _ in spec.sections])
            papers.append(paper)
            content += chunks
            summary += side
            content_vecs.append(topic_vectors(rng, bases, spec.topic, len(chunks)))
            summary_vecs.append(topic_vectors(rng, bases, spec.topic, len(side)))
            lib.text_path(pid).write_text(f"# {spec.title}\n\n" + "".join(
                f"{page_marker(p.page, p.label)}\n\n{p.markdown}\n\n" for p in pages), encoding="utf-8")
        lib.upsert_papers(papers)
        lib.append_chunks(CONTENT_CHUNKS, content, np.vstack(content_vecs))
        lib.append_chunks(SUMMARY_CHUNKS, summary, np.vstack(summary_vecs))
        n_chunks += len(content)
        if (start // WRITE_PAPERS) % 10 == 0:
            print(f"  bulk: {start + len(papers):,} papers, {n_chunks:,} chunks, {time.perf_counter() - t0:.0f} s, "
                  f"RSS {rss_mb():.0f} MB (peak {peak_mb():.0f})", flush=True)
    rows_s = time.perf_counter() - t0
    t = time.perf_counter()
    lib.finish_writes()
    index_s = time.perf_counter() - t
    record = dict(papers=args.papers, chunks=n_chunks, rows_s=round(rows_s, 1), index_s=round(index_s, 1),
                  peak_mb=round(peak_mb()), load=load())
    done.write_text(json.dumps(record))
    desk.close()
    say(f"bulk build of {args.papers:,} papers ({n_chunks:,} content chunks; generator text, synthetic vectors, "
        f"library writers): rows {rows_s:.0f} s, full-text + vector indices and compaction {index_s:.0f} s; "
        f"peak RSS {peak_mb():.0f} MB")
    return root


# -- step: measurements, each in a fresh process -------------------------------------------
def dev_questions(n: int) -> list[str]:
    dev = set(json.loads((REPO / "bench" / "questions" / "split.json").read_text())["development"])
    rows = [json.loads(line) for line in (REPO / "bench" / "questions" / "r-papers.jsonl").read_text().splitlines() if line.strip()]
    return [r["question"] for r in rows if r["id"] in dev][:n]


def probe(kind: str, root: str, n_questions: int, spawned: float) -> dict:
    """Runs in a fresh process (`--probe`): one measurement, printed as JSON. `spawned`: the
    parent's clock (time.time) when it started this process."""
    from app.core.desk import Desk

    out: dict = {"imports_s": time.time() - spawned}  # interpreter start and imports (bench/scale.py's too)
    if kind == "open":
        t, c = time.perf_counter(), time.process_time()
        desk = Desk(library=root)
        snap = desk.open_library()
        out.update(open_s=time.perf_counter() - t, open_cpu_s=time.process_time() - c, papers=len(snap.papers), from_spawn_s=time.time() - spawned)
        from app.core.library.sql_filter import sql_str
        from app.core.scope import Scope, resolve

        t = time.perf_counter()
        papers = desk.papers()
        out["list_s"] = time.perf_counter() - t
        author = next(p for p in papers[len(papers) // 2:] if "2005" <= p.year <= "2015").authors[0]
        t = time.perf_counter()
        hits = [p for p in papers if "2005" <= p.year <= "2015" and author in p.authors]
        out.update(filter_s=time.perf_counter() - t, filter_hits=len(hits))
        t = time.perf_counter()
        where = f"published >= '2005' AND published <= '2015' AND array_has(authors, {sql_str(author)})"
        rows = desk.library.papers_table().search().where(where).limit(100_000).to_list()
        out.update(sql_filter_s=time.perf_counter() - t, sql_filter_hits=len(rows))
        t = time.perf_counter()
        out["tag_hits"] = len(resolve(Scope(tag="econometrics"), papers))
        out["tag_s"] = time.perf_counter() - t
        t = time.perf_counter()
        out["text_hits"] = len(desk.search_text("heteroskedasticity consistent", limit=200))
        out["text_search_s"] = time.perf_counter() - t
    else:
        desk = Desk(library=root)
        funnel = desk.funnel(overrides={"cutoff_summaries": -1.0, "cutoff_evidence": -1.0})
        questions = dev_questions(n_questions)
        t = time.perf_counter()
        funnel.run(questions[0], evidence_only=True)
        out["first_s"] = time.perf_counter() - t  # the model's load and cold caches included
        lat, cpu = [], []
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            result = funnel.run(q, evidence_only=True)
            lat.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)  # all threads: on a busy machine wall time is mostly waiting
        lat.sort()
        out["cpu_p50_s"] = statistics.median(cpu)
        out.update(n=len(lat), p50_s=statistics.median(lat), p95_s=lat[min(len(lat) - 1, int(0.95 * len(lat)))],
                   evidence=len(result.evidence))
    out["peak_mb"] = peak_mb()
    desk.close()
    return out


def run_probe(kind: str, root: Path, n_questions: int) -> dict:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--probe", kind, str(root), str(time.time()), "--questions", str(n_questions)],
                          capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"probe {kind} failed:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["process_s"] = time.perf_counter() - t
    return out


def step_measure(args, root: Path) -> dict:
    scale = TARGET_PAPERS / args.papers
    note = "" if scale == 1 else f" [measured at {args.papers:,} papers; ×{scale:g} where it grows with the library: extrapolated]"
    o = run_probe("open", root, args.questions)
    say(f"open {o['papers']:,} papers (fresh process): Desk + open_library {o['open_s']:.2f} s (CPU {o['open_cpu_s']:.2f} s) after {o['imports_s']:.2f} s "
        f"of interpreter start and imports = list ready {o['from_spawn_s']:.2f} s after the process started; peak RSS {o['peak_mb']:.0f} MB{note}")
    say(f"list again {o['list_s'] * 1000:.1f} ms; filter year 2005–2015 + author on the list {o['filter_s'] * 1000:.1f} ms "
        f"({o['filter_hits']} papers), as a LanceDB where {o['sql_filter_s'] * 1000:.1f} ms ({o['sql_filter_hits']}); "
        f"tag via scope {o['tag_s'] * 1000:.1f} ms ({o['tag_hits']}); text search {o['text_search_s'] * 1000:.0f} ms "
        f"({o['text_hits']} hits)")
    e = run_probe("evidence", root, args.questions)
    say(f"evidence (stage 1+2, hybrid, MiniLM query) over {e['n']} development questions: p50 {e['p50_s']:.2f} s, "
        f"p95 {e['p95_s']:.2f} s, CPU p50 {e['cpu_p50_s']:.2f} s; first question {e['first_s']:.1f} s (model load); peak RSS {e['peak_mb']:.0f} MB{note}")
    index, text = du(root / "index"), du(root / "text")
    pdf_mb = statistics.mean(p.stat().st_size for p in (args.keep_path / "pdfs").glob("*.pdf")) / 2**20 if (args.keep_path / "pdfs").exists() else 0
    say(f"disk: index {index / 2**30:.2f} GiB, text {text / 2**30:.2f} GiB (×{scale:g} for {TARGET_PAPERS:,}); "
        f"the PDFs would add {pdf_mb * TARGET_PAPERS / 1024:.1f} GiB ({pdf_mb:.2f} MiB each, generated)")
    return {"open": o, "evidence": e}


# -- step: kill and resume ------------------------------------------------------------
def step_kill(args, keep: Path, sentences, vocab) -> list[dict]:
    from app.core.library.store import CONTENT_CHUNKS, Library

    folder = keep / "kill-pdfs"
    gen.ensure_pdfs(folder, args.seed + 1, range(args.kill_papers), sentences, vocab, pages=args.kill_pages)
    results = []
    for seed in range(args.kill_seeds):
        root = keep / f"kill-{seed}"
        shutil.rmtree(root, ignore_errors=True)
        cmd = [sys.executable, "-m", "app.cli", "--library", str(root), "add", str(folder)]
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # The clock starts at the import's first write (the papers table appears): on a busy
        # machine the CLI's start alone took over 30 s, and a kill then tests nothing.
        while proc.poll() is None and not (root / "index" / "papers.lance").exists():
            time.sleep(0.1)
        at = random.Random(seed).uniform(*args.kill_window)
        time.sleep(at)
        finished_first = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        lib = Library(root)
        before = (len(lib.list_papers()), lib.count_chunks(CONTENT_CHUNKS)) if (root / "index").exists() else (0, 0)
        again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        lib = Library(root)
        papers = lib.list_papers()
        rows = lib.chunks_table(CONTENT_CHUNKS).to_arrow().select(["id", "paper_id", "chunk_index"]).to_pylist()
        ids = [r["id"] for r in rows]
        keys = {(r["paper_id"], r["chunk_index"]) for r in rows}
        result = dict(seed=seed, killed_at_s=round(at, 1), finished_before_kill=finished_first,
                      before=before, rerun_rc=again.returncode, papers=len(papers), chunks=len(rows),
                      lost=args.kill_papers - len(papers), duplicate_ids=len(ids) - len(set(ids)),
                      duplicate_keys=len(rows) - len(keys),
                      not_final=sum(p.status not in ("indexed", "failed") for p in papers),
                      papers_without_chunks=sum(1 for p in papers if not any(k[0] == p.id for k in keys)))
        result["ok"] = (again.returncode == 0 and result["lost"] == 0 and result["duplicate_ids"] == 0
                        and result["duplicate_keys"] == 0 and result["not_final"] == 0 and result["papers_without_chunks"] == 0)
        say(f"kill seed {seed}: SIGKILL {at:.1f} s after the first write, with {before[0]} papers / {before[1]} chunks written; rerun rc "
            f"{again.returncode}: {len(papers)} of {args.kill_papers} papers, {len(rows)} chunks, lost {result['lost']}, "
            f"duplicate ids {result['duplicate_ids']}, duplicate (paper, index) {result['duplicate_keys']}, "
            f"not final {result['not_final']} → {'OK' if result['ok'] else 'FAILED'}")
        results.append(result)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=TARGET_PAPERS, help="library size (under 10,000: extrapolated)")
    ap.add_argument("--sample", type=int, default=40, help="PDFs imported for the words-phase rate")
    ap.add_argument("--embed-sample", type=int, default=3, help="of them, imported with the real MiniLM")
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--kill-seeds", type=int, default=3)
    ap.add_argument("--kill-papers", type=int, default=20)
    ap.add_argument("--kill-pages", type=int, default=2, help="pages of each kill-test paper (MiniLM runs ~3 chunks/s)")
    ap.add_argument("--kill-window", type=float, nargs=2, default=(1.0, 60.0),
                    help="seconds after the import's first write: the kill lands in it")
    ap.add_argument("--bases", type=int, default=BASE_PER_TOPIC, help="embedded passages per corpus paper")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default="/tmp/rds-libscale")
    ap.add_argument("--steps", nargs="+", default=["import", "bulk", "measure", "kill"])
    ap.add_argument("--probe", nargs=3, metavar=("KIND", "LIBRARY", "SPAWNED"), help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write every figure here")
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe[0], args.probe[1], args.questions, float(args.probe[2]))))
        return 0
    keep = args.keep_path = Path(args.keep)
    keep.mkdir(parents=True, exist_ok=True)
    sentences = gen.corpus_sentences(keep / "sentences.json")
    vocab = gen.title_words(sentences)
    from app.core.desk import Desk

    figures: dict = {"papers": args.papers}
    say(f"library scale bench: {args.papers:,} papers (target {TARGET_PAPERS:,}), steps {' '.join(args.steps)}, keep {keep}")
    if "import" in args.steps:
        figures["import"] = step_import(args, keep, sentences, vocab, lambda root: Desk(library=str(root)))
    root = keep / f"lib{args.papers}"
    if "bulk" in args.steps:
        root = step_bulk(args, keep, sentences, vocab, lambda root: Desk(library=str(root)))
        figures["bulk"] = json.loads((root / "bulk.json").read_text())
    if "measure" in args.steps:
        figures["measure"] = step_measure(args, root)
    if "kill" in args.steps:
        figures["kill"] = step_kill(args, keep, sentences, vocab)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("RESEARCH_DESK_MODELS_DIR", str(Path.home() / ".cache/research-desk/test-models"))
    sys.exit(main())
