"""Worker-thread jobs of the settings' Models tab: calibrate a judge, rate the models, read the last rating.

Like jobs.py: each takes a JobContext and calls one Desk operation with the context's task.
"""

from __future__ import annotations

from app.core.settings import ModelConfig

from ..common.worker import JobContext


def calibrate_judge(ctx: JobContext, cfg: ModelConfig | None = None):
    """The judge's Calibration (rating/calibrate.py); None: the configured judge, else the chat model."""
    return ctx.desk.calibrate_judge(cfg, ctx.task)


def rate_models(ctx: JobContext):
    return ctx.desk.rate_models(None, ctx.task)


def last_rating(ctx: JobContext):
    return ctx.desk.last_rating()
