"""What this copy of Research Desk is: its version, the libraries it runs on, and a report to send.

Shared by `research-desk --version`, the About dialog and Help → Copy diagnostics. The
versions come from the installed packages' metadata, so asking costs no heavy import
(only Qt's runtime version and MuPDF's need their modules, and only when asked). The
diagnostics report holds no secret: settings and environment pass through the core's
masking (app/core/desk/diagnostics.py).
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path

APP_NAME = "Research Desk"
DISTRIBUTION = "research-desk"
# (shown name, distribution names to try): the libraries a bug report needs.
COMPONENTS = (
    ("PySide6", ("PySide6-Essentials", "PySide6")),
    ("llama-cpp-python", ("llama_cpp_python", "llama-cpp-python")),
    ("LanceDB", ("lancedb",)),
    ("PyMuPDF", ("PyMuPDF", "pymupdf")),
    ("pylance", ("pylance",)),
    ("pyarrow", ("pyarrow",)),
    ("RapidOCR", ("rapidocr",)),
    ("onnxruntime", ("onnxruntime",)),
    ("obstore", ("obstore",)),
    ("lmstudio", ("lmstudio",)),
)
KEY_COMPONENTS = ("PySide6", "llama-cpp-python", "LanceDB", "PyMuPDF")  # --version's short list
ENV_PREFIXES = ("RESEARCH_DESK_", "AWS_", "LMSTUDIO", "OPENAI_", "QT_QPA_PLATFORM")


def app_version() -> str:
    """The installed package's version; in a checkout that is not installed, pyproject.toml's."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    import tomllib

    base = Path(getattr(sys, "_MEIPASS", "") or Path(__file__).resolve().parents[1])
    try:
        return str(tomllib.loads((base / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, ValueError):
        return "unknown"


def _package_version(names: tuple[str, ...]) -> str:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "not installed"


def _runtime_detail(name: str) -> str:
    """The native library under a binding: Qt under PySide6, MuPDF under PyMuPDF."""
    try:
        if name == "PySide6":
            from PySide6.QtCore import qVersion

            return f"Qt {qVersion()}"
        if name == "PyMuPDF":
            return f"MuPDF {_mupdf_version()}"
    except Exception as exc:  # noqa: BLE001 - a broken binding is itself worth reporting, not a crash
        return f"cannot load: {exc}"
    return ""


def _mupdf_version() -> str:
    """MuPDF's version: from the loaded module, else its info file (importing pymupdf takes seconds)."""
    loaded = sys.modules.get("pymupdf")
    if loaded is not None:
        return str(loaded.mupdf_version)
    import importlib.util
    import re

    spec = importlib.util.find_spec("pymupdf")
    info = Path(spec.origin).with_name("mupdf_info.py") if spec is not None and spec.origin else None
    found = re.search(r"^mupdf_version\s*=\s*['\"]([^'\"]+)", info.read_text(encoding="utf-8"), re.M) if info and info.is_file() else None
    if found:
        return found.group(1)
    import pymupdf

    return str(pymupdf.mupdf_version)


def component_versions(names: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """[(library, version)] with Python first; `names` limits the list (default: all of COMPONENTS)."""
    rows = [("Python", platform.python_version())]
    for shown, dists in COMPONENTS:
        if names is not None and shown not in names:
            continue
        version = _package_version(dists)
        detail = _runtime_detail(shown) if version != "not installed" else ""
        rows.append((shown, f"{version} ({detail})" if detail else version))
    return rows


def version_text() -> str:
    """`research-desk --version`: the app, then the key libraries, one a line."""
    lines = [f"research-desk {app_version()}"]
    lines += [f"{name} {version}" for name, version in component_versions(KEY_COMPONENTS)]
    return "\n".join(lines)


def system_line() -> str:
    frozen = " (bundle)" if getattr(sys, "frozen", False) else ""
    return f"{platform.platform()} · {platform.machine()} · {os.cpu_count()} CPUs{frozen}"


def model_lines(settings) -> list[tuple[str, str]]:
    """[(role, description)] of the configured chat and embedding models."""
    return [("Chat model", settings.chat.describe()), ("Embedding model", settings.embedding.describe())]


def diagnostics_report(settings, library: str = "") -> str:
    """Versions, system, models, settings and environment without secrets, and the log's last errors."""
    import json

    from app.core.desk import last_errors, log_file, mask_secrets, mask_text

    out = [f"{APP_NAME} {app_version()} — diagnostics", ""]
    out += ["## Versions"] + [f"- {name}: {version}" for name, version in component_versions()]
    out += ["", "## System", f"- {system_line()}", f"- Python at {sys.executable}"]
    out += ["", "## Models"] + [f"- {role}: {mask_text(text)}" for role, text in model_lines(settings)]
    if library:
        out += ["", "## Library", f"- {mask_text(library)}"]
    out += ["", "## Settings", "```json", json.dumps(mask_secrets(settings.to_dict()), indent=2, default=str), "```"]
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}
    if env:
        out += ["", "## Environment"] + [f"- {k}={v}" for k, v in mask_secrets(env).items()]
    errors = last_errors()
    out += ["", f"## Last errors and warnings ({log_file()})"]
    out += [f"```\n{e}\n```" for e in errors] if errors else ["(none)"]
    return "\n".join(out) + "\n"
