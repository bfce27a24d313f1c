"""Smoke run on a second Python version: import a paper built here, then evidence-only research.

Run with the interpreter of the venv under test (`.venv-py3XX/bin/python .ci/smoke.py`);
the tiny test models must be provisioned ($RESEARCH_DESK_MODELS_DIR). Goes through the
command line, as a user would, in a temporary library and config folder. Exit 1 on failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pymupdf  # noqa: E402

from app.core.models import provision  # noqa: E402
from app.core.settings import ModelConfig, Settings  # noqa: E402

PAGES = [
    "Kestrel Migration Timing in Alpine Valleys\nMaria Lindqvist, Tomas Berg\n\nAbstract\n"
    "We study when kestrels leave alpine valleys in autumn using ten years of ringing data.",
    "Methods\nBirds were fitted with 4 gram GPS loggers. The loggers recorded a position every 30 minutes.",
    "Results\nThe median departure date was 14 September. Young birds departed 9 days later than adults.",
]


def make_pdf(path: Path) -> None:
    doc = pymupdf.open()
    for text in PAGES:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 523, 770), text, fontsize=11)
    doc.set_metadata({"title": "Kestrel Migration Timing in Alpine Valleys"})
    doc.save(path)


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def main() -> int:
    started = time.monotonic()
    models = provision.ensure_test_models(Path(os.environ["RESEARCH_DESK_MODELS_DIR"]))
    with tempfile.TemporaryDirectory(prefix="rd-smoke-") as tmp:
        root = Path(tmp)
        (root / "in").mkdir()
        make_pdf(root / "in" / "kestrel.pdf")
        Settings(
            chat=ModelConfig(path=str(models["chat"]), context_length=2048),
            embedding=ModelConfig(path=str(models["embedding"]), context_length=512),
        ).save(root / "config" / "settings.json")
        env = {**os.environ, "RESEARCH_DESK_CONFIG_DIR": str(root / "config"), "RESEARCH_DESK_DATA_DIR": str(root / "data")}
        lib = str(root / "lib")
        added = cli("--library", lib, "add", str(root / "in"), env=env)
        if added.returncode != 0:
            print(f"smoke: add failed ({added.returncode}):\n{added.stdout}\n{added.stderr}", file=sys.stderr)
            return 1
        found = cli("--library", lib, "research", "--json", "--evidence-only", "When do kestrels leave the valleys?", env=env)
        if found.returncode != 0:
            print(f"smoke: research failed ({found.returncode}):\n{found.stdout}\n{found.stderr}", file=sys.stderr)
            return 1
        result = json.loads(found.stdout)
        pages = sorted({e["page"] for e in result.get("evidence", [])})
        if 3 not in pages:
            print(f"smoke: the departure date (page 3) is not in the evidence (pages {pages})", file=sys.stderr)
            return 1
    print(f"smoke: Python {sys.version.split()[0]}: imported a paper, evidence from pages {pages} "
          f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
