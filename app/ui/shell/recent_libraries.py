"""File → Open Recent: the libraries this window opened, most recent first (folders and URIs).

Kept in the window's QSettings file (window.ini, beside settings.json) under
`recentLibraries`: window state, not a setting of the core. A local folder that is
gone is listed disabled, with a tooltip that says so; a URI (s3://…, gs://…, az://…)
cannot be checked without the network and is always enabled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMenu

MAX_RECENT = 10
KEY = "recentLibraries"


def is_uri(location: str) -> bool:
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.isalnum() and len(scheme) > 1 and scheme.lower() != "file"


def normalise(location: str) -> str:
    """A URI as given (without a trailing slash); a folder as an absolute path."""
    location = location.strip()
    if is_uri(location):
        return location.rstrip("/")
    if location.startswith("file://"):
        location = location[len("file://"):]
    return str(Path(location).expanduser().absolute())


def available(location: str) -> bool:
    return is_uri(location) or Path(location).is_dir()


class RecentLibraries:
    """The list, read from and written to `settings` (a factory: each use reads the file afresh)."""

    def __init__(self, settings: Callable[[], QSettings]) -> None:
        self._settings = settings

    def entries(self) -> list[str]:
        value = self._settings().value(KEY, [])
        if isinstance(value, str):  # QSettings gives a one-item list back as a string
            value = [value]
        return [str(v) for v in (value or []) if v][:MAX_RECENT]

    def add(self, location: str) -> list[str]:
        """Put `location` first (moving it up if listed); keep the newest MAX_RECENT."""
        if not location:
            return self.entries()
        entry = normalise(location)
        items = [entry] + [e for e in self.entries() if e != entry]
        return self._store(items[:MAX_RECENT])

    def remove(self, location: str) -> list[str]:
        return self._store([e for e in self.entries() if e != location])

    def clear(self) -> None:
        self._store([])

    def _store(self, items: list[str]) -> list[str]:
        qs = self._settings()
        qs.setValue(KEY, items)
        qs.sync()
        return items

    def fill(self, menu: QMenu, open_library: Callable[[str], None], current: str = "") -> None:
        """Rebuild `menu`: one action per library (missing folders disabled), then Clear."""
        menu.clear()
        entries = self.entries()
        if not entries:
            empty = menu.addAction("No recent libraries")
            empty.setEnabled(False)
            return
        for n, location in enumerate(entries, 1):
            name = location.rstrip("/").rsplit("/", 1)[-1] or location
            prefix = f"&{n % 10} " if n <= 10 else ""
            action = menu.addAction(f"{prefix}{name} — {location}")
            action.setData(location)
            action.setCheckable(True)
            action.setChecked(bool(current) and normalise(current) == location)
            if available(location):
                action.setToolTip(location)
                action.triggered.connect(lambda _=False, loc=location: open_library(loc))
            else:
                action.setEnabled(False)
                action.setToolTip(f"{location} (folder not found)")
                action.setText(action.text() + "  (not found)")
        menu.addSeparator()
        menu.addAction("Clear recent libraries", self.clear)
