"""A library on object storage (s3://, gs://, az://): a local cache folder mirrored to a bucket.

The rest of the core works on plain paths (LibraryLayout, atomic_files), so a remote library
is a local cache folder (one per URI and endpoint) that is the layout's root, plus a `Mirror`
that keeps it and the bucket in step:

- LanceDB tables are not mirrored: they live at `<uri>/index` and LanceDB reads and commits
  them on the bucket itself (its commits are conditional puts, so several writers are safe).
- Every file write under the cache root goes to the bucket *before* it replaces the local
  file (atomic_files calls `mirror_of` / `Mirror.upload`). A failed upload fails the write and
  leaves the old file everywhere, so the cache never holds the only copy of anything: it can
  be deleted at any time.
- Reads: which files are fetched on a miss and which are synced when the library opens:

  * pdfs/ and text/ are *read-through*: fetched when a path accessor asks for a missing one
    (opening a cited page, summarizing, reindexing). They are the bulk of a library (MBs a
    paper), and most sessions touch a few of them.
  * everything else (library.json, state.json, corrections.json, notes/, summaries/,
    results/) is *synced on open*: small, read for many papers at once or found by listing a
    folder (the UI shows a paper's notes and summary on each click; results/ is browsed), and
    edited by people, so a changed copy must replace the cached one. A miss there means "no
    such file", which costs no request.
  * On open every folder except index/ is listed (one request per 1,000 files): small files
    whose ETag differs from the one recorded for the cached copy are downloaded, cached
    pdfs/ and text/ files that changed or vanished are dropped (fetched again on use), and
    cached files that are no longer on the bucket are removed.

The ETag of each cached file is recorded in an append-only journal in the cache root
(`.remote-etags`); losing it only costs downloads. Endpoint, credentials and the cache folder:
storage_config.py. Local libraries never reach this module beyond a lookup in an empty dict.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import storage_config
from ..errors import LibraryError

log = logging.getLogger(__name__)

REMOTE_SCHEMES = ("s3", "s3a", "gs", "az", "abfs", "abfss", "azure")
LAZY_FOLDERS = ("pdfs", "text")  # fetched on a miss; the rest is synced on open
JOURNAL = ".remote-etags"
# index/: LanceDB's own tables, on the bucket. leases/: the import leases (leases.py), which
# use local file-system atomics; they coordinate the writers sharing this cache folder.
NOT_MIRRORED = ("index", "leases")

_LOCK = threading.Lock()
_BY_URI: dict[tuple[str, str], "Mirror"] = {}
_BY_ROOT: dict[Path, "Mirror"] = {}


def is_remote(location: str | os.PathLike) -> bool:
    """True for an object-storage URI (s3://bucket/prefix, gs://…, az://…)."""
    text = str(location)
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in REMOTE_SCHEMES


def normalized(uri: str) -> str:
    return uri.strip().rstrip("/")


def detach_all() -> None:
    """Forget every remote library of this process (tests; the cache folders stay)."""
    with _LOCK:
        _BY_URI.clear()
        _BY_ROOT.clear()


# -- the registry ---------------------------------------------------------------------------
def attach(uri: str, endpoint: str = "") -> "Mirror":
    """The mirror of a remote library (one per URI and endpoint in a process)."""
    uri = normalized(uri)
    endpoint = storage_config.resolve_endpoint(endpoint) if uri.startswith(("s3://", "s3a://")) else ""
    with _LOCK:
        mirror = _BY_URI.get((uri, endpoint))
        if mirror is None and not endpoint:
            # A layout named by URI alone (the window's file reader) joins the Desk's library.
            mirror = next((m for (u, _), m in _BY_URI.items() if u == uri), None)
        if mirror is None:
            options = storage_config.s3_options(endpoint) if uri.startswith(("s3://", "s3a://")) else {}
            mirror = Mirror(uri, storage_config.cache_root(uri, endpoint), options)
            _BY_URI[(uri, endpoint)] = mirror
            _BY_ROOT[mirror.root] = mirror
        return mirror


def mirror_at(root: Path) -> "Mirror | None":
    """The mirror whose cache folder is `root` (a layout built on the cache path itself)."""
    return _BY_ROOT.get(root) if _BY_ROOT else None


def mirror_of(path: Path) -> "tuple[Mirror, str] | None":
    """(mirror, key) when `path` lies in a remote library's cache; None for local libraries."""
    if not _BY_ROOT:
        return None
    for root, mirror in list(_BY_ROOT.items()):
        if path.is_relative_to(root):
            rel = path.relative_to(root).as_posix()
            if rel.split("/", 1)[0] in NOT_MIRRORED or _hidden(rel):
                return None
            return mirror, rel
    return None


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _lazy(rel: str) -> bool:
    return rel.split("/", 1)[0] in LAZY_FOLDERS


@dataclass
class SyncReport:
    listed: int = 0
    downloaded: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


class Mirror:
    """One remote library: its URI, cache folder, object store and the ETags of cached files."""

    def __init__(self, uri: str, root: Path, lance_options: dict[str, str]) -> None:
        self.uri = uri
        self.root = root
        self.lance_options = lance_options
        self._store = None
        self._etags: dict[str, str] = {}
        self._lock = threading.Lock()
        root.mkdir(parents=True, exist_ok=True)
        self._load_journal()

    @property
    def index_uri(self) -> str:
        return f"{self.uri}/index"

    @property
    def store(self):
        if self._store is None:
            try:
                self._store = storage_config.object_store(self.uri, self.lance_options)
            except Exception as exc:  # noqa: BLE001 - obstore raises its own types for a bad URI or config
                raise self._error("cannot be opened", exc) from exc
        return self._store

    def _error(self, what: str, exc: BaseException) -> LibraryError:
        return LibraryError(
            f"The library {self.uri} {what}: {storage_config.one_line(exc)}",
            "Check the bucket name, the endpoint (--endpoint or AWS_ENDPOINT_URL) and the credentials "
            "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE).",
        )

    # -- writes ------------------------------------------------------------------
    def upload(self, source: Path, rel: str) -> str:
        """Put `source`'s bytes at `rel` on the bucket; returns the new ETag."""
        import obstore

        try:
            result = obstore.put(self.store, rel, source)
        except Exception as exc:  # noqa: BLE001 - any store error fails the write, clearly
            raise self._error(f"could not store {rel}", exc) from exc
        return result.get("e_tag") or ""

    def delete(self, rel: str) -> None:
        import obstore

        try:
            obstore.delete(self.store, rel)
        except FileNotFoundError:
            pass  # already gone: the wanted state
        except Exception as exc:  # noqa: BLE001
            raise self._error(f"could not delete {rel}", exc) from exc
        self.record(rel, "")

    # -- small coordination objects (table_creation.py), never cached ------------------------
    def put_if_absent(self, rel: str, data: bytes) -> bool:
        """Create `rel` with `data` unless it exists (If-None-Match): False when it did."""
        import obstore
        from obstore.exceptions import AlreadyExistsError

        try:
            obstore.put(self.store, rel, data, mode="create")
        except AlreadyExistsError:
            return False
        except Exception as exc:  # noqa: BLE001
            raise self._error(f"could not store {rel}", exc) from exc
        return True

    def read_object(self, rel: str) -> bytes | None:
        import obstore

        try:
            return bytes(obstore.get(self.store, rel).bytes())
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001
            raise self._error(f"could not fetch {rel}", exc) from exc

    def delete_object(self, rel: str) -> None:
        import obstore

        try:
            obstore.delete(self.store, rel)
        except FileNotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001
            raise self._error(f"could not delete {rel}", exc) from exc

    def record(self, rel: str, etag: str) -> None:
        """Note which version the cached copy of `rel` is ("" = none)."""
        with self._lock:
            if etag:
                self._etags[rel] = etag
            else:
                self._etags.pop(rel, None)
            try:
                with open(self.root / JOURNAL, "a", encoding="utf-8") as fh:
                    fh.write(f"{etag}\t{rel}\n")
            except OSError as exc:  # the cache works without it; the next open downloads more
                log.warning("could not record %s in the cache journal: %s", rel, exc)

    # -- reads -----------------------------------------------------------------------
    def ensure_local(self, path: Path) -> bool:
        """Fetch `path` from the bucket when it is missing here; False when the bucket has none."""
        if path.exists():
            return True
        found = mirror_of(path)
        if found is None or found[0] is not self:
            return False
        return self._download(found[1], path)

    def fetch_folder(self, folder: str) -> Path:
        """Every file of a folder (pdfs/ for a rebuild), fetched; returns the local folder."""
        import obstore

        try:
            for batch in obstore.list(self.store, f"{folder}/"):
                for meta in batch:
                    self.ensure_local(self.root / meta["path"])
        except LibraryError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._error(f"could not list {folder}/", exc) from exc
        return self.root / folder

    def _download(self, rel: str, path: Path) -> bool:
        import obstore

        try:
            result = obstore.get(self.store, rel)
        except FileNotFoundError:
            return False
        except Exception as exc:  # noqa: BLE001
            raise self._error(f"could not fetch {rel}", exc) from exc
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in result:
                    fh.write(chunk)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.record(rel, result.meta.get("e_tag") or "")
        return True

    # -- open --------------------------------------------------------------------------
    def open(self, create: bool) -> None:
        """On opening the library: the bucket answers (and takes writes, when `create`); then
        the cached small files are refreshed."""
        if not create and not self.exists():
            raise LibraryError(f"No library at {self.uri}.", "Check the URI, or add papers to create one.")
        if create:
            self.check_writable()
        self.sync()

    def check_writable(self) -> None:
        """One small put and delete: a wrong endpoint, bucket or key fails here, clearly."""
        import obstore

        try:
            obstore.put(self.store, ".write-test", b"ok")
            obstore.delete(self.store, ".write-test")
        except LibraryError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._error("is not writable", exc) from exc

    def exists(self) -> bool:
        """Whether the bucket holds a library at this prefix (any file or table)."""
        listing = self._top()
        return bool(listing["objects"] or listing["common_prefixes"])

    def _top(self) -> dict[str, Any]:
        import obstore

        try:
            return obstore.list_with_delimiter(self.store)
        except Exception as exc:  # noqa: BLE001
            raise self._error("cannot be listed", exc) from exc

    def _listing(self) -> dict[str, dict[str, Any]]:
        import obstore

        top = self._top()
        remote = {m["path"]: m for m in top["objects"]}
        for prefix in top["common_prefixes"]:
            if prefix.rstrip("/") in NOT_MIRRORED:
                continue
            try:
                for batch in obstore.list(self.store, prefix.rstrip("/") + "/"):
                    remote.update((m["path"], m) for m in batch)
            except Exception as exc:  # noqa: BLE001
                raise self._error(f"cannot be listed ({prefix})", exc) from exc
        return {rel: meta for rel, meta in remote.items() if not _hidden(rel)}

    def sync(self) -> SyncReport:
        """Bring the cache in step with the bucket (see the module docstring for what and why)."""
        remote = self._listing()
        report = SyncReport(listed=len(remote))
        for rel, meta in remote.items():
            path = self.root / rel
            if path.exists() and self._etags.get(rel) == (meta.get("e_tag") or ""):
                continue
            if _lazy(rel):
                if path.exists():
                    path.unlink()
                    self.record(rel, "")
                    report.dropped.append(rel)
            elif self._download(rel, path):
                report.downloaded.append(rel)
        for path in self._cached_files():
            rel = path.relative_to(self.root).as_posix()
            if rel not in remote:  # removed by another writer: not in the library any more
                path.unlink(missing_ok=True)
                self.record(rel, "")
                report.dropped.append(rel)
        self._compact_journal()
        log.info("synced %s: %d files listed, %d downloaded, %d dropped from the cache",
                 self.uri, report.listed, len(report.downloaded), len(report.dropped))
        return report

    def _cached_files(self) -> list[Path]:
        found = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = Path(dirpath).relative_to(self.root).as_posix()
            if rel_dir == ".":
                dirnames[:] = [d for d in dirnames if d not in NOT_MIRRORED and not d.startswith(".")]
            else:
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            found.extend(Path(dirpath) / name for name in filenames if not name.startswith("."))
        return found

    # -- the journal of cached ETags ----------------------------------------------------------
    def _load_journal(self) -> None:
        try:
            lines = (self.root / JOURNAL).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("could not read the cache journal of %s (%s); cached files are checked again", self.uri, exc)
            return
        for line in lines:
            etag, sep, rel = line.partition("\t")
            if not sep:
                continue
            if etag:
                self._etags[rel] = etag
            else:
                self._etags.pop(rel, None)

    def _compact_journal(self) -> None:
        with self._lock:
            text = "".join(f"{etag}\t{rel}\n" for rel, etag in sorted(self._etags.items()))
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f"{JOURNAL}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, self.root / JOURNAL)
            except OSError as exc:
                Path(tmp).unlink(missing_ok=True)
                log.warning("could not rewrite the cache journal of %s: %s", self.uri, exc)
