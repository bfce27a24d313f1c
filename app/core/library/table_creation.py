"""One writer at a time creates a LanceDB table of a library.

Why a lock: Lance commits a table's creation as an Overwrite. When two writers each find a
table missing and create it at about the same moment, the later create is not refused: Lance
rebases it onto the first writer's table as a new version, and every row the first writer added
in between is gone. Reproduced against a moto S3 bucket with four processes that each create
(exist_ok) and append one row: one trial in fifteen silently lost a row (bench/table_race.py),
and CI once failed with "Append transaction is incompatible with concurrent transaction
Overwrite" when the Overwrite landed first.

So the creator takes a lock where every writer sees it (an object put with If-None-Match on the
bucket of a remote library; a file opened with O_EXCL in a local one) and, holding it, looks
again whether the table is still missing. Creating a table takes well under a second, so a lock
older than STALE_AFTER_S, or one whose process is gone on this host, was left by a crash and is
taken over.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import writers
from ..errors import LibraryError

if TYPE_CHECKING:
    from .storage import Mirror

log = logging.getLogger(__name__)

STALE_AFTER_S = 30.0
WAIT_S = 60.0  # a live holder is done in milliseconds; this long means it hangs
POLL_S = 0.1


class _FileSlot:
    """The lock as a file in a local library (leases/create-<table>.lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)

    def try_take(self, payload: bytes) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        return True

    def read(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None

    def drop(self) -> None:
        self.path.unlink(missing_ok=True)


class _BucketSlot:
    """The lock as an object on the bucket of a remote library (.locks/create-<table>)."""

    def __init__(self, mirror: Mirror, key: str) -> None:
        self.mirror = mirror
        self.key = key
        self.where = f"{mirror.uri}/{key}"

    def try_take(self, payload: bytes) -> bool:
        return self.mirror.put_if_absent(self.key, payload)

    def read(self) -> bytes | None:
        return self.mirror.read_object(self.key)

    def drop(self) -> None:
        self.mirror.delete_object(self.key)


def _slot(root: Path, mirror: Mirror | None, table: str) -> _FileSlot | _BucketSlot:
    if mirror is not None:
        return _BucketSlot(mirror, f".locks/create-{table}")
    return _FileSlot(root / "leases" / f"create-{table}.lock")


def _abandoned(payload: bytes | None, now: float) -> bool:
    """Whether a lock that was read was left by a writer that will never release it."""
    if payload is None:
        return False  # released meanwhile: just try again
    try:
        data = json.loads(payload)
        taken_at = float(data["at"])
        holder = writers.Writer.from_dict(data["holder"])
    except (ValueError, KeyError, TypeError):
        return True  # unreadable: a writer that died mid-write (the payload is one small write)
    if now - taken_at > STALE_AFTER_S:
        return True
    return writers.liveness(holder) is writers.Liveness.GONE


@contextmanager
def creating(root: Path, mirror: Mirror | None, table: str, *, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold the library's lock on creating `table` (see the module docstring)."""
    slot = _slot(root, mirror, table)
    deadline = time.monotonic() + wait_s
    while True:
        payload = json.dumps({"holder": writers.current().as_dict(), "at": time.time()}).encode()
        if slot.try_take(payload):
            break
        seen = slot.read()
        if _abandoned(seen, time.time()):
            log.warning("taking over the lock on creating %s from a writer gone (%s)", table, slot.where)
            # Delete only what was judged stale: a fresh lock taken meanwhile is someone's.
            if slot.read() == seen:
                slot.drop()
            continue
        if time.monotonic() > deadline:
            raise LibraryError(
                f"The library is busy: another writer has been creating its {table} table for over "
                f"{wait_s:.0f} s ({slot.where}).",
                "Try again in a minute; if no other program is writing this library, delete that lock.",
            )
        time.sleep(POLL_S)
    try:
        yield
    finally:
        try:
            slot.drop()
        except (OSError, LibraryError) as exc:  # the table exists; a lock left behind goes stale
            log.warning("could not release the lock on creating %s: %s", table, exc)


def create_once(db: Any, name: str, schema: Any, root: Path, mirror: Mirror | None,
                table_names: Callable[[], set[str]]) -> Any:
    """Table `name` of LanceDB connection `db`: created under the lock, unless another writer
    created it while this one waited (then opened)."""
    with creating(root, mirror, name):
        if name in table_names():
            return db.open_table(name)
        return db.create_table(name, schema=schema, exist_ok=True)
