"""Worker-thread jobs about models and settings: the model state, setup, settings applied, a
judge calibrated, the models rated.

Like library/jobs.py: each takes a JobContext and calls one Desk operation with the context's task.
"""

from __future__ import annotations

import copy

from app.core.desk import LibrarySnapshot, ModelState
from app.core.settings import ModelConfig, Settings

from ..common.worker import JobContext
from ..library.jobs import load_library


def model_state(ctx: JobContext) -> ModelState:
    return ctx.desk.model_state()


def apply_settings(ctx: JobContext, settings: Settings, library: str | None) -> LibrarySnapshot:
    """New settings (and maybe a new library): models reload on next use."""
    ctx._worker.replace_settings(copy.deepcopy(settings), library)  # noqa: SLF001 - the worker's own hook
    return load_library(ctx)


def list_remote_models(ctx: JobContext, cfg) -> list:
    return ctx.desk.remote_models(cfg)


def setup_models(ctx: JobContext, ids: list[str] | None = None) -> dict:
    return ctx.desk.setup_models(ids, ctx.task)


def calibrate_judge(ctx: JobContext, cfg: ModelConfig | None = None):
    """The judge's Calibration (rating/calibrate.py); None: the configured judge, else the chat model."""
    return ctx.desk.calibrate_judge(cfg, ctx.task)


def rate_models(ctx: JobContext):
    return ctx.desk.rate_models(None, ctx.task)


def last_rating(ctx: JobContext):
    return ctx.desk.last_rating()
