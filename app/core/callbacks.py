"""The plain callbacks long-running core work takes (the UI adapts them to signals)."""

from __future__ import annotations

from typing import Callable

from .errors import Cancelled

Progress = Callable[[float, str], None]  # (fraction 0..1 or -1 if unknown, message)
IsCancelled = Callable[[], bool]
OnToken = Callable[[str], None]


def no_progress(fraction: float, message: str) -> None:
    """Default progress callback: ignore."""


def check_cancelled(cancelled: IsCancelled | None) -> None:
    """Raise `Cancelled` if the caller asked to stop."""
    if cancelled is not None and cancelled():
        raise Cancelled()
