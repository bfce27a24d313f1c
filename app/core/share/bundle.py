"""An evidence bundle: one .zip holding the shared page and its manifest.

    page.html       the self-contained web page (page.py)
    manifest.json   each citation's paper hash, page, quote, span and verdict (manifest.py)

`verify.py` reads it back; nothing in it needs the library to be read.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

from ..library.atomic_files import atomic_write_bytes
from .manifest import MANIFEST, PAGE, manifest
from .records import SharedAnswer


def write_bundle(answer: SharedAnswer, page_html: str, out: Path) -> Path:
    page = page_html.encode("utf-8")
    data = manifest(answer, hashlib.sha256(page).hexdigest())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(PAGE, page)
        z.writestr(MANIFEST, json.dumps(data, indent=2, ensure_ascii=False))
    atomic_write_bytes(out, buffer.getvalue())
    return out


def read_bundle(path: Path) -> tuple[dict, bytes | None]:
    """(the manifest's JSON, page.html's bytes or None); raises OSError / zipfile.BadZipFile / ValueError."""
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        if MANIFEST not in names:
            raise ValueError(f"it holds no {MANIFEST}")
        data = json.loads(z.read(MANIFEST).decode("utf-8"))
        page = z.read(PAGE) if PAGE in names else None
    return data, page
