"""Who is writing to a library: this process's identity, and whether another's is still alive.

Several processes (the window, `research-desk add`, scripts, other machines) may write one
library at once. Two things need to know whether a writer is still there: temp files (only a
gone writer's are garbage, atomic_files) and import leases (a gone writer's paper is taken
over, leases.py). A writer is named by host, pid and process start time: the pid alone is
reused by the system, the start time tells a new process with an old pid from the old one.

Liveness can only be known on the same host; a writer on another machine is `UNKNOWN`, and
callers fall back to time (a lease's expiry, a temp file's age).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

log = logging.getLogger(__name__)

_TAG = re.compile(r"~([A-Za-z0-9-]{1,40})_(\d+)_(\d+)~")


class Liveness(Enum):
    ALIVE = "alive"
    GONE = "gone"
    UNKNOWN = "unknown"  # another host, or no way to look here


@dataclass(frozen=True)
class Writer:
    host: str  # [A-Za-z0-9-], so that it fits in a file name
    pid: int
    started: int  # process start: clock ticks since boot (Linux) or seconds since the epoch; 0 unknown

    @property
    def tag(self) -> str:
        """The writer as a file-name fragment (temp files carry it)."""
        return f"~{self.host}_{self.pid}_{self.started}~"

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"

    def as_dict(self) -> dict[str, object]:
        return {"host": self.host, "pid": self.pid, "started": self.started}

    @classmethod
    def from_dict(cls, data: dict) -> "Writer":
        return cls(str(data.get("host", "")), int(data.get("pid", 0)), int(data.get("started", 0)))


def host_name() -> str:
    name = re.sub(r"[^A-Za-z0-9-]+", "-", socket.gethostname()).strip("-")[:40]
    return name or "host"


@lru_cache(maxsize=1)
def _this_host() -> str:
    return host_name()


def current() -> Writer:
    """This process (computed per call: a forked child is another writer than its parent)."""
    pid = os.getpid()
    return Writer(_this_host(), pid, _start_time(pid) or 0)


def writer_in_name(name: str) -> Writer | None:
    """The writer a temp file name carries (see `Writer.tag`), or None (an older, untagged name)."""
    match = _TAG.search(name)
    if match is None:
        return None
    return Writer(match.group(1), int(match.group(2)), int(match.group(3)))


def liveness(writer: Writer) -> Liveness:
    """Whether `writer` still runs: only answerable for a writer on this host."""
    if writer.host != _this_host():
        return Liveness.UNKNOWN
    if writer.pid == os.getpid():
        return Liveness.ALIVE if writer.started in (0, current().started) else Liveness.GONE
    started = _start_time(writer.pid)
    if started is None:
        return _pid_exists(writer.pid)
    if writer.started and not _same_start(started, writer.started):
        return Liveness.GONE  # the pid was reused by a later process
    return Liveness.ALIVE


def _same_start(a: int, b: int) -> bool:
    # /proc gives exact clock ticks; psutil's epoch seconds may round differently across calls.
    return a == b if sys.platform.startswith("linux") else abs(a - b) <= 1


def _start_time(pid: int) -> int | None:
    """The process's start time, or None when it does not exist (or cannot be looked at)."""
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
        except OSError:
            return None
        # The command name (field 2) is in parentheses and may hold spaces: split after it.
        fields = stat.rpartition(")")[2].split()
        try:
            return int(fields[19])  # field 22 of proc(5): starttime, in clock ticks since boot
        except (IndexError, ValueError):
            return None
    try:
        import psutil  # elsewhere (macOS, Windows) psutil, which PyMuPDF already brings, knows

        return int(psutil.Process(pid).create_time())
    except ImportError:
        return None
    except Exception:  # noqa: BLE001 - NoSuchProcess, AccessDenied, …: "cannot tell" is the answer
        log.debug("no start time for pid %s", pid, exc_info=True)
        return None


def _pid_exists(pid: int) -> Liveness:
    if sys.platform.startswith("linux"):
        return Liveness.ALIVE if os.path.exists(f"/proc/{pid}") else Liveness.GONE
    if os.name == "nt":
        return Liveness.UNKNOWN  # os.kill(pid, 0) would terminate the process there
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return Liveness.GONE
    except PermissionError:
        return Liveness.ALIVE  # exists, owned by someone else
    return Liveness.ALIVE
