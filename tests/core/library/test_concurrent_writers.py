"""Several writers, one library: concurrent `add` runs, crashed and stalled writers, temp files.

The writers are real `research-desk add` processes (the tiny test models), on real PDFs built
here, so what is tested is what two terminals (or a window and a script) do to one library.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.library import atomic_files, leases, writers
from app.core.ingest.pipeline import file_hash
from app.core.library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS, Library
from tests.support.library import assert_creation_waits_for_the_lock_holder, one_chunk
from tests.support.paths import REPO
from tests.support.pdf_factory import make_paper

WORDS = ("glacier kestrel drone river sediment pollen valley alpine survey logger migration climate "
         "retreat photogrammetry moraine isotope lake basin transect sample season").split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _paper(path: Path, title: str, seed: int, pages: int = 2) -> Path:
    rng = random.Random(seed)
    body = [f"# Section {i + 1}\n\n{_text(rng, 120)}\n\n{_text(rng, 100)}" for i in range(pages)]
    return make_paper(path, title, ["Ada Writer"], body)


def _start(env: dict, lib: Path, *args: str, lease_s: float | None = None) -> subprocess.Popen:
    env = {**os.environ, **env}  # cli_env's variables over this process's
    if lease_s is not None:
        env = {**env, leases.LEASE_SECONDS_ENV: str(lease_s)}
    return subprocess.Popen([sys.executable, "-m", "app.cli", "--library", str(lib), *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _check_library(lib: Path, expected_hashes: set[str], env: dict) -> None:
    """Every paper exactly once and complete, chunks not doubled, no garbage, `validate` clean."""
    library = Library(lib, create=False)
    papers = library.list_papers()
    hashes = Counter(p.content_hash for p in papers)
    assert set(hashes) == expected_hashes
    assert all(n == 1 for n in hashes.values()), hashes
    assert len({p.id.lower() for p in papers}) == len(papers)
    assert [p.id for p in papers if p.status != "indexed"] == []
    for name in (CONTENT_CHUNKS, SUMMARY_CHUNKS):
        ids = library.chunks_table(name).to_arrow().column("id").to_pylist()
        assert len(ids) == len(set(ids)), f"{name} has doubled rows"
        assert {i.split(":")[0] for i in ids} == {p.id for p in papers}
    assert list(lib.rglob(".*.tmp")) == []
    assert list((lib / "leases").glob("*.lease")) == []  # every writer let go of what it held
    validated = subprocess.run([sys.executable, "-m", "app.cli", "--library", str(lib), "validate"], cwd=REPO,
                               env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert validated.returncode == 0, validated.stdout + validated.stderr


@pytest.mark.slow
def test_three_concurrent_adds_keep_every_paper_once(tmp_path, cli_env):
    src = tmp_path / "src"
    src.mkdir()
    pdfs = [_paper(src / f"p{i}.pdf", f"Survey number {i} of alpine valleys", seed=i) for i in range(6)]
    # Same title, other content: both want the id of p0, and only one may have it.
    pdfs.append(_paper(src / "p6.pdf", "Survey number 0 of alpine valleys", seed=99))
    folders = {"a": [0, 1, 2, 3, 6], "b": [2, 3, 4, 5], "c": [0, 4, 5, 6, 1]}
    for name, members in folders.items():
        (tmp_path / name).mkdir()
        for i in members:
            (tmp_path / name / pdfs[i].name).write_bytes(pdfs[i].read_bytes())
    # The same bytes under another name: a duplicate by content, across writers.
    (tmp_path / "b" / "copy-of-p1.pdf").write_bytes(pdfs[1].read_bytes())
    lib = tmp_path / "lib"  # not created yet: the three writers also race to create it

    procs = [_start(cli_env, lib, "add", str(tmp_path / name)) for name in folders]
    results = [_finish(p) for p in procs]
    for (code, out, err), name in zip(results, folders):
        assert code == 0, out + err
        # Every file has its line: added, or already there (done, or in progress by another writer).
        lines = [line for line in out.splitlines() if line.startswith(("added: ", "already in library: "))]
        assert len(lines) == len(list((tmp_path / name).iterdir())), out

    # Each paper was imported by exactly one writer; the others found it done, or in progress.
    added = Counter(line.split(": added as ")[1].split()[0]
                    for _, out, _ in results for line in out.splitlines() if ": added as " in line)
    assert len(added) == 7 and set(added.values()) == {1}, added
    _check_library(lib, {file_hash(p) for p in pdfs}, cli_env)


def _big_paper(tmp_path: Path) -> Path:
    # Long enough that its text is still being written when the test looks (24 pages were read
    # whole between two looks once the chunker counted each span once).
    return _paper(tmp_path / "long.pdf", "A long record of glacier retreat", seed=7, pages=160)


def _wait_until_importing(proc: subprocess.Popen, lib: Path) -> str:
    """Wait until the writer has the paper's row `importing` and streams its text; its id."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the writer ended before it could be interrupted: " + proc.stderr.read()
        temps = list((lib / "text").glob(".*.tmp")) if (lib / "text").is_dir() else []
        if temps and (lib / "index" / "papers.lance").exists():
            papers = Library(lib, create=False).list_papers()  # another process opening the library
            if papers and papers[0].status == "importing":
                gone = [t for t in temps if not t.exists()]
                # A temp file gone because the writer finished it (renamed to its text file) is no
                # removal; one gone with no text file in its place is.
                assert not gone or (lib / "text" / f"{papers[0].id}.md").exists(), \
                    "opening the library removed a live writer's temp file"
                if not gone:
                    return papers[0].id
        time.sleep(0.05)
    raise AssertionError("the writer never started importing")


@pytest.mark.slow
def test_killed_writer_paper_is_taken_over_by_the_next(tmp_path, cli_env):
    pdf = _big_paper(tmp_path)
    lib = tmp_path / "lib"
    first = _start(cli_env, lib, "add", str(pdf), lease_s=30)
    paper_id = _wait_until_importing(first, lib)
    temps = list((lib / "text").glob(".*.tmp"))
    assert temps  # opening the library above kept the live writer's temp file
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert list((lib / "leases").glob("*.lease"))  # its lease outlived it, and so did its temp file,
    assert all(t.exists() for t in temps)
    assert Library(lib, create=False).get_paper(paper_id).status == "importing"
    assert not any(t.exists() for t in temps)  # until a process opened the library: its writer is gone
    assert not list((lib / "leases").glob("*.lease"))

    # The holder is gone (same host, process ended): its paper is taken over at once, not
    # reported as "being imported" until the 30 s lease runs out.
    code, out, err = _finish(_start(cli_env, lib, "add", str(pdf), lease_s=30))
    assert code == 0, out + err
    assert f"added as {paper_id}" in out
    _check_library(lib, {file_hash(pdf)}, cli_env)


@pytest.mark.slow
def test_stalled_writer_is_left_alone_until_its_lease_expires(tmp_path, cli_env):
    pdf = _big_paper(tmp_path)
    lib = tmp_path / "lib"
    stalled = _start(cli_env, lib, "add", str(pdf), lease_s=600)  # long: the next writer surely finds it live
    try:
        paper_id = _wait_until_importing(stalled, lib)
        stalled.send_signal(signal.SIGSTOP)  # alive but silent: a suspended laptop, a hung process
        store = leases.LeaseStore(lib / "leases")
        held = store.read(file_hash(pdf))
        assert held is not None and held.holder.pid == stalled.pid

        code, out, err = _finish(_start(cli_env, lib, "add", str(pdf)))
        assert code == 0, out + err
        assert f"being imported by process {stalled.pid}" in out
        assert Library(lib, create=False).get_paper(paper_id).status == "importing"

        # Ten minutes later (aged here rather than waited for): the lease has expired, the
        # holder has not renewed it, and the next writer takes the paper over.
        aged = replace(held, heartbeat=held.heartbeat - 600, expires=time.time() - 1)
        store.path(held.key).write_text(aged.to_json())
        code, out, err = _finish(_start(cli_env, lib, "add", str(pdf)))
        assert code == 0, out + err
        assert f"added as {paper_id}" in out
    finally:
        stalled.send_signal(signal.SIGKILL)
        stalled.wait()
    _check_library(lib, {file_hash(pdf)}, cli_env)


def test_live_writers_temp_file_survives_another_process_opening_the_library(tmp_path):
    lib = tmp_path / "lib"
    Library(lib)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from app.core.library.atomic_files import open_temp_text;"
         "fh, tmp = open_temp_text(Path(sys.argv[1]) / 'text' / 'x.md'); fh.write('half'); fh.flush();"
         "print(tmp, flush=True); time.sleep(600)", str(lib)],
        cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        tmp = Path(holder.stdout.readline().strip())
        assert tmp.exists() and writers.writer_in_name(tmp.name).pid == holder.pid
        # Temp files whose writer cannot be asked: a fresh one is kept, one untouched for hours is not.
        fresh = lib / "text" / ".y.md.abc123.tmp"
        fresh.write_text("?")
        old = lib / "text" / ".z.md.def456.tmp"
        old.write_text("?")
        hours_ago = time.time() - atomic_files.UNOWNED_TEMP_AGE_S - 60
        os.utime(old, (hours_ago, hours_ago))
        Library(lib)
        assert tmp.exists() and fresh.exists() and not old.exists()
    finally:
        holder.kill()
        holder.wait()
    Library(lib)
    assert not tmp.exists() and fresh.exists()


def test_lease_of_a_writer_elsewhere_is_taken_over_only_after_it_expires(tmp_path):
    store = leases.LeaseStore(tmp_path / "leases", seconds=1.0)
    far = writers.Writer("another-machine", 4242, 1)  # liveness cannot be asked: only time tells
    (tmp_path / "leases").mkdir()
    now = time.time()
    theirs = leases.Lease("abc", far, "t0", now, now + 1.0, "x.pdf")
    store.path("abc").write_text(theirs.to_json())

    claim = store.claim("abc", "x.pdf")
    assert not claim.held and claim.lease.holder == far
    assert "process 4242 on another-machine importing x.pdf" in claim.lease.describe()

    time.sleep(1.0 + leases.TAKEOVER_GRACE_S + 0.3)
    claim = store.claim("abc", "x.pdf")
    assert claim.held and claim.lease.holder == writers.current()
    # The old holder, back from its stall, finds the lease gone and must not renew it.
    assert store.renew(theirs) is None
    assert json.loads(store.path("abc").read_text())["token"] == claim.lease.token
    store.release(claim.lease)
    assert not store.path("abc").exists()


def test_keeper_renews_while_alive_and_reports_a_lost_lease(tmp_path):
    store = leases.LeaseStore(tmp_path / "leases", seconds=0.6)
    keeper = leases.LeaseKeeper(store)
    try:
        assert keeper.claim("k", "k.pdf").held
        time.sleep(1.5)  # more than two lease times: only the heartbeat keeps it
        assert keeper.holds("k")
        assert store.read("k").heartbeat > time.time() - 0.6
        assert not leases.LeaseStore(tmp_path / "leases").claim("k").held  # another writer is refused
        # Someone removes it behind the keeper's back (as a takeover does): the keeper notices.
        store.path("k").unlink()
        time.sleep(0.8)
        assert not keeper.holds("k")
    finally:
        keeper.close()


def test_window_notices_papers_added_by_another_writer(qtbot, tmp_path, tiny_models, make_desk, fact_pdfs, monkeypatch):
    from app.ui.common.worker import WorkerHost
    from app.ui.library import controller as library_controller
    from app.ui.library.pane import LibraryPane
    from tests.support.library import tiny_settings

    monkeypatch.setattr(library_controller, "POLL_INTERVAL_MS", 150)
    lib = tmp_path / "lib"
    host = WorkerHost(tiny_settings(tiny_models), str(lib))
    pane = LibraryPane()
    qtbot.addWidget(pane)
    controller = library_controller.LibraryController(host, pane)
    try:
        controller.load()
        qtbot.waitUntil(lambda: controller.location != "", timeout=30_000)
        lists: list[list[str]] = []
        controller.papers_changed.connect(lambda papers: lists.append(sorted(p.id for p in papers)))

        other = make_desk(lib)  # another writer: its own Library and LanceDB connection
        report = other.add([fact_pdfs])
        assert report.count("added") == 2
        qtbot.waitUntil(lambda: bool(lists) and len(lists[-1]) == 2, timeout=30_000)
        final = other.library_version()
        qtbot.waitUntil(lambda: controller._seen_version == final, timeout=30_000)
        polls = len(lists)
        qtbot.wait(600)  # nothing changed since: no more refreshes
        assert len(lists) == polls
    finally:
        assert host.shutdown()


# -- creating a table: one writer at a time (table_creation.py) ------------------------------------
def test_a_writer_needing_a_table_another_is_creating_waits_and_keeps_its_rows(tmp_path):
    root = tmp_path / "lib"
    first, second = Library(root), Library(root)
    assert_creation_waits_for_the_lock_holder(first, second)
    assert not list((root / "leases").glob("create-*.lock")), "the lock was not released"


@pytest.mark.parametrize("left_by", ["an hour ago", "a process gone", "a torn write"])
def test_a_creation_lock_left_by_a_crash_is_taken_over(tmp_path, left_by, caplog):
    root = tmp_path / "lib"
    lock = root / "leases" / f"create-{CONTENT_CHUNKS}.lock"
    lock.parent.mkdir(parents=True)
    if left_by == "a torn write":
        lock.write_text('{"holder": {"host"')
    else:
        holder = writers.current()
        at = time.time()
        if left_by == "an hour ago":
            at -= 3600
        else:
            gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                                  capture_output=True, text=True, check=True)
            holder = replace(holder, pid=int(gone.stdout), started=0)
        lock.write_text(json.dumps({"holder": holder.as_dict(), "at": at}))
    library = Library(root)
    start = time.monotonic()
    library.append_chunks(CONTENT_CHUNKS, *one_chunk("p1"))
    assert time.monotonic() - start < 10
    assert library.chunk_counts(CONTENT_CHUNKS) == {"p1": 1}
    assert not lock.exists()
    assert "taking over the lock on creating content_chunks" in caplog.text


def test_a_live_creation_lock_that_never_ends_is_reported_as_busy(tmp_path):
    from app.core.library import table_creation
    from app.core.errors import LibraryError

    root = tmp_path / "lib"
    library = Library(root)
    with table_creation.creating(root, None, CONTENT_CHUNKS):  # a live holder: this very process
        with pytest.raises(LibraryError, match="busy: another writer has been creating its content_chunks table"):
            with table_creation.creating(root, None, CONTENT_CHUNKS, wait_s=0.5):
                pass
    library.append_chunks(CONTENT_CHUNKS, *one_chunk("p1"))  # released: the next create goes ahead
    assert library.chunk_counts(CONTENT_CHUNKS) == {"p1": 1}
