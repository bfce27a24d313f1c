#!/usr/bin/env bash
# Install Research Desk into ./.venv (or $RESEARCH_DESK_VENV).
#   scripts/install.sh          the app and the offline starter models (Qwen2.5-Coder-1.5B + MiniLM)
#   scripts/install.sh --test   the app, the test tools and the tiny test models (SmolLM2-135M + MiniLM)
# Python 3.11, 3.12 or 3.13: $PYTHON names the interpreter; otherwise the first of
# python3.11, python3.12, python3.13, python3 that runs and is one of those.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="app"
[[ "${1:-}" == "--test" ]] && mode="test"
VENV="${RESEARCH_DESK_VENV:-.venv}"

supported() {  # runs, and is CPython 3.11-3.13
    "$1" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else 1)' >/dev/null 2>&1
}
if [[ -n "${PYTHON:-}" ]]; then
    PY="$PYTHON"
    if ! supported "$PY"; then
        echo "error: PYTHON=$PY is not a Python 3.11-3.13 that runs here" >&2
        exit 1
    fi
else
    PY=""
    for candidate in python3.11 python3.12 python3.13 python3; do
        if supported "$candidate"; then PY="$candidate"; break; fi
    done
    if [[ -z "$PY" ]]; then
        echo "error: Python 3.11, 3.12 or 3.13 is required (set PYTHON=/path/to/python3.x)" >&2
        exit 1
    fi
fi

[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip wheel

# llama-cpp-python compiles llama.cpp from source (6-14 minutes on 2 cores). We build it once
# per machine into our own wheel cache. Not with -march=native: that enables AMX kernels, which
# crashed (SIGSEGV) on a VM that advertises AMX. The AVX-512 kernels this CPU has are named
# instead (llama_cpu_flags), since they read prompts faster than the AVX2 baseline (docs/research.md).
# pip's own wheel cache ignores CMAKE_ARGS, so it must not supply this package.
llama_cpu_flags() {
    local flags args="" name
    flags="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)"
    for name in avx512f:AVX512 avx512_vnni:AVX512_VNNI avx512vbmi:AVX512_VBMI avx512_bf16:AVX512_BF16 avx_vnni:AVX_VNNI; do
        if [[ " $flags " == *" ${name%%:*} "* ]]; then args+=" -DGGML_${name##*:}=ON"; fi
    done
    echo "$args"
}
LLAMA_VERSION=0.3.36
LLAMA_CPU="$(llama_cpu_flags)"
LLAMA_TAG="$(echo "$LLAMA_CPU" | sed -e 's/-DGGML_//g' -e 's/=ON//g' | tr 'A-Z ' 'a-z-' | sed 's/^-//')"
WHEELS="${RESEARCH_DESK_WHEELS:-$HOME/.cache/research-desk/wheels/llama-$LLAMA_VERSION-${LLAMA_TAG:-portable}}"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo "Building llama-cpp-python $LLAMA_VERSION (CPU build${LLAMA_TAG:+ with $LLAMA_TAG}; takes several minutes)…"
    CMAKE_ARGS="-DGGML_NATIVE=OFF$LLAMA_CPU" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$VENV/bin/python" -m pip wheel --quiet --no-deps --no-cache-dir \
        "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi
# The wheel is tagged py3-none (llama.cpp is loaded through ctypes): one build serves 3.11-3.13.
"$VENV/bin/python" -m pip install --quiet --no-deps --force-reinstall "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl

if [[ "$mode" == "test" ]]; then
    "$VENV/bin/python" -m pip install --quiet -e ".[test]"
    # Tiny real models for the tests, provisioned once per machine into a cache folder.
    export RESEARCH_DESK_MODELS_DIR="${RESEARCH_DESK_MODELS_DIR:-$HOME/.cache/research-desk/test-models}"
    "$VENV/bin/research-desk" models setup --test
else
    "$VENV/bin/python" -m pip install --quiet -e .
    "$VENV/bin/research-desk" models setup
fi
