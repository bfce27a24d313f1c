"""Judge cut-offs calibrated on this machine (`models calibrate`), kept per model.

The catalog holds cut-offs for the models it knows; any other model — a GGUF the user
added, a model on a server — gets its own here, in the user's data folder. A model is
known by what it is, not where it sits: a GGUF by its file's sha256 (a renamed or moved
file keeps its cut-offs, a re-quantised one does not), a server's model by the server and
the model's id. The factory asks here first, then the catalog.

The catalog's own models come calibrated: `resources/judge/calibrations.json` holds what
`models calibrate` measured for them on the labelled pairs (their cut-offs are the catalog's), so
rating the starter does not read 128 pairs again. A calibration made here takes precedence.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from .. import paths
from ..settings import ModelConfig
from . import catalog
from .catalog import JudgeCutoffs

log = logging.getLogger(__name__)

FILE = "judge-calibrations.json"
SHIPPED = ("judge", "calibrations.json")  # under resources/: the catalog models' calibrations


@dataclass(frozen=True)
class StoredCalibration:
    """One model's calibrated cut-offs and how well they agreed with the labelled pairs."""

    key: str
    model: str  # for people: the file name or server model id
    supported: float
    partial: float
    agreement: float  # share of the labelled pairs the check's verdict matched (3-way)
    misattributions_passed: int
    misattributions: int
    pairs: int
    when: str = ""  # ISO date and time
    p_yes: tuple[float | None, ...] = ()  # per labelled pair (None: the rules decided), as calibrate measured
    not_found: float | None = None  # JudgeCutoffs.not_found

    @property
    def cutoffs(self) -> JudgeCutoffs:
        return JudgeCutoffs(supported=self.supported, partial=self.partial, not_found=self.not_found)


def store_path() -> Path:
    return paths.data_dir() / FILE


def model_key(cfg: ModelConfig, served_name: str = "") -> str:
    """What identifies `cfg`'s model: `gguf:<sha256>` for a file (hashed once, then read from its
    sidecar), `<backend>:<server>|<model id>` for a server's model (`served_name`: the id the
    server reported when the config names none)."""
    if cfg.backend == "llamacpp":
        from .provision import file_sha256

        return f"gguf:{file_sha256(Path(cfg.path).expanduser())}"
    server = cfg.base_url if cfg.backend == "openai" else cfg.host
    return f"{cfg.backend}:{server.rstrip('/')}|{cfg.model or served_name}"


def _read() -> dict[str, dict]:
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("judge calibrations unreadable (%s): models use the catalog's cut-offs", exc)
        return {}
    return data if isinstance(data, dict) else {}


def shipped_path() -> Path:
    return paths.resources_dir().joinpath(*SHIPPED)


@cache
def _read_shipped() -> dict[str, dict]:
    try:
        return json.loads(shipped_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def lookup(key: str) -> StoredCalibration | None:
    """The model's calibration made here, else the one shipped for a catalog model; None: never calibrated."""
    raw = _read().get(key) or _read_shipped().get(key)
    if not raw:
        return None
    try:
        return StoredCalibration(**{**raw, "p_yes": tuple(raw.get("p_yes", ()))})
    except TypeError:  # written by another version: calibrate again
        return None


def save(record: StoredCalibration) -> Path:
    """Keep `record` (replacing the model's previous one); written atomically."""
    data = _read()
    data[record.key] = asdict(record)
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def cutoffs_for(cfg: ModelConfig, served_name: str = "") -> JudgeCutoffs | None:
    """The cut-offs calibrated here for `cfg`'s model; None where it was never calibrated.
    Hashes a GGUF only when some calibration is stored (its sidecar keeps the hash after that)."""
    if not store_path().is_file():
        return None
    try:
        found = lookup(model_key(cfg, served_name))
    except OSError as exc:
        log.warning("cannot identify %s for its judge cut-offs: %s", cfg.describe(), exc)
        return None
    return found.cutoffs if found else None


def is_calibrated(cfg: ModelConfig) -> bool | None:
    """Whether `cfg`'s model has judge cut-offs of its own: calibrated here, shipped, or in the catalog.
    None where that cannot be told without asking a server which model it serves (no model named).
    A GGUF is hashed only where some calibration is kept here (the shipped ones are the catalog's)."""
    if cfg.backend == "llamacpp":
        if catalog.judge_cutoffs(cfg.catalog_id or cfg.path) is not None:
            return True
        if not Path(cfg.path).expanduser().is_file():
            return None
        if not store_path().is_file():
            return False
    elif not cfg.model:
        return None
    try:
        return lookup(model_key(cfg)) is not None
    except OSError as exc:
        log.warning("cannot identify %s to tell whether its judge is calibrated: %s", cfg.describe(), exc)
        return None
