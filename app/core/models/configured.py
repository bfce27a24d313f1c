"""Which model file a role uses: the configured one, else the provisioned starter.

Light on imports, so the command line can start loading a question's models before the core
(LanceDB, the PDF stack) is imported (desk/ahead.py, factory.load_ahead).
"""

from __future__ import annotations

from ..errors import ModelNotFound
from ..settings import ModelConfig


def default_model_path(role: str) -> str:
    """The provisioned catalog model for a role: the starter if present, else the test one."""
    from . import catalog, provision

    # Starter (the user's model) before the tiny test model.
    for entry in sorted(catalog.by_role(role), key=lambda e: (not e.starter, not e.test)):
        if provision.is_provisioned(entry):
            return str(provision.model_path(entry.id))
    return ""


def effective_config(cfg: ModelConfig, role: str) -> ModelConfig:
    """Fill in the provisioned starter model when a llama.cpp config names no file."""
    if cfg.backend != "llamacpp" or cfg.path:
        return cfg
    path = default_model_path(role)
    if not path:
        raise ModelNotFound(
            f"No {role} model is configured.",
            "Run `research-desk models setup` to install the offline starter models, "
            "or choose a GGUF file / LM Studio in Settings.",
        )
    from dataclasses import replace

    return replace(cfg, path=path)
