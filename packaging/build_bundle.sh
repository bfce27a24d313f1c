#!/usr/bin/env bash
# Build the one-folder app bundle dist/research-desk/ with PyInstaller, then smoke-test it.
#   packaging/build_bundle.sh             build, then packaging/smoke_bundle.py on the result
#   packaging/build_bundle.sh --no-smoke  build only
# Needs the app's virtual environment (scripts/install.sh; $RESEARCH_DESK_VENV names another).
# Build on the oldest Linux you want to support: glibc is not bundled.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${RESEARCH_DESK_VENV:-.venv}"
PY="$VENV/bin/python"
EXE=dist/research-desk/research-desk
if [[ -x "$VENV/Scripts/python.exe" ]]; then  # Windows (Git Bash): the venv's layout there
    PY="$VENV/Scripts/python.exe"
    EXE="$EXE.exe"
fi
if [[ ! -x "$PY" ]]; then
    echo "error: no virtual environment at $VENV; run scripts/install.sh first" >&2
    exit 1
fi
"$PY" -m pip install --quiet "pyinstaller>=6"
start=$SECONDS
"$PY" -m PyInstaller packaging/research-desk.spec --noconfirm --log-level WARN \
    --distpath dist --workpath build/pyinstaller
echo "built dist/research-desk/ in $((SECONDS - start)) s, $(du -sh dist/research-desk | cut -f1)"
if [[ "${1:-}" != "--no-smoke" ]]; then
    "$PY" packaging/smoke_bundle.py "$EXE"
fi
