"""Decompression bombs: page content that inflates far past anything a paper needs.

A few hundred KB of Flate data can inflate to gigabytes (deflate expands up to ~1,032×).
MuPDF reads a page's content every time the page is parsed, and an import parses a page
several times (the open check, the text-layer sample, metadata, layout), so a 512 MB
content stream of text operators held the importer for minutes (bench/faults.py fuzz).

`defuse(doc)` runs before any page is parsed: it measures what each page's content
streams and form XObjects inflate to (a capped inflate in Python, stopped at the cap,
so neither time nor memory grows with the bomb; LZW and RunLength data are counted, not
decoded) and empties the streams that pass the
cap in the in-memory document. The PDF file itself is never changed (the library keeps
the file as imported). The pages that lost content are reported, and the importer
skips them like the lost pages of a damaged file.
"""

from __future__ import annotations

import base64
import logging
import re
import zlib
from dataclasses import dataclass, field

import pymupdf

log = logging.getLogger(__name__)

# A page of a real paper carries well under 1 MB of content (the largest in the test
# corpus: 0.9 MB); a dense vector plot a few tens of MB. MuPDF reads 16 MB of text operators
# in 1-3 s a pass on a busy laptop core, so the cap bounds a page's time too.
CONTENT_CAP = 32 * 2**20

_FLATE = {"FlateDecode", "Fl"}
_FEED = 1 << 16  # raw bytes handed to zlib at a time (the output is capped as it grows)


@dataclass
class Oversized:
    """Pages whose content inflates past the cap (1-based page numbers)."""

    cap: int = CONTENT_CAP
    emptied: list[int] = field(default_factory=list)  # the page's own content: nothing of it is left
    forms: list[int] = field(default_factory=list)  # only a form XObject it draws was too large

    def __bool__(self) -> bool:
        return bool(self.emptied or self.forms)


def defuse(doc: pymupdf.Document, cap: int = CONTENT_CAP) -> Oversized:
    """Empty (in memory) the content of pages that inflates past `cap`, and such form XObjects."""
    found = Oversized(cap)
    if not doc.is_pdf:
        return found
    sizes: dict[int, int] = {}  # xref → decoded size, cap + 1 past the cap (streams are shared by pages)

    def size(xref: int) -> int:
        if xref not in sizes:
            sizes[xref] = _decoded_size(doc, xref, cap)
        return sizes[xref]

    def empty(xrefs: list[int], what: str) -> None:
        for xref in xrefs:
            log.warning("%s: %s (stream %d) inflates past %d MB: emptied (decompression bomb?)",
                        doc.name, what, xref, cap >> 20)
            doc.update_stream(xref, b"", compress=False)
            sizes[xref] = 0

    for pno in range(doc.page_count):
        page = doc.load_page(pno)  # loading a page does not parse its content
        contents = page.get_contents()
        total = 0
        for xref in contents:  # the page's streams are read one after another: their sum counts
            total += size(xref)
            if total > cap:
                empty(contents, f"page {pno + 1}'s content")
                found.emptied.append(pno + 1)
                break
        forms = [x[0] for x in page.get_xobjects() if size(x[0]) > cap]
        if forms:
            empty(forms, f"a form drawn on page {pno + 1}")
            if found.emptied[-1:] != [pno + 1]:
                found.forms.append(pno + 1)
    return found


def _decoded_size(doc: pymupdf.Document, xref: int, cap: int) -> int:
    """The decoded length of stream `xref`, or cap + 1 where it is longer; decodes at most that."""
    try:
        data = doc.xref_stream_raw(xref)
        filters = re.findall(r"/(\w+)", doc.xref_get_key(xref, "Filter")[1])
    except Exception as exc:  # noqa: BLE001 - an unreadable stream is MuPDF's to report when it parses the page
        log.info("%s: stream %d not measured (%s)", doc.name, xref, exc)
        return 0
    if data is None:
        return 0
    for i, name in enumerate(filters):
        if name in _FLATE:
            data = _capped_inflate(data, cap)
            if data is None:
                return cap + 1
            continue
        decoded = _decode_text_filter(name, data)
        if decoded is not None:
            data = decoded
            continue
        # LZW and RunLength are counted without being decoded (they are only ever the last
        # filter of content in practice); image filters do not belong in content.
        if name in ("LZWDecode", "LZW") and not filters[i + 1:]:
            return _lzw_size(data, cap)
        if name in ("RunLengthDecode", "RL") and not filters[i + 1:]:
            return _run_length_size(data, cap)
        log.info("%s: stream %d with filter %s not measured", doc.name, xref, name)
        return min(len(data), cap + 1)
    return min(len(data), cap + 1)


def _decode_text_filter(name: str, data: bytes) -> bytes | None:
    """ASCIIHex / ASCII85 decoded (they expand at most 4×), or None for another filter or bad data."""
    try:
        if name in ("ASCIIHexDecode", "AHx"):
            digits = re.sub(rb"\s", b"", data.split(b">", 1)[0])
            return bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode("ascii"))
        if name in ("ASCII85Decode", "A85"):
            body = data.split(b"~>", 1)[0].removeprefix(b"<~")
            return base64.a85decode(body, ignorechars=b" \t\n\r\x0b\x0c")
    except ValueError:
        return None
    return None


def _capped_inflate(raw: bytes, cap: int) -> bytes | None:
    """The inflated bytes (up to where the data breaks, as MuPDF reads them), or None past `cap`."""
    inflater = zlib.decompressobj()
    out: list[bytes] = []
    size = 0
    for start in range(0, len(raw), _FEED):
        pending = raw[start:start + _FEED]
        while pending:
            try:
                piece = inflater.decompress(pending, cap + 1 - size)
            except zlib.error:
                return b"".join(out)  # MuPDF stops at the break too
            size += len(piece)
            out.append(piece)
            if size > cap:
                return None
            pending = inflater.unconsumed_tail
        if inflater.eof:
            break
    return b"".join(out)


def _lzw_size(data: bytes, cap: int) -> int:
    """What LZW data decodes to, counted from its codes' lengths (nothing is decoded); capped."""
    lengths: list[int] = []  # lengths of table entries 258…
    width, size, prev, acc, held = 9, 0, 0, 0, 0
    for byte in data:
        acc, held = (acc << 8 | byte) & 0xFFFFFF, held + 8
        while held >= width:
            held -= width
            code = acc >> held & ((1 << width) - 1)
            if code == 256:  # clear the table
                lengths, width, prev = [], 9, 0
                continue
            if code == 257:  # end of data
                return size
            if code < 256:
                length = 1
            elif code - 258 < len(lengths):
                length = lengths[code - 258]
            elif code - 258 == len(lengths) and prev:
                length = prev + 1  # the entry being made (the KwKwK case)
            else:
                return size  # broken data: MuPDF stops here too
            size += length
            if size > cap:
                return cap + 1
            if prev and len(lengths) < 4096 - 258:
                lengths.append(prev + 1)
            prev = length
            if len(lengths) + 258 + 1 >= 1 << width and width < 12:  # EarlyChange 1, the default
                width += 1
    return size


def _run_length_size(data: bytes, cap: int) -> int:
    """What RunLength data decodes to, counted; capped."""
    size, i = 0, 0
    while i < len(data) and data[i] != 128 and size <= cap:
        n = data[i]
        size, i = (size + n + 1, i + n + 2) if n < 128 else (size + 257 - n, i + 2)
    return min(size, cap + 1)
