"""Where things live: bundled resources, the model catalog, user folders.

Resources and the model catalog sit at the repository root (`resources/`,
`models/`); a frozen (PyInstaller) build puts them beside the executable's
data under `sys._MEIPASS`, and an installed wheel (pip, pipx) inside the package
as `app/_data/` (setup.py copies them there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "research-desk"


def _root() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen)
    installed = Path(__file__).resolve().parents[1] / "_data"
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2]


def resources_dir() -> Path:
    return _root() / "resources"


def prompt_path(name: str) -> Path:
    return resources_dir() / "prompts" / name


def load_prompt(name: str) -> str:
    """Read a prompt template file from resources/prompts."""
    return prompt_path(name).read_text(encoding="utf-8")


def catalog_path() -> Path:
    return _root() / "models" / "catalog.json"


def config_dir() -> Path:
    """Folder of settings.json. RESEARCH_DESK_CONFIG_DIR overrides (tests, portable use)."""
    env = os.environ.get("RESEARCH_DESK_CONFIG_DIR")
    return Path(env) if env else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """User data folder: default library and provisioned models."""
    env = os.environ.get("RESEARCH_DESK_DATA_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir(APP_NAME))


def models_dir() -> Path:
    """Where provisioned model files live. RESEARCH_DESK_MODELS_DIR overrides."""
    env = os.environ.get("RESEARCH_DESK_MODELS_DIR")
    return Path(env) if env else data_dir() / "models"


def default_library() -> Path:
    return data_dir() / "library"


def cache_dir() -> Path:
    """Folder of what can be made again (saved model states). RESEARCH_DESK_CACHE_DIR overrides."""
    env = os.environ.get("RESEARCH_DESK_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(APP_NAME))


def prefix_states_dir() -> Path | None:
    """Saved KV states of prompt beginnings (prefix_store.py). RESEARCH_DESK_PREFIX_STATES_DIR overrides
    (tests); set empty, none are saved or loaded (a bench's cold start without them)."""
    env = os.environ.get("RESEARCH_DESK_PREFIX_STATES_DIR")
    if env is not None:
        return Path(env) if env else None
    return cache_dir() / "prefix-states"


def log_dir() -> Path:
    """Folder of the log file (research-desk.log). RESEARCH_DESK_LOG_DIR overrides (tests)."""
    env = os.environ.get("RESEARCH_DESK_LOG_DIR")
    return Path(env) if env else Path(platformdirs.user_log_dir(APP_NAME))
