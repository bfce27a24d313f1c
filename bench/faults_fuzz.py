"""Fuzzed PDFs for bench/faults.py: mutated, truncated, huge, deeply nested, decompression bombs.

`make_corpus(folder, n, seed)` writes n files and returns (path, kind) pairs. The structured
kinds are written by hand (a tiny PDF writer with a correct xref) so that they reach the
parser intact; the mutated kinds start from small valid papers built with PyMuPDF.

`worker(library)` is the import side: it reads one PDF path per line on stdin, imports it
through `Desk.add` (the product's import, one file at a time) and prints one JSON line per
file. bench/faults.py runs it in a subprocess and kills it when a file exceeds the limit.
"""

from __future__ import annotations

import functools
import json
import random
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MARK = "FUZZ "  # the worker's own lines: MuPDF and the OCR engine may print on stdout too
KINDS = ("flip", "truncate", "splice", "garbage", "huge-pages", "nesting", "bomb", "image-bomb", "xref-loop")


def write_pdf(objects: list[bytes], root: int = 1, info: int | None = None) -> bytes:
    """A PDF whose object i+1 is objects[i], with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    trailer = b"/Size %d /Root %d 0 R" % (len(objects) + 1, root)
    if info:
        trailer += b" /Info %d 0 R" % info
    out += b"trailer\n<< " + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"", compress: bool = True) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _page_doc(content: bytes, extra_page: bytes = b"", more: list[bytes] | None = None, count: int = 1, kids: bytes = b"3 0 R") -> bytes:
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >>%s >> /Contents 4 0 R >>" % extra_page,
        _stream(content),
        FONT,
    ]
    return write_pdf(objs + (more or []))


def _text(words: str) -> bytes:
    return b"BT /F1 12 Tf 72 720 Td (" + words.encode() + b") Tj ET"


def huge_pages(rng: random.Random) -> bytes:
    """A page tree claiming millions of pages, or really holding many references to one page."""
    if rng.random() < 0.5:
        return _page_doc(_text("A page among many"), count=rng.choice([10**6, 10**9, 2**31 - 1]))
    n = rng.choice([20_000, 100_000, 300_000])
    return _page_doc(_text("The same page again"), count=n, kids=b" ".join([b"3 0 R"] * n))


def nesting(rng: random.Random) -> bytes:
    depth = rng.choice([1_000, 10_000, 100_000, 1_000_000])
    kind = rng.choice(["array", "dict"])
    deep = b"[" * depth + b"]" * depth if kind == "array" else b"<< /A " * depth + b"1" + b" >>" * depth
    if rng.random() < 0.5:  # in the page's resources, which text extraction reads
        return _page_doc(_text("Deep inside"), extra_page=b" /Deep " + deep)
    return _page_doc(_text("Deep inside"), more=[deep])


def bomb(rng: random.Random) -> bytes:
    """A content stream that inflates to 64-512 MB (of spaces and repeated text operators)."""
    size = rng.choice([64, 128, 256, 512]) * 2**20
    unit = rng.choice([b" ", b"BT /F1 12 Tf 72 720 Td (x) Tj ET\n"])
    data = _inflating(size, unit)
    content = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return write_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        content,
        FONT,
    ])


@functools.lru_cache(maxsize=None)
def _inflating(size: int, unit: bytes) -> bytes:
    """Deflated data that inflates to `size` bytes of `unit` (made once per size: deflating 512 MB takes seconds)."""
    comp = zlib.compressobj(9)
    data = comp.compress(_text("Bomb") + b"\n")
    block = unit * (2**20 // len(unit))
    for _ in range(size // len(block)):
        data += comp.compress(block)
    return data + comp.flush()


def image_bomb(rng: random.Random) -> bytes:
    """A page that is one huge image (OCR renders scanned pages): 20k-60k pixels a side."""
    side = rng.choice([20_000, 40_000, 60_000])
    data = _white_rows(side)
    img = b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Length %d /Filter /FlateDecode >>\nstream\n" % (side, side, len(data)) + data + b"\nendstream"
    return _page_doc(b"q 612 0 0 792 0 0 cm /Im1 Do Q", extra_page=b" /XObject << /Im1 6 0 R >>", more=[img])


@functools.lru_cache(maxsize=None)
def _white_rows(side: int) -> bytes:
    """The first 4,000 rows of a white image `side` pixels wide (short data: MuPDF pads the rest)."""
    comp = zlib.compressobj(9)
    row = b"\xff" * side
    return b"".join(comp.compress(row) for _ in range(4000)) + comp.flush()


def xref_loop(rng: random.Random) -> bytes:
    """Objects that refer to themselves: a page tree whose kid is its own parent, a self-referencing stream length."""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length 4 0 R >>\nstream\n" + _text("Loop") + b"\nendstream",
        FONT,
    ]
    return write_pdf(objs)


def make_corpus(folder: Path, n: int, seed: int, seeds: list[bytes]) -> list[tuple[Path, str]]:
    """n fuzzed files in `folder`, drawn with a seeded RNG; `seeds` are valid PDFs to mutate."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)] if i < len(KINDS) else rng.choice(KINDS)
        base = bytearray(rng.choice(seeds))
        if kind == "flip":
            for _ in range(rng.choice([1, 4, 16, 64, 256])):
                base[rng.randrange(len(base))] = rng.randrange(256)
            data = bytes(base)
        elif kind == "truncate":
            data = bytes(base[: rng.randrange(8, len(base))])
        elif kind == "splice":
            a, b = sorted(rng.randrange(len(base)) for _ in range(2))
            piece = bytes(base[a:b])
            at = rng.randrange(len(base))
            data = bytes(base[:at]) + piece * rng.choice([1, 2, 8]) + bytes(base[at + rng.randrange(0, 200):])
        elif kind == "garbage":
            data = b"%PDF-1.4\n" + rng.randbytes(rng.choice([10, 1000, 100_000]))
        else:
            data = {"huge-pages": huge_pages, "nesting": nesting, "bomb": bomb, "image-bomb": image_bomb,
                    "xref-loop": xref_loop}[kind](rng)
        path = folder / f"fuzz-{i:04d}-{kind}.pdf"
        path.write_bytes(data)
        made.append((path, kind))
    return made


def worker(library: str) -> None:
    """Import the files of each stdin line (a JSON list of paths) with one `Desk.add` call.

    Prints one JSON line per file as the importer reports it (`PaperImported`), then
    {"batch": "done"}. Batches share the end-of-import housekeeping (index refresh,
    compaction) the way a folder import does; the parent re-runs a batch file by file
    when one of its files hangs or kills the worker, to name the file.
    """
    from app.core.desk import Desk
    from app.core.events import PaperImported, Task

    desk = Desk(library=library)
    desk.embedder()
    print(MARK + json.dumps({"ready": True}), flush=True)
    last = [time.monotonic()]

    def sink(event) -> None:
        if isinstance(event, PaperImported):
            o = event.outcome
            now = time.monotonic()
            print(MARK + json.dumps({"file": o.path, "status": o.status, "message": (o.message or "").splitlines()[0] if o.message else "",
                              "seconds": now - last[0]}), flush=True)
            last[0] = now

    for line in sys.stdin:
        paths = json.loads(line)
        last[0] = time.monotonic()
        try:
            desk.add(paths, task=Task(sink=sink))
        except Exception as exc:  # noqa: BLE001 - the bench records what escaped the importer
            print(MARK + json.dumps({"raised": f"{type(exc).__name__}: {exc}"}), flush=True)
        print(MARK + json.dumps({"batch": "done"}), flush=True)
    desk.close()


if __name__ == "__main__":
    worker(sys.argv[1])
