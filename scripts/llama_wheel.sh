#!/usr/bin/env bash
# The llama-cpp-python wheel for this machine: taken from the wheel cache, else built once
# with safe CPU flags and cached. Prints the wheel's path; messages go to stderr.
#   scripts/llama_wheel.sh [PYTHON]   PYTHON (default python3; 3.11-3.13) runs pip for the build
# scripts/install.sh uses it; for pip or pipx (README, "Install with pipx"):
#   pipx install research-desk --pip-args="--find-links $(dirname "$(scripts/llama_wheel.sh)")"
# $RESEARCH_DESK_LLAMA_INDEX: a pip index or folder that serves prebuilt llama-cpp-python
# wheels (a lab's share, the project's own CPU index); tried before building.
#
# llama-cpp-python publishes no wheels on PyPI, so pip compiles llama.cpp (6-14 minutes on 2
# cores, a C/C++ compiler and CMake) and by default with -march=native, which enables AMX
# kernels that crashed (SIGSEGV) on a VM that advertises AMX. The AVX-512 kernels the CPU has
# are named instead (they read prompts faster than the AVX2 baseline, docs/research.md), and
# the cache folder's name says which, so a wheel is only reused on a machine it fits.
set -euo pipefail
PY="${1:-python3}"
LLAMA_VERSION=0.3.36  # = pyproject.toml's pin (tests/test_install.py checks)

llama_cpu_flags() {
    local flags args="" name
    flags="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)"
    for name in avx512f:AVX512 avx512_vnni:AVX512_VNNI avx512vbmi:AVX512_VBMI avx512_bf16:AVX512_BF16 avx_vnni:AVX_VNNI; do
        if [[ " $flags " == *" ${name%%:*} "* ]]; then args+=" -DGGML_${name##*:}=ON"; fi
    done
    echo "$args"
}
LLAMA_CPU="$(llama_cpu_flags)"
LLAMA_TAG="$(echo "$LLAMA_CPU" | sed -e 's/-DGGML_//g' -e 's/=ON//g' | tr 'A-Z ' 'a-z-' | sed 's/^-//')"
WHEELS="${RESEARCH_DESK_WHEELS:-$HOME/.cache/research-desk/wheels/llama-$LLAMA_VERSION-${LLAMA_TAG:-portable}}"

cached() { ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1; }

if [[ -z "$(cached)" && -n "${RESEARCH_DESK_LLAMA_INDEX:-}" ]]; then
    echo "Looking for a prebuilt llama-cpp-python $LLAMA_VERSION in $RESEARCH_DESK_LLAMA_INDEX…" >&2
    if [[ -d "$RESEARCH_DESK_LLAMA_INDEX" ]]; then where=(--no-index --find-links "$RESEARCH_DESK_LLAMA_INDEX")
    else where=(--index-url "$RESEARCH_DESK_LLAMA_INDEX"); fi
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --timeout 30 "${where[@]}" \
        "llama-cpp-python==$LLAMA_VERSION" -d "$WHEELS" >&2 || echo "none fits this machine there" >&2
fi
if [[ -z "$(cached)" ]]; then
    cores="$(nproc 2>/dev/null || echo 2)"
    echo "Building llama-cpp-python $LLAMA_VERSION from source (CPU${LLAMA_TAG:+ with $LLAMA_TAG}): about" \
         "$(( (12 + cores - 1) / cores ))-$(( (28 + cores - 1) / cores )) minutes on $cores cores, once per machine;" \
         "needs a C/C++ compiler and CMake…" >&2
    start=$SECONDS  # --no-cache-dir: pip's own wheel cache ignores CMAKE_ARGS
    CMAKE_ARGS="-DGGML_NATIVE=OFF$LLAMA_CPU" CMAKE_BUILD_PARALLEL_LEVEL="$cores" \
        "$PY" -m pip wheel --quiet --no-deps --no-cache-dir "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS" >&2
    echo "Built in $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s; cached in $WHEELS" >&2
fi
cached
