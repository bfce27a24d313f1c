"""Sharing an answer with its evidence (issue 81): export an answer with five citations as a web
page and as a bundle, and verify the bundle offline.

    .venv/bin/python bench/share.py [--library /tmp/share-bench [--reuse]] [--keep] [--page-out answer.html]

Builds a library of three papers made with PyMuPDF (eight pages each, two columns of body text at
10 pt, printed page numbers that differ from the PDF's, a DOI), imports them with the provisioned
embedding model (the test MiniLM unless $RESEARCH_DESK_MODELS_DIR says otherwise), takes the funnel's
evidence for a question (no chat model: the answer's five claims are bound by hand to five
sentences on five pages, so the figures measure sharing, not a model), then prints, each the median
of 3: the HTML export's time and size, the bundle's, the annotated PDFs', and `verify`'s time
against the library and against a folder of the PDFs, in process and as the command
`research-desk verify` (its wall time includes starting Python and importing the core).
Targets: page ≤ 3 s and ≤ 3 MB; verify ≤ 5 s.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("RESEARCH_DESK_MODELS_DIR", str(Path.home() / ".cache" / "research-desk" / "test-models"))

import pymupdf  # noqa: E402

from app.core.desk import Desk  # noqa: E402
from app.core.events import Task  # noqa: E402
from app.core.records import Citation, Claim, Reference  # noqa: E402
from app.core.settings import Settings  # noqa: E402

QUESTION = "How were migration, glacier retreat and owl hearing measured, and what was found?"
# paper: (title, authors, DOI, first printed page, {pdf page: the sentence cited there})
PAPERS = {
    "kestrel": ("Kestrel Migration Timing in Alpine Valleys", ["Maria Lindqvist", "Tomas Berg"], "10.5555/kestrel.2019.14", 211,
                {3: "The median departure date was 14 September, with young birds leaving nine days after adults.",
                 6: "Birds carrying loggers heavier than 5 grams departed on average four days later than unburdened birds."}),
    "glacier": ("Glacier Retreat Measured by Drone Photogrammetry", ["Anil Gupta", "Sara Moretti"], "10.5555/glacier.2021.7", 45,
                {4: "The glacier front retreated 38 metres per year between 2015 and 2021, twice the rate of the previous decade."}),
    "owl": ("Barn Owls Hunt by Sound", ["Ines Duarte"], "10.5555/owl.2020.3", 1021,
            {2: "Owls located a hidden speaker within 2 degrees of azimuth in complete darkness.",
             5: "Accuracy fell to 11 degrees when one ear was plugged, and recovered within a week."}),
}
CLAIMS = [  # (paper, page, the claim, verdict)
    ("kestrel", 3, "Kestrels leave alpine valleys in mid-September, young birds later than adults.", "supported"),
    ("kestrel", 6, "Heavier loggers delay departure by a few days.", "partial"),
    ("glacier", 4, "The glacier front retreats about 38 metres a year, faster than before.", "supported"),
    ("owl", 2, "Barn owls locate sounds to within two degrees without light.", "supported"),
    ("owl", 5, "Plugging one ear makes owls far less accurate.", "supported"),
]
WORDS = ("the sample season valley birds ringing station logger data model estimate variance survey transect drone "
         "image ice front altitude sound tunnel speaker azimuth error trial night field site year record method "
         "analysis result measure rate change period observer count weather wind temperature").split()
PAGES, COLUMN_GAP, MARGIN = 8, 18, 54


def filler(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(9, 18))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def make_paper(path: Path, key: str, rng: random.Random) -> None:
    title, authors, doi, first, facts = PAPERS[key]
    doc = pymupdf.open()
    width, height = pymupdf.paper_rect("a4").br
    col = (width - 2 * MARGIN - COLUMN_GAP) / 2
    for pno in range(1, PAGES + 1):
        page = doc.new_page(width=width, height=height)
        y = MARGIN
        if pno == 1:
            page.insert_textbox(pymupdf.Rect(MARGIN, y, width - MARGIN, y + 60), title, fontsize=18, fontname="hebo")
            page.insert_textbox(pymupdf.Rect(MARGIN, y + 50, width - MARGIN, y + 70), ", ".join(authors), fontsize=11)
            page.insert_textbox(pymupdf.Rect(MARGIN, y + 68, width - MARGIN, y + 84), f"doi:{doi}", fontsize=9)
            y += 96
        paragraphs = [filler(rng, 5) for _ in range(8)]
        if pno in facts:
            paragraphs[3] = filler(rng, 2) + " " + facts[pno] + " " + filler(rng, 2)
        text = "\n\n".join(paragraphs)
        left = pymupdf.Rect(MARGIN, y, MARGIN + col, height - MARGIN - 20)
        right = pymupdf.Rect(MARGIN + col + COLUMN_GAP, y, width - MARGIN, height - MARGIN - 20)
        shown = _fitting(page, left, text)  # the left column, then the right one
        page.insert_textbox(left, text[:shown], fontsize=10, fontname="helv")
        if page.insert_textbox(right, text[shown:].lstrip(), fontsize=10, fontname="helv") < 0:
            sys.exit(f"{key} page {pno}: the text does not fit in two columns")
        page.insert_text((width / 2 - 8, height - MARGIN + 6), str(first + pno - 1), fontsize=9)
    doc.set_metadata({"title": title, "author": ", ".join(authors)})
    doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": first}])
    doc.save(path)
    doc.close()


def _fitting(page: pymupdf.Page, rect: pymupdf.Rect, text: str) -> int:
    """How many characters of `text` (cut at a paragraph or sentence end) fit in `rect`."""
    cuts = [i + 1 for i, ch in enumerate(text) if ch == "." and (i + 1 == len(text) or text[i + 1] in " \n")]
    best = 0
    scratch = pymupdf.open()
    for cut in cuts:
        p = scratch.new_page(width=page.rect.width, height=page.rect.height)
        if p.insert_textbox(rect, text[:cut], fontsize=10, fontname="helv") < 0:
            break
        best = cut
    scratch.close()
    return best


def cited_answer(desk: Desk):
    result = desk.research(QUESTION, Task(), evidence_only=True,
                           overrides={"cutoff_summaries": 0.0, "cutoff_evidence": 0.0, "k_evidence": 60, "evidence_tokens": 0})
    papers = {p.source_file.removesuffix(".pdf"): p for p in desk.papers()}
    answer, claims, citations = "", [], []
    for i, (key, page, claim, verdict) in enumerate(CLAIMS):
        fact = PAPERS[key][4][page]
        paper = papers[key]
        e = next((e for e in result.evidence if e.paper_id == paper.id and e.page == page and fact in " ".join(e.text.split())), None)
        if e is None:
            sys.exit(f"the evidence lacks {key} page {page}; raise k_evidence")
        tag = f"[{paper.id}, page {page}]"
        start = len(answer) + len(claim) + 1
        answer += f"{claim} {tag} "
        claims.append(Claim(claim, [e.number], verdict))
        citations.append(Citation(tag, paper.id, page, "verified" if verdict == "supported" else verdict, start,
                                  start + len(tag), e.number, None, "", verdict, fact, e.page_label, i))
    cited = sorted({c.paper_id for c in citations})
    for c in citations:
        c.reference_number = cited.index(c.paper_id) + 1
    by_id = {p.id: p for p in papers.values()}
    result.answer, result.claims, result.citations = answer.strip(), claims, citations
    result.references = [Reference(n, pid, by_id[pid].title, by_id[pid].authors, by_id[pid].published) for n, pid in enumerate(cited, 1)]
    return result


def _children_cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def median_time(fn, repeat: int = 3):
    times, value = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, default=None, help="where to build the library (default: a temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the library and the exports")
    ap.add_argument("--reuse", action="store_true", help="use the library --library holds from an earlier --keep run")
    ap.add_argument("--page-out", type=Path, default=None, help="also copy the exported page here (for screenshots)")
    args = ap.parse_args()
    root = args.library or Path(tempfile.mkdtemp(prefix="share-bench-"))
    reuse = args.reuse and (root / "lib").is_dir()
    if not reuse:
        shutil.rmtree(root, ignore_errors=True)
        (root / "pdfs").mkdir(parents=True)
        rng = random.Random(81)
        for key in PAPERS:
            make_paper(root / "pdfs" / f"{key}.pdf", key, rng)
    os.environ["RESEARCH_DESK_CONFIG_DIR"] = str(root / "config")  # never the user's settings
    desk = Desk(Settings(), library=str(root / "lib"))
    try:
        if not reuse:
            t = time.perf_counter()
            report = desk.add([root / "pdfs"])
            if not report.ok:
                sys.exit(f"import failed: {report.outcomes}")
            print(f"library: 3 papers × {PAGES} pages imported in {time.perf_counter() - t:.1f} s")
        result = cited_answer(desk)
        out = root / "out"
        html_s, page = median_time(lambda: desk.export("html", out / "answer.html", result))
        bundle_s, bundle = median_time(lambda: desk.export("bundle", out / "answer.zip", result))
        pdfs_s, written = median_time(lambda: desk.export("annotated-pdf", out / "annotated", result))
        verify_lib_s, rep_lib = median_time(lambda: desk.verify_bundle(bundle))
        verify_dir_s, rep_dir = median_time(lambda: desk.verify_bundle(bundle, pdfs=root / "pdfs"))
        command = [sys.executable, "-m", "app.cli", "verify", str(bundle), "--pdfs", str(root / "pdfs")]
        cpu_before = _children_cpu()
        cli_s, code = median_time(lambda: subprocess.run(command, capture_output=True, cwd=Path(__file__).resolve().parents[1]).returncode)
        cli_cpu = (_children_cpu() - cpu_before) / 3
        print(f"answer: {len(result.citations)} citations on {len({(c.paper_id, c.page) for c in result.citations})} pages of 3 papers")
        print(f"export html:          {html_s:6.2f} s   {page.stat().st_size / 1e6:5.2f} MB   (targets ≤ 3 s, ≤ 3 MB)")
        print(f"export bundle:        {bundle_s:6.2f} s   {bundle.stat().st_size / 1e6:5.2f} MB")
        print(f"export annotated-pdf: {pdfs_s:6.2f} s   {sum(p.stat().st_size for p in written.iterdir()) / 1e6:5.2f} MB in 3 files")
        print(f"verify (library):     {verify_lib_s:6.2f} s   {'all hold' if rep_lib.ok else 'FAILED'}   (target ≤ 5 s)")
        print(f"verify (--pdfs DIR):  {verify_dir_s:6.2f} s   {'all hold' if rep_dir.ok else 'FAILED'}")
        print(f"research-desk verify: {cli_s:6.2f} s   exit {code}   (the command's wall time, Python started and the core imported;"
              f" {cli_cpu:.2f} s of CPU)")
        if not (rep_lib.ok and rep_dir.ok):
            print("\n".join(rep_lib.lines() + rep_dir.lines()))
        if args.page_out:
            shutil.copy(page, args.page_out)
    finally:
        desk.close()
        if not args.keep and args.library is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
