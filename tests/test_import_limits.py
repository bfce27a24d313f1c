"""Hostile PDFs fail one by one with a reason (issue 18; bench/faults.py fuzzes 1,000 of them)."""

from __future__ import annotations

import zlib

from app.core import ingest


def _pdf_with_page_count(count: int) -> bytes:
    """One real page under a page tree that claims `count` pages."""
    content = zlib.compress(b"BT /F1 12 Tf 72 720 Td (A page among many) Tj ET")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_page_tree_claiming_a_billion_pages_fails_that_file_only(make_desk, fact_pdfs, tmp_path):
    (fact_pdfs / "billion.pdf").write_bytes(_pdf_with_page_count(10**9))
    desk = make_desk(tmp_path / "lib")
    report = desk.add([fact_pdfs])
    by_file = {o.path.rsplit("/", 1)[-1]: o for o in report.outcomes}
    assert set(by_file) == {"billion.pdf", "glacier.pdf", "kestrel.pdf"}  # no file without an outcome
    assert by_file["billion.pdf"].status == "failed"
    assert by_file["billion.pdf"].message.startswith("billion.pdf: corrupt page tree")
    assert "\n" not in by_file["billion.pdf"].message
    assert by_file["glacier.pdf"].status == by_file["kestrel.pdf"].status == "added"


def test_a_file_that_takes_too_long_to_read_is_stopped_with_its_reason(make_desk, fact_pdfs, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "FILE_READ_LIMIT_S", -1.0)  # every file is over the limit at its first page
    desk = make_desk(tmp_path / "lib")
    report = desk.add([fact_pdfs / "glacier.pdf"])
    [outcome] = report.outcomes
    assert outcome.status == "failed"
    assert "stopped after" in outcome.message and "at page 1 of 3" in outcome.message
    [paper] = desk.papers()
    assert paper.status == "failed" and "stopped after" in paper.status_reason
    monkeypatch.setattr(ingest, "FILE_READ_LIMIT_S", 900.0)
    again = desk.add([fact_pdfs / "glacier.pdf"])  # the failed paper is imported again, not duplicated
    assert again.count("added") == 1
    assert [p.status for p in desk.papers()] == ["indexed"]


def test_a_full_disk_while_copying_one_pdf_fails_that_file_and_imports_the_rest(make_desk, fact_pdfs, tmp_path, monkeypatch):
    import errno

    from app.core import paper_write

    real_copy = paper_write.atomic_copy

    def copy(src, dst):
        if src.name == "glacier.pdf":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_copy(src, dst)

    monkeypatch.setattr(paper_write, "atomic_copy", copy)
    desk = make_desk(tmp_path / "lib")
    report = desk.add([fact_pdfs])
    by_file = {o.path.rsplit("/", 1)[-1]: o for o in report.outcomes}
    assert by_file["glacier.pdf"].status == "failed"
    assert by_file["glacier.pdf"].message == "glacier.pdf: could not write to the library (No space left on device)"
    assert by_file["kestrel.pdf"].status == "added"
    assert [p.status for p in desk.papers()] == ["indexed"]
