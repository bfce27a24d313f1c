"""libgomp reads OMP_WAIT_POLICY once, when llama_cpp is first imported: the package must have set it by
then, whichever of its modules is imported first (omp_policy.py). Run in a fresh interpreter each, since
this one has long loaded llama_cpp."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

# Records the policy at the first import after which libgomp is mapped into the process.
PROBE = """
import builtins, importlib, os, sys
seen = []
real_import = builtins.__import__
def watching(name, *args, **kwargs):
    module = real_import(name, *args, **kwargs)
    if not seen and "libgomp" in open("/proc/self/maps").read():
        seen.append(os.environ.get("OMP_WAIT_POLICY", "unset"))
    return module
builtins.__import__ = watching
importlib.import_module(sys.argv[1])
print(seen[0] if seen else "not loaded")
"""


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
@pytest.mark.parametrize("module", [
    "app.core.models.llamacpp_embedding",  # what import loads: it pulled llama_cpp in before the policy was set
    "app.core.models.reply_opening",
    "app.core.models.grammar_sampling",
    "app.core.models.llamacpp",
])
def test_wait_policy_is_set_before_llama_cpp_loads_libgomp(module: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", PROBE, module], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout.split()
    assert out[-1] == "PASSIVE"


def test_a_policy_the_user_set_wins() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_WAIT_POLICY": "ACTIVE"}
    env.pop("GOMP_SPINCOUNT", None)
    code = "import os, app.core.models; print(os.environ['OMP_WAIT_POLICY'], os.environ.get('GOMP_SPINCOUNT', '-'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    assert out == ["ACTIVE", "-"]
