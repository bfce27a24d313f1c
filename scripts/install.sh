#!/usr/bin/env bash
# Install Research Desk into ./.venv.
#   scripts/install.sh          the app and the offline starter models (Qwen2.5-Coder-1.5B + MiniLM)
#   scripts/install.sh --test   the app, the test tools and the tiny test models (SmolLM2-135M + MiniLM)
set -euo pipefail
cd "$(dirname "$0")/.."

mode="app"
[[ "${1:-}" == "--test" ]] && mode="test"

PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required"'

[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip wheel

# llama-cpp-python compiles llama.cpp from source (6-14 minutes on 2 cores). We build it once
# per machine into our own wheel cache, with portable CPU flags: the default -march=native
# build enables AMX/AVX-512 kernels that crashed (SIGSEGV) on a VM that advertises AMX.
# pip's own wheel cache ignores CMAKE_ARGS, so it must not supply this package.
LLAMA_VERSION=0.3.36
WHEELS="${RESEARCH_DESK_WHEELS:-$HOME/.cache/research-desk/wheels/llama-$LLAMA_VERSION-portable}"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo "Building llama-cpp-python $LLAMA_VERSION (portable CPU build; takes several minutes)…"
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        .venv/bin/python -m pip wheel --quiet --no-deps --no-cache-dir \
        "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi
.venv/bin/python -m pip install --quiet --no-deps --force-reinstall "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl

if [[ "$mode" == "test" ]]; then
    .venv/bin/python -m pip install --quiet -e ".[test]"
    # Tiny real models for the tests, provisioned once per machine into a cache folder.
    export RESEARCH_DESK_MODELS_DIR="${RESEARCH_DESK_MODELS_DIR:-$HOME/.cache/research-desk/test-models}"
    .venv/bin/research-desk models setup --test
else
    .venv/bin/python -m pip install --quiet -e .
    .venv/bin/research-desk models setup
fi
