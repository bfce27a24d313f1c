"""A library on object storage, against a real S3-compatible server (moto) on 127.0.0.1.

Tables go to the bucket through LanceDB, files through app/core/library/storage.py; each Desk or
process has its own local cache folder, as two machines would.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import urllib.request

import pymupdf
import pytest

from app.core.library import storage
from app.core.errors import LibraryError
from app.core.library.store import Library
from app.core.library.layout import LibraryLayout
from tests.support.papers import FACT_PAPERS
from tests.support.paths import REPO
from tests.support.pdf_factory import make_paper

BUCKET = "lab"
URI = f"s3://{BUCKET}/group/library"


class S3:
    def __init__(self, url: str) -> None:
        import boto3

        self.url = url
        self.client = boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                                   aws_access_key_id="testing", aws_secret_access_key="testing")

    def keys(self, prefix: str = "group/library/") -> set[str]:
        found: set[str] = set()
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
            found.update(o["Key"][len(prefix):] for o in page.get("Contents", []))
        return found

    def read(self, key: str) -> bytes:
        return self.client.get_object(Bucket=BUCKET, Key="group/library/" + key)["Body"].read()


@pytest.fixture
def s3(monkeypatch, tmp_path):
    """A moto S3 server on a free local port with an empty bucket; AWS_* point at it."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request otherwise
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": url,
                        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
                        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                        "RESEARCH_DESK_CACHE_DIR": str(tmp_path / "cache-a")}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    # moto keeps its buckets per process, across servers: start each test from none.
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).close()
    server_s3 = S3(url)
    server_s3.client.create_bucket(Bucket=BUCKET)
    yield server_s3
    storage.detach_all()
    server.stop()


def _another_machine(monkeypatch, tmp_path, name: str) -> None:
    """What a second machine starts from: its own (empty) cache, no library known to the process."""
    storage.detach_all()
    monkeypatch.setenv("RESEARCH_DESK_CACHE_DIR", str(tmp_path / name))


@pytest.mark.slow
def test_s3_library_imports_answers_and_opens_a_cited_page(s3, make_desk, fact_pdfs, tmp_path, monkeypatch):
    desk = make_desk(URI)
    report = desk.add([fact_pdfs])
    assert report.ok and report.count("added") == 2, [o.message for o in report.outcomes]
    papers = {p.title: p for p in desk.papers()}
    assert all(p.status == "indexed" for p in papers.values())
    kestrel = papers[FACT_PAPERS["kestrel.pdf"][0]]

    # Files and tables are on the bucket; the cache holds no table.
    keys = s3.keys()
    for p in papers.values():
        assert {f"pdfs/{p.id}.pdf", f"text/{p.id}.md"} <= keys
    assert "library.json" in keys
    assert any(k.startswith("index/content_chunks.lance/") for k in keys)
    cache = desk.library.root
    assert cache.is_relative_to(tmp_path / "cache-a") and not list(cache.rglob("*.lance"))
    assert s3.read(f"pdfs/{kestrel.id}.pdf") == (fact_pdfs / "kestrel.pdf").read_bytes()

    result = desk.research("When do kestrels depart from alpine valleys in autumn?", evidence_only=True)
    assert result.evidence and result.evidence[0].paper_id == kestrel.id, result.evidence
    cited = next(e for e in result.evidence if "14 September" in e.text)
    desk.save_notes(kestrel.id, "Check the departure date against the 2019 data.")
    assert s3.read(f"notes/{kestrel.id}.md").decode().startswith("Check the departure")
    desk.close()

    # Another machine: an empty cache. The window opens the cited page through the layout.
    _another_machine(monkeypatch, tmp_path, "cache-b")
    other = make_desk(URI)
    assert {p.id for p in other.papers()} == {p.id for p in papers.values()}
    assert other.paper_texts(kestrel.id).notes.startswith("Check the departure")  # synced on open
    layout = LibraryLayout(URI)  # what the window builds from the snapshot's location
    assert layout.root == other.library.root and layout.root.is_relative_to(tmp_path / "cache-b")
    cached = layout.root / "pdfs" / f"{kestrel.id}.pdf"
    assert not cached.exists()  # PDFs are fetched when asked for, not on open
    pdf = layout.pdf_path(cited.paper_id)
    assert pdf == cached and pdf.exists()
    with pymupdf.open(pdf) as doc:
        assert "14 September" in doc[cited.page - 1].get_text()
    assert other.validate().ok, other.validate()

    # A removal reaches the bucket, and the first machine's cache drops the files on its next open.
    glacier = papers[FACT_PAPERS["glacier.pdf"][0]]
    other.remove_papers([glacier.id])
    assert not {k for k in s3.keys() if glacier.id in k and not k.startswith("index/")}
    _another_machine(monkeypatch, tmp_path, "cache-a")
    first_again = Library(URI)
    assert not (first_again.root / "text" / f"{glacier.id}.md").exists()
    assert [p.id for p in first_again.list_papers()] == [kestrel.id]


def test_cache_follows_the_bucket_on_open(s3, tmp_path, monkeypatch):
    lib = Library(URI)
    lib.write_notes("p1", "first")
    lib.write_notes("p2", "to be removed")
    lib.set_meta(embedding="minilm")
    assert s3.read("notes/p1.md") == b"first" and "notes/p2.md" in s3.keys()
    # Another writer edits one note, deletes another and adds a text file.
    s3.client.put_object(Bucket=BUCKET, Key="group/library/notes/p1.md", Body=b"edited elsewhere")
    s3.client.delete_object(Bucket=BUCKET, Key="group/library/notes/p2.md")
    s3.client.put_object(Bucket=BUCKET, Key="group/library/text/p3.md", Body=b"# p3")
    storage.detach_all()
    again = Library(URI)  # same cache folder
    assert again.root == lib.root
    assert again.notes_path("p1").read_text() == "edited elsewhere"
    assert not again.notes_path("p2").exists()
    assert not (again.root / "text" / "p3.md").exists()  # text is read through, not synced
    assert again.text_path("p3").read_text() == "# p3"
    assert again.meta()["embedding"] == "minilm"
    # A file the bucket does not have is no fetch and no error.
    assert not again.pdf_path("nope").exists()


def test_local_libraries_are_untouched(tmp_path):
    lib = Library(tmp_path / "lib")
    assert lib.mirror is None and lib.location == str(tmp_path / "lib")
    lib.write_notes("p1", "n")
    assert storage.mirror_of(lib.notes_path("p1")) is None
    assert not list((tmp_path / "lib").rglob(storage.JOURNAL))


def test_unreachable_or_missing_bucket_is_one_clear_error(s3, tmp_path):
    with pytest.raises(LibraryError) as missing:
        Library("s3://no-such-bucket/lib")
    assert "s3://no-such-bucket/lib" in missing.value.message and "NoSuchBucket" in missing.value.message
    assert "\n" not in missing.value.message and "--endpoint" in missing.value.hint
    storage.detach_all()
    with pytest.raises(LibraryError) as down:
        Library(URI, endpoint="http://127.0.0.1:9")  # nothing listens on the discard port
    assert URI in down.value.message and "\n" not in down.value.message
    with pytest.raises(LibraryError, match="No library at s3://lab/empty"):
        Library(f"s3://{BUCKET}/empty", create=False)


def _cli(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_two_writers_on_one_bucket_both_see_every_paper(s3, cli_env, make_desk, tmp_path, monkeypatch):
    """Two CLI processes with their own caches import into one bucket at the same time."""
    folders = {}
    for writer, topics in (("a", ("lichen growth on granite", "beetle larvae in deadwood")),
                           ("b", ("tidal pool salinity", "moss spore dispersal"))):
        folder = folders[writer] = tmp_path / f"papers-{writer}"
        folder.mkdir()
        for i, topic in enumerate(topics):
            make_paper(folder / f"{writer}{i}.pdf", f"A Study of {topic.title()}", [f"Writer {writer.upper()}"],
                       [f"# Abstract\n\nWe measured {topic} over five seasons at {i + 3} sites.",
                        f"# Results\n\nThe {topic} rate was {10 + i} units per year."])
    base = {**os.environ, **cli_env}
    env_a = {**base, "RESEARCH_DESK_CACHE_DIR": str(tmp_path / "cache-writer-a")}
    # Writer b names the server with --endpoint only, as a MinIO user would.
    env_b = {k: v for k, v in base.items() if k != "AWS_ENDPOINT_URL"}
    env_b["RESEARCH_DESK_CACHE_DIR"] = str(tmp_path / "cache-writer-b")
    runs = [_cli(["--library", URI, "add", str(folders["a"])], env_a),
            _cli(["--library", URI, "--endpoint", s3.url, "add", str(folders["b"])], env_b)]
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
    titles = {f"A Study of {t.title()}" for t in ("lichen growth on granite", "beetle larvae in deadwood",
                                                   "tidal pool salinity", "moss spore dispersal")}
    for writer in ("a", "b"):  # each writer, on its own cache, sees the other's papers
        _another_machine(monkeypatch, tmp_path, f"cache-writer-{writer}")
        seen = Library(URI, create=False, endpoint=s3.url)
        assert {p.title for p in seen.list_papers()} == titles
        assert all(seen.text_path(p.id).exists() for p in seen.list_papers())
    assert len({k for k in s3.keys() if k.startswith("pdfs/")}) == 4

    _another_machine(monkeypatch, tmp_path, "cache-reader")
    desk = make_desk(URI)
    papers = desk.papers()
    assert sorted(p.title for p in papers) == sorted(titles) and all(p.status == "indexed" for p in papers)
    assert len({p.id for p in papers}) == 4
    assert desk.validate().ok, desk.validate()
    result = desk.research("What is the salinity of tidal pools?", evidence_only=True)
    salinity = next(p.id for p in papers if "Salinity" in p.title)
    assert result.evidence and result.evidence[0].paper_id == salinity, result.evidence


def test_creating_a_table_on_a_bucket_waits_for_the_writer_creating_it(s3, tmp_path, monkeypatch):
    """The creation lock is an object on the bucket (If-None-Match), seen by every machine and
    never synced into a cache; a writer on another machine waits for it and keeps its rows."""
    from tests.support.library import assert_creation_waits_for_the_lock_holder

    first = Library(URI)
    _another_machine(monkeypatch, tmp_path, "cache-second")
    second = Library(URI)
    assert first.mirror is not second.mirror and first.root != second.root
    seen_during: list[set[str]] = []
    real_create = first.db.create_table

    def create_and_look(*args, **kwargs):
        seen_during.append(s3.keys())
        return real_create(*args, **kwargs)

    monkeypatch.setattr(first.db, "create_table", create_and_look)
    assert_creation_waits_for_the_lock_holder(first, second)
    assert ".locks/create-content_chunks" in seen_during[0]
    assert not any(k.startswith(".locks/") for k in s3.keys()), "the lock was not released"
    assert not list(first.root.rglob("create-*")) and not list(second.root.rglob("create-*"))
