"""The user's corrections to papers' metadata, kept beside the library so that they survive.

`corrections.json` in the library folder maps a PDF's content hash to the fields the user set
({"title": …, "authors": [...], …}). The importer applies them to what it read from the page,
so a re-import or an index rebuild keeps them; a corrected field is no longer "unsure".
The file is small, human-readable and written atomically.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from .store import atomic_write_text

log = logging.getLogger(__name__)

FILE_NAME = "corrections.json"
# Fields a user may correct, and the name `unsure` uses for each ("published" is the year).
EDITABLE = {"title": "title", "authors": "authors", "published": "year", "abstract": "abstract",
            "doi": "doi", "arxiv_id": "arxiv_id", "venue": "venue"}
_LOCK = threading.Lock()  # one writer per process; the write itself is atomic

T = TypeVar("T")


def corrections_path(library_root: str | Path) -> Path:
    return Path(library_root) / FILE_NAME


def load(library_root: str | Path) -> dict[str, dict[str, Any]]:
    """All corrections by content hash; {} when there are none or the file cannot be read."""
    path = corrections_path(library_root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s: cannot be read (%s); metadata corrections are not applied", path, exc)
        return {}
    if not isinstance(data, dict):
        log.warning("%s: not a JSON object; metadata corrections are not applied", path)
        return {}
    return {h: f for h, f in data.items() if isinstance(f, dict)}


def _checked(fields: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name not in EDITABLE:
            raise ValueError(f"{name!r} is not a metadata field that can be corrected ({', '.join(EDITABLE)})")
        if name == "authors":
            if isinstance(value, str):
                value = [a.strip() for a in value.split(";") if a.strip()]
            if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
                raise ValueError("authors must be a list of names")
            value = [" ".join(a.split()) for a in value if a.strip()]
        elif not isinstance(value, str):
            raise ValueError(f"{name} must be text")
        else:
            value = value.strip()
        out[name] = value
    return out


def save_correction(library_root: str | Path, content_hash: str, **fields: Any) -> dict[str, Any]:
    """Record the user's values for some fields of one paper; returns all its corrections.

    Example: save_correction(root, paper.content_hash, title="…", authors=["A. Smith"]).
    Raises ValueError for an unknown field or a value of the wrong type.
    """
    if not content_hash:
        raise ValueError("a paper's content hash is needed to record a correction")
    checked = _checked(fields)
    path = corrections_path(library_root)
    with _LOCK:
        if path.exists() and not load(library_root) and path.stat().st_size > 2:
            # Keep an unreadable file aside rather than overwrite what the user had.
            aside = path.with_name(f"{FILE_NAME}.unreadable-{int(time.time())}")
            path.replace(aside)
            log.warning("%s could not be read; kept as %s and started anew", path, aside.name)
        data = load(library_root)
        entry = {**data.get(content_hash, {}), **checked}
        data[content_hash] = entry
        atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
    return entry


def for_paper(library_root: str | Path, content_hash: str) -> dict[str, Any]:
    return load(library_root).get(content_hash, {})


def apply(target: T, fields: dict[str, Any]) -> T:
    """A copy of a PaperMeta or Paper with the corrected fields set and no longer unsure."""
    if not fields:
        return target
    changes = {k: (list(v) if isinstance(v, list) else v) for k, v in fields.items() if k in EDITABLE}
    done = {EDITABLE[k] for k in changes} | set(changes)
    changes["unsure"] = [u for u in getattr(target, "unsure", []) if u not in done]
    return replace(target, **changes)
