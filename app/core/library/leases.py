"""Leases: which writer is importing a paper, so that two writers never import the same one.

A lease is a small JSON file `leases/<key>.lease` in the library folder: its holder (host, pid,
process start; writers.py), a token for this acquisition, the time of its last heartbeat and
when it expires. The importer takes one per content hash before it reads a PDF, and a short
one (`lock`) while it picks a new paper id and writes the paper's first row.

Why files and not columns of the papers table: the lease must exist *before* the row (two
writers that both see a hash as new must not both insert it: LanceDB merges concurrent
inserts of the same new key into two rows, measured), and what it needs is "create if
absent", which a file system gives atomically (a hard link of a finished temp file, or
O_EXCL) and object stores give as a conditional put. The files are written atomically, so a
reader sees a whole lease or none.

Taking over: a lease whose holder is gone (same host: its process ended) or whose expiry has
passed may be taken by the next writer. The old file is first renamed to a name of the
taker's own (a rename succeeds for one taker only), checked to be the same lease that was
judged stale (a heartbeat in between wins), and then the new lease is created. A holder
renews its leases from a background thread (`LeaseKeeper`) every third of the lease time and
never renews, or writes under, a lease whose expiry has passed: by then it may be someone
else's. The lease time is RESEARCH_DESK_LEASE_SECONDS (default 60 s); clocks of the machines
sharing a library must agree to well within it (NTP does).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from . import writers
from .atomic_files import open_temp_text
from ..errors import LibraryError

log = logging.getLogger(__name__)

LEASE_SECONDS_ENV = "RESEARCH_DESK_LEASE_SECONDS"
DEFAULT_LEASE_SECONDS = 60.0
TAKEOVER_GRACE_S = 0.5  # beyond the expiry, for the last write of a holder that checked the time just before it
SWEEP_AFTER_S = 3600.0  # an expired lease nobody took over is deleted when the library opens after this long


def lease_seconds() -> float:
    raw = os.environ.get(LEASE_SECONDS_ENV, "")
    try:
        return max(0.5, float(raw)) if raw else DEFAULT_LEASE_SECONDS
    except ValueError:
        log.warning("%s=%r is not a number of seconds; using %s", LEASE_SECONDS_ENV, raw, DEFAULT_LEASE_SECONDS)
        return DEFAULT_LEASE_SECONDS


@dataclass(frozen=True)
class Lease:
    key: str
    holder: writers.Writer
    token: str  # one per acquisition: a holder that re-acquires holds a different lease
    heartbeat: float  # epoch seconds
    expires: float
    note: str = ""  # what it is for (a file name), for messages

    def describe(self, now: float | None = None) -> str:
        ago = max(0.0, (time.time() if now is None else now) - self.heartbeat)
        what = f" importing {self.note}" if self.note else ""
        return f"{self.holder.describe()}{what} (heard from {ago:.0f} s ago)"

    def stale(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        if now > self.expires + TAKEOVER_GRACE_S:
            return True
        return writers.liveness(self.holder) is writers.Liveness.GONE

    def to_json(self) -> str:
        return json.dumps({"key": self.key, "holder": self.holder.as_dict(), "token": self.token,
                           "heartbeat": self.heartbeat, "expires": self.expires, "note": self.note})

    @classmethod
    def from_json(cls, text: str) -> "Lease":
        d = json.loads(text)
        return cls(str(d["key"]), writers.Writer.from_dict(d["holder"]), str(d["token"]), float(d["heartbeat"]),
                   float(d["expires"]), str(d.get("note", "")))


@dataclass(frozen=True)
class Claim:
    """The answer to a claim: the lease is ours (`held`), or `lease` is the live holder's."""

    held: bool
    lease: Lease


class LeaseStore:
    """The lease files of one library (`<root>/leases`)."""

    def __init__(self, folder: Path, seconds: float | None = None) -> None:
        self.folder = folder
        self.seconds = seconds if seconds is not None else lease_seconds()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.lease"

    def read(self, key: str) -> Lease | None:
        return _read(self.path(key))

    def claim(self, key: str, note: str = "") -> Claim:
        """Take the lease on `key` unless a live writer holds it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for _ in range(20):  # each turn loses a race to another writer; they do not go on for long
            mine = self._new(key, note)
            if _create(self.path(key), mine.to_json()):
                return Claim(True, mine)
            other = self.read(key)
            if other is None:
                if self._unreadable_and_old(key):
                    self._retire(key, None)
                else:
                    time.sleep(0.05)  # released meanwhile, or still being written: look again
                continue
            if not other.stale():
                return Claim(False, other)
            log.info("taking over lease %s from %s", key, other.describe())
            self._retire(key, other)
        raise LibraryError(f"Could not take the lease {key} in {self.folder}: other writers kept taking it.",
                           "Try again; if it persists, check that the library folder is not read-only.")

    def renew(self, lease: Lease) -> Lease | None:
        """A new heartbeat for a lease still ours; None when it expired or was taken over."""
        now = time.time()
        current = self.read(lease.key)
        if current is None or current.token != lease.token or now >= lease.expires:
            return None
        renewed = replace(lease, heartbeat=now, expires=now + self.seconds)
        fh, tmp = open_temp_text(self.path(lease.key))
        try:
            with fh:
                fh.write(renewed.to_json())
            if time.time() >= lease.expires:  # the write was slow: the lease may be someone else's now
                return None
            os.replace(tmp, self.path(lease.key))
        finally:
            tmp.unlink(missing_ok=True)
        return renewed

    def release(self, lease: Lease) -> None:
        current = self.read(lease.key)
        # An expired lease is left alone: another writer may be taking it over right now.
        if current is not None and current.token == lease.token and time.time() < lease.expires:
            self.path(lease.key).unlink(missing_ok=True)

    @contextmanager
    def lock(self, key: str, note: str = "", wait_s: float = 60.0) -> Iterator[Lease]:
        """Hold `key` for a short critical section, waiting while another writer has it."""
        deadline = time.monotonic() + wait_s
        delay = 0.01
        while True:
            claim = self.claim(key, note)
            if claim.held:
                break
            if time.monotonic() > deadline:
                raise LibraryError(f"The library is busy: {claim.lease.describe()} holds {key}.",
                                   "Try again in a moment.")
            time.sleep(delay)
            delay = min(0.2, delay * 2)
        try:
            yield claim.lease
        finally:
            self.release(claim.lease)

    def sweep(self) -> int:
        """Delete leases of writers gone for good (process ended here, or expired an hour ago)."""
        try:
            return self._sweep()
        except OSError as exc:  # housekeeping only: a stale lease is also taken over when met
            log.warning("could not clear old leases in %s: %s", self.folder, exc)
            return 0

    def _sweep(self) -> int:
        if not self.folder.is_dir():
            return 0
        removed = 0
        now = time.time()
        for path in self.folder.glob("*.lease"):
            lease = _read(path)
            key = path.name[: -len(".lease")]
            if lease is None:
                if self._unreadable_and_old(key):
                    removed += self._retire(key, None)
            elif writers.liveness(lease.holder) is writers.Liveness.GONE or now > lease.expires + SWEEP_AFTER_S:
                removed += self._retire(key, lease)
        for grave in self.folder.glob("*.lease.*.stale"):  # a taker that died between rename and delete
            if writers.liveness(_grave_owner(grave)) is writers.Liveness.GONE:
                grave.unlink(missing_ok=True)
        return removed

    # -- inside -------------------------------------------------------------------------
    def _new(self, key: str, note: str) -> Lease:
        now = time.time()
        return Lease(key, writers.current(), secrets.token_hex(8), now, now + self.seconds, note)

    def _retire(self, key: str, seen: Lease | None) -> bool:
        """Remove the lease judged stale (`seen`), unless it changed since it was read."""
        path = self.path(key)
        grave = path.with_name(f"{path.name}.{writers.current().tag}{secrets.token_hex(4)}.stale")
        try:
            os.rename(path, grave)  # of several takers, one succeeds
        except FileNotFoundError:
            return False
        try:
            moved = _read(grave)
            if seen is not None and (moved is None or moved.token != seen.token or moved.heartbeat != seen.heartbeat):
                # Renewed (or replaced) between the read and the rename: it is not stale. Put it back.
                if moved is not None and not _create(path, moved.to_json()):
                    log.warning("lease %s changed hands during a takeover; the newer one stands", key)
                return False
            return True
        finally:
            grave.unlink(missing_ok=True)

    def _unreadable_and_old(self, key: str) -> bool:
        try:
            return time.time() - self.path(key).stat().st_mtime > self.seconds
        except FileNotFoundError:
            return False


def _read(path: Path) -> Lease | None:
    try:
        return Lease.from_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("unreadable lease file %s: %s", path, exc)
        return None


def _grave_owner(grave: Path) -> writers.Writer:
    return writers.writer_in_name(grave.name) or writers.Writer("", 0, 0)


def _create(path: Path, text: str) -> bool:
    """Create `path` with `text` unless it exists, atomically: readers see all of it or nothing."""
    fh, tmp = open_temp_text(path)
    try:
        with fh:
            fh.write(text)
        try:
            os.link(tmp, path)  # fails if `path` exists: the atomic "create if absent"
            return True
        except FileExistsError:
            return False
        except OSError:
            # No hard links here (FAT, some network shares): O_EXCL, which a reader may see empty
            # for an instant (read as "being written" by `claim`).
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            return True
    finally:
        tmp.unlink(missing_ok=True)


class LeaseKeeper:
    """The leases one import holds, renewed from a background thread until released."""

    def __init__(self, store: LeaseStore) -> None:
        self.store = store
        self._held: dict[str, Lease] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def claim(self, key: str, note: str = "") -> Claim:
        claim = self.store.claim(key, note)
        if claim.held:
            with self._lock:
                self._held[key] = claim.lease
                if self._thread is None:
                    self._thread = threading.Thread(target=self._beat, name="lease-heartbeat", daemon=True)
                    self._thread.start()
        return claim

    def holds(self, key: str) -> bool:
        """Whether the lease on `key` is still ours (no file access: checked before each commit)."""
        with self._lock:
            lease = self._held.get(key)
        return lease is not None and time.time() < lease.expires

    def release(self, key: str) -> None:
        with self._lock:
            lease = self._held.pop(key, None)
        if lease is not None:
            self.store.release(lease)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for lease in held:
            self.store.release(lease)

    def _beat(self) -> None:
        while not self._stop.wait(self.store.seconds / 3):
            with self._lock:
                held = list(self._held.values())
            for lease in held:
                try:
                    renewed = self.store.renew(lease)
                except OSError as exc:
                    log.warning("could not renew the lease on %s: %s", lease.key, exc)
                    continue  # tried again next beat; `holds` turns false if it expires first
                with self._lock:
                    if lease.key not in self._held:
                        continue  # released meanwhile
                    if renewed is None:
                        log.warning("lost the lease on %s (expired before it could be renewed)", lease.key)
                        self._held.pop(lease.key, None)
                    else:
                        self._held[lease.key] = renewed


class PaperClaims:
    """The paper leases of one import run: one per content hash, found again by the file's path."""

    ID_LOCK = "paper-ids"  # held while a new paper's id is chosen and its first row written

    def __init__(self, store: LeaseStore) -> None:
        self.store = store
        self.keeper = LeaseKeeper(store)
        self._by_path: dict[Path, str] = {}

    def claim(self, path: Path, content_hash: str) -> str:
        """Take the paper's lease: "" when ours, else a one-line message naming the live holder."""
        claim = self.keeper.claim(content_hash, path.name)
        if claim.held:
            self._by_path[path] = content_hash
            return ""
        return (f"{path.name}: being imported by {claim.lease.describe()}; skipped here "
                "(it appears in the library when that writer finishes)")

    def holds(self, content_hash: str) -> bool:
        return self.keeper.holds(content_hash)

    def release(self, path: Path) -> None:
        key = self._by_path.pop(path, None)
        if key is not None:
            self.keeper.release(key)

    def close(self) -> None:
        self._by_path.clear()
        self.keeper.close()
