"""What an import reads (the PDFs under the paths given) and what it reports back."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable


@dataclass
class ImportOutcome:
    path: str
    status: str  # added | duplicate | failed | cancelled
    paper_id: str = ""
    message: str = ""


@dataclass
class ImportReport:
    outcomes: list[ImportOutcome] = field(default_factory=list)
    pages: int = 0
    chunks: int = 0
    seconds: float = 0.0
    words_seconds: float = 0.0  # until every paper of the run was listed and searchable by its words
    vectors_left: list[str] = field(default_factory=list)  # "words" papers another writer holds (vectors.py)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return self.count("failed") == 0


def collect_pdfs(paths: Iterable[str | Path]) -> tuple[list[Path], list[ImportOutcome]]:
    """Expand files and folders (recursively) into PDF paths, in a stable order.

    Returns the PDFs and outcomes for arguments that are not usable at all.
    """
    found: list[Path] = []
    problems: list[ImportOutcome] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf"))
        elif path.is_file():
            found.append(path)
        else:
            problems.append(ImportOutcome(str(path), "failed", message=f"{path}: no such file or folder"))
    unique: list[Path] = []
    seen: set[Path] = set()
    for p in found:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique, problems


def file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
