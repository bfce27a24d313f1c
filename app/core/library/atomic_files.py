"""Files written so that a crash leaves the old content or the new, never half.

In a library on object storage (storage.py) the same writes go to the bucket first: the new
bytes are uploaded before they replace the local file, so a failed upload fails the write and
leaves the old file in both places. Local libraries skip that with one empty-dict lookup.

Temp files carry their writer (host, pid, process start; writers.py) in their name, so that a
process opening the library removes only those whose writer is gone, never the work in
progress of another window, CLI run or machine (`remove_abandoned_temps`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TextIO

from . import storage, writers

# A temp file whose writer cannot be asked (another host, or an untagged name from an older
# version) is garbage once untouched this long; a live writer streaming into one touches it
# every page, and a copy takes seconds.
UNOWNED_TEMP_AGE_S = 6 * 3600


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so that a crash leaves the old content or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _mkstemp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        replace_file(Path(tmp), path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """`atomic_write_text` for bytes (a zip, a PDF)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _mkstemp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        replace_file(Path(tmp), path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _mkstemp(dst)
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        replace_file(Path(tmp), dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_file(tmp: Path, path: Path) -> None:
    """Move a finished temp file into place (os.replace), storing it on the bucket first when
    `path` is in a library on object storage. For writers that stream to their own temp file."""
    remote = storage.mirror_of(path)
    if remote is None:
        os.replace(tmp, path)
        return
    mirror, key = remote
    etag = mirror.upload(tmp, key)
    os.replace(tmp, path)
    mirror.record(key, etag)


def remove_file(path: Path) -> None:
    """Delete a library file (from the bucket first, for a library on object storage)."""
    remote = storage.mirror_of(path)
    if remote is not None:
        remote[0].delete(remote[1])
    path.unlink(missing_ok=True)


def _mkstemp(path: Path) -> tuple[int, str]:
    """A new temp file beside `path`, named `.<name>.~<host>_<pid>_<start>~<random>.tmp`."""
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{writers.current().tag}", suffix=".tmp")


def open_temp_text(path: Path) -> tuple[TextIO, Path]:
    """A text file to stream into, beside `path` (move it into place with `replace_file`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _mkstemp(path)
    return os.fdopen(fd, "w", encoding="utf-8"), Path(tmp)


def is_abandoned(tmp: Path, now: float | None = None) -> bool:
    """Whether a temp file's writer is gone: its process ended (same host), or, where that
    cannot be asked, the file has not been touched for UNOWNED_TEMP_AGE_S."""
    writer = writers.writer_in_name(tmp.name)
    if writer is not None:
        alive = writers.liveness(writer)
        if alive is not writers.Liveness.UNKNOWN:
            return alive is writers.Liveness.GONE
    try:
        age = (time.time() if now is None else now) - tmp.stat().st_mtime
    except FileNotFoundError:
        return False  # its writer just moved it into place
    return age > UNOWNED_TEMP_AGE_S


def remove_abandoned_temps(folder: Path) -> int:
    """Delete the temp files (`.*.tmp`) in `folder` whose writer is gone; the number removed."""
    removed = 0
    for tmp in folder.glob(".*.tmp"):
        if is_abandoned(tmp):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed
