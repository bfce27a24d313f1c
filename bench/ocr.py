"""OCR accuracy and speed: character error rate against the text layer, pages per second,
and the real scans imported and searched.

1. Accuracy/speed. Pages of real papers with a text layer (../shared/corpus/r-papers and
   ../shared/corpus/mixed, picked at random with a fixed seed, pages with < 400 characters
   skipped) are rendered to grey images at --dpi (optionally with scanner noise and a small
   rotation, --noisy), each image becomes the only content of a one-page PDF (a scan), and
   the importer's OCR (`app.core.pdf.ocr.recognise_page`) reads it back. The recognised text is
   compared with the page's own text layer.

   Normalisation before comparing, applied to both texts: Unicode NFKC (ligatures "ﬁ" → "fi",
   full-width forms), a hyphen at a line end joined with the next word ("compu-\\ntation" →
   "computation"), typographic quotes and dashes mapped to ASCII, all whitespace removed
   (line breaks and spacing are layout, not characters). CER = Levenshtein distance /
   reference length, two ways:
   - CER (aligned): per OCR line, against the text-layer words whose centres lie in that
     line's box (in x order); text-layer words in no OCR line count as deleted. This measures
     reading the characters, independent of the order in which blocks are read;
   - CER (page): the whole page as one string each. Reading order counts here: two columns or
     a figure label read in another order than the text layer's cost up to their length, so
     this is an upper bound.
   Pages/s counts rendering + recognition of a page, the models already loaded (their load
   time is printed apart).

2. Real scans (--scans, on by default): PLSvGLS.pdf (r-papers; its fonts decode to symbols)
   and the two image-only scans of mixed/ (metadata.jsonl: "scanned": true) are imported with
   the tiny test embedding model into a temporary library; `validate` must pass, each paper's
   text must contain words of its subject, and a search about its subject must return its
   passages.

    nice .venv/bin/python bench/ocr.py [--pages 20] [--dpi 200] [--noisy] [--no-scans]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np
import pymupdf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.pdf import ocr  # noqa: E402
from app.core.pdf.extract import TEXT_FLAGS, has_text_layer  # noqa: E402

CORPORA = [REPO.parent / "shared" / "corpus" / "r-papers", REPO.parent / "shared" / "corpus" / "mixed"]

# The real scans and words that their text must contain / a question about their subject.
SCANS = {
    "r-papers/PLSvGLS.pdf": (["penalized", "least squares", "mixed"], "penalized least squares representation of linear mixed models"),
    "mixed/hong1999-fifth-order-shallow-water-imageonly.pdf": (["solitary", "shallow water"], "exact solitary wave solutions of fifth-order shallow water equations"),
    "mixed/severens-asih-thermal-plasma-scanned.pdf": (["hydrogen", "plasma"], "hydrogen incorporation in a-Si:H films grown by expanding thermal plasma"),
}

_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "−": "-", "\u00ad": ""})


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)  # line-end hyphenation
    return re.sub(r"\s+", "", text)


def levenshtein(a: str, b: str) -> int:
    """Edit distance, one numpy row at a time (insertions resolved by a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    prev = idx.copy()
    for i, ch in enumerate(a.encode("utf-32-le").decode("utf-32-le"), start=1):
        cost = (bb != ord(ch)).astype(np.int64)
        row = np.empty_like(prev)
        row[0] = i
        row[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        prev = np.minimum.accumulate(row - idx) + idx
    return int(prev[-1])


def aligned_errors(result: ocr.OcrPage, ref_words: list[tuple]) -> tuple[int, int]:
    """(edit distance summed over OCR lines against the reference words inside each, plus
    reference characters in no OCR line; reference characters in all)."""
    taken = [False] * len(ref_words)
    errors = 0
    for line in result.lines:
        box = pymupdf.Rect(line.bbox) + (-2, -2, 2, 2)
        inside = []
        for i, w in enumerate(ref_words):
            if not taken[i] and box.contains(pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2)):
                taken[i] = True
                inside.append(w)
        ref = normalise(" ".join(w[4] for w in sorted(inside, key=lambda w: w[0])))
        errors += levenshtein(normalise(line.text), ref)
    missed = sum(len(normalise(w[4])) for w, t in zip(ref_words, taken) if not t)
    chars = sum(len(normalise(w[4])) for w in ref_words)
    return errors + missed, chars


def pick_pages(n: int, seed: int) -> list[tuple[Path, int]]:
    pdfs = sorted(p for c in CORPORA if c.is_dir() for p in c.glob("*.pdf"))
    rng = random.Random(seed)
    rng.shuffle(pdfs)
    picks: list[tuple[Path, int]] = []
    while len(picks) < n and pdfs:
        for pdf in list(pdfs):
            with pymupdf.open(pdf) as doc:
                if not has_text_layer(doc):
                    pdfs.remove(pdf)
                    continue
                pno = rng.randrange(doc.page_count)
                if len(doc[pno].get_text(flags=TEXT_FLAGS).strip()) >= 400 and (pdf, pno) not in picks:
                    picks.append((pdf, pno))
            if len(picks) >= n:
                break
    return picks


def as_scan(page: pymupdf.Page, dpi: int, noisy: bool, rng: np.random.Generator) -> pymupdf.Document:
    """A one-page image-only PDF of `page` as a scanner at `dpi` would make it."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    if noisy:
        import cv2

        img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width).astype(np.float32)
        h, w = img.shape
        rot = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-1.0, 1.0)), 1.0)
        img = cv2.warpAffine(img, rot, (w, h), borderValue=255)
        img = np.clip(img + rng.normal(0, 12, img.shape), 0, 255).astype(np.uint8)
        pix = pymupdf.Pixmap(pymupdf.csGRAY, w, h, img.tobytes())
    scan = pymupdf.open()
    scan.new_page(width=page.rect.width, height=page.rect.height).insert_image(page.rect, pixmap=pix)
    return scan


def accuracy(args) -> None:
    started = time.perf_counter()
    ocr._engine()
    print(f"engine: {ocr.engine_name()}; models loaded in {time.perf_counter() - started:.1f} s")
    rng = np.random.default_rng(args.seed)
    rows = []
    for pdf, pno in pick_pages(args.pages, args.seed):
        with pymupdf.open(pdf) as doc:
            page = doc[pno]
            reference = page.get_text(flags=TEXT_FLAGS)
            ref_words = page.get_text("words", flags=TEXT_FLAGS)
            scan = as_scan(page, args.dpi, args.noisy, rng)
        t0 = time.perf_counter()
        result = ocr.recognise_page(scan[0], dpi=args.dpi)
        secs = time.perf_counter() - t0
        ref_ns, got_ns = normalise(reference), normalise(result.text)
        cer_page = levenshtein(got_ns, ref_ns) / max(1, len(ref_ns))
        errors, chars = aligned_errors(result, ref_words)
        cer = errors / max(1, chars)
        rows.append((cer, cer_page, secs, chars))
        print(f"{pdf.parent.name}/{pdf.name} p{pno + 1}: CER aligned {cer:6.2%}, page {cer_page:6.2%}  "
              f"{chars} chars  {secs:5.1f} s", flush=True)
    if not rows:
        print("no pages found (is ../shared/corpus there?)")
        return
    total_chars = sum(r[3] for r in rows)
    pooled = sum(r[0] * r[3] for r in rows) / total_chars
    total_s = sum(r[2] for r in rows)
    load = os.getloadavg()[0]
    print(f"\n{len(rows)} pages at {args.dpi} dpi{' with noise and rotation' if args.noisy else ''}: "
          f"CER aligned median {statistics.median(r[0] for r in rows):.2%}, pooled {pooled:.2%}; "
          f"CER page median {statistics.median(r[1] for r in rows):.2%}; "
          f"{len(rows) / total_s:.3f} pages/s ({total_s / len(rows):.1f} s a page) on {os.cpu_count()} cores, "
          f"load average {load:.1f}")


def real_scans() -> bool:
    from app.core.desk import Desk
    from app.core.models import provision
    from app.core.settings import ModelConfig, Settings

    corpus = REPO.parent / "shared" / "corpus"
    paths = [corpus / rel for rel in SCANS if (corpus / rel).is_file()]
    if not paths:
        print("real scans: not found")
        return True
    models = provision.ensure_test_models(Path(os.environ.get("RESEARCH_DESK_MODELS_DIR")
                                               or Path.home() / ".cache" / "research-desk" / "test-models"))
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(chat=ModelConfig(path=str(models["chat"])),
                            embedding=ModelConfig(path=str(models["embedding"]), context_length=512))
        desk = Desk(settings, library=str(Path(tmp) / "lib"))
        try:
            started = time.perf_counter()
            report = desk.add(paths)
            secs = time.perf_counter() - started
            pages = sum(p.page_count for p in desk.library.list_papers())
            print(f"\nreal scans: {len(paths)} files, {pages} pages imported in {secs:.0f} s")
            for o in report.outcomes:
                print(f"  {o.status}: {o.message}")
            by_file = {p.source_file: p for p in desk.library.list_papers()}
            for rel, (words, question) in SCANS.items():
                paper = by_file.get(Path(rel).name)
                if paper is None:
                    continue
                text = desk.library.text_path(paper.id).read_text(encoding="utf-8").lower()
                found = [w for w in words if w in text]
                result = desk.funnel().run(question, evidence_only=True)
                mine = [e for e in result.evidence if e.paper_id == paper.id]
                layer = json.loads((desk.library.root / "text" / f"{paper.id}.ocr.json").read_text(encoding="utf-8"))
                print(f"  {Path(rel).name}: id {paper.id}, title {paper.title!r}, status {paper.status}; "
                      f"OCR'd pages {[p['page'] for p in layer['pages']]}; words {found}/{words}; "
                      f"search → {len(mine)} of {len(result.evidence)} passages from it"
                      + (f", first on page {mine[0].page}" if mine else ""))
                ok &= paper.status == "indexed" and len(found) == len(words) and bool(mine)
            validation = desk.validate()
            problems = [(c.paper_id, c.problems) for c in validation.checks if not c.ok]
            print(f"  validate: {'ok' if validation.ok else problems or validation.stale_reason}")
            ok &= validation.ok
        finally:
            desk.close()
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--dpi", type=int, default=200)
    ap.add_argument("--noisy", action="store_true", help="add scanner noise and up to ±1° rotation")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-scans", dest="scans", action="store_false", help="skip importing the real scans")
    args = ap.parse_args()
    if not ocr.available():
        print(f"OCR unavailable: {ocr.unavailable_reason()}")
        return 1
    if args.pages:
        accuracy(args)
    return 0 if not args.scans or real_scans() else 1


if __name__ == "__main__":
    raise SystemExit(main())
