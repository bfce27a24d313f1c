"""Prompt beginnings' KV states kept on disk, so that a fresh process starts warm.

`WarmPrefixes` (llama_prefix.py) reads a prompt's fixed beginning once per process. A
command-line answer is a fresh process each time, and reading the answer prompt's, the quote
rating's and the check's beginnings again cost seconds before the first words. The states
are saved under `paths.prefix_states_dir()`, one file per (model file, beginning), and a
later process loads the file instead of reading the beginning.

A file is used only where everything that made it is unchanged: the model file (its path,
size and modification time), the beginning's tokens, the llama.cpp version and the context
size. Anything else (another model file at the same path, a newer llama.cpp, a truncated or
damaged file) is ignored with a log line and the beginning is read as before; the next save
writes over it. The folder is a cache: deleting it loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAGIC = b"RDPREFIX1\n"
# Files kept in the folder: the three or four beginnings every answer reads, for a few models;
# and their bytes (the starter model's answer beginning with its worked answers is ~25 MB).
# Dropped least recently used first.
MAX_FILES = 24
MAX_BYTES = 256 * 2**20


def model_key(model_path: str | Path, n_ctx: int) -> dict[str, Any]:
    """What the saved states of `model_path` depend on besides the beginning's tokens."""
    import llama_cpp

    p = Path(model_path).expanduser().resolve()
    st = p.stat()
    return {"model": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "llama_cpp": getattr(llama_cpp, "__version__", "?"), "n_ctx": int(n_ctx)}


class PrefixStore:
    """The saved states of one model's prompt beginnings, in `folder`."""

    def __init__(self, folder: Path, key: dict[str, Any]) -> None:
        self.folder = Path(folder)
        self.key = dict(key)

    def _path(self, tokens: list[int]) -> Path:
        # Named by the model's path and the tokens only: a stale state (the model file or llama.cpp
        # changed) is found, told apart by its header, and written over rather than left beside.
        h = hashlib.sha256(json.dumps([self.key["model"], tokens]).encode()).hexdigest()[:32]
        return self.folder / f"{h}.kv"

    def load(self, tokens: list[int]) -> bytes | None:
        """The saved state of the beginning `tokens`; None (with a log line where a file was there
        but not usable) if there is none for this model, beginning and llama.cpp."""
        path = self._path(tokens)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.info("prefix states: %s not read (%s); the prompt beginning is read instead", path.name, exc)
            return None
        why = self._unusable(data, tokens)
        if isinstance(why, str):
            log.info("prefix states: %s ignored (%s); the prompt beginning is read instead", path.name, why)
            return None
        try:
            os.utime(path)  # used now: the last to be dropped
        except OSError:
            pass
        return why

    def _unusable(self, data: bytes, tokens: list[int]) -> str | bytes:
        """The state in `data`, or why it cannot be used."""
        if not data.startswith(MAGIC):
            return "not a saved state"
        head_end = data.find(b"\n", len(MAGIC))
        if head_end < 0:
            return "truncated header"
        try:
            head = json.loads(data[len(MAGIC):head_end])
        except ValueError:
            return "damaged header"
        if not isinstance(head, dict):
            return "damaged header"
        if head.get("key") != self.key:
            theirs = head.get("key") or {}
            changed = [k for k in self.key if theirs.get(k) != self.key[k]] if isinstance(theirs, dict) else ["key"]
            return "saved for another " + (", ".join(changed) or "key")
        if head.get("tokens") != tokens:
            return "saved for another prompt beginning"
        state = data[head_end + 1:]
        if len(state) != head.get("bytes") or hashlib.sha256(state).hexdigest() != head.get("sha256"):
            return f"truncated or damaged: {len(state)} of {head.get('bytes')} bytes"
        return state

    def save(self, tokens: list[int], state: bytes) -> None:
        """Keep `state` for the beginning `tokens` (written whole or not at all); never raises."""
        path = self._path(tokens)
        head = {"key": self.key, "tokens": list(tokens), "bytes": len(state), "sha256": hashlib.sha256(state).hexdigest()}
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as fh:
                fh.write(MAGIC + json.dumps(head).encode() + b"\n")
                fh.write(state)
            os.replace(tmp, path)  # a reader sees the old file or the new one, never half of one
        except OSError as exc:
            log.info("prefix states: could not save %s (%s)", path.name, exc)
            tmp.unlink(missing_ok=True)
            return
        self._trim()

    def _trim(self) -> None:
        """Drop the least recently used files beyond `MAX_FILES` or `MAX_BYTES` (the newest always stays)."""
        try:
            files = sorted(((p.stat().st_mtime_ns, p.stat().st_size, p) for p in self.folder.glob("*.kv")), reverse=True)
            kept = total = 0
            for _, size, path in files:
                if kept and (kept >= MAX_FILES or total + size > MAX_BYTES):
                    path.unlink(missing_ok=True)
                    continue
                kept, total = kept + 1, total + size
        except OSError:
            pass
