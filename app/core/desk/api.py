"""The Desk class: the mixins of this package stacked into one object (see __init__.py)."""

from __future__ import annotations

from .models import ModelOperations


class Desk(ModelOperations):
    """One library, one settings object, the models they use; every operation a front end needs."""
