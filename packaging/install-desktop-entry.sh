#!/usr/bin/env bash
# Register the app with the Linux desktop (menu entry + icon) for the current user.
#   packaging/install-desktop-entry.sh [path/to/research-desk]
# Without an argument the entry runs `research-desk` from PATH (the venv's script or the
# PyInstaller build's dist/research-desk/research-desk, linked into ~/.local/bin).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor"
mkdir -p "$apps" "$icons/256x256/apps" "$icons/scalable/apps"
cp "$here/research-desk.png" "$icons/256x256/apps/research-desk.png"
cp "$here/../resources/icons/research-desk.svg" "$icons/scalable/apps/research-desk.svg"
if [[ $# -ge 1 ]]; then
    exe="$(realpath "$1")"
    sed "s|^Exec=.*|Exec=$exe %F|; s|^TryExec=.*|TryExec=$exe|" "$here/research-desk.desktop" > "$apps/research-desk.desktop"
else
    cp "$here/research-desk.desktop" "$apps/research-desk.desktop"
fi
command -v update-desktop-database >/dev/null && update-desktop-database "$apps" || true
echo "installed $apps/research-desk.desktop"
