"""SQL filter strings for LanceDB / Lance queries."""

from __future__ import annotations

from typing import Iterable


def sql_str(value: str) -> str:
    """Quote a string for a LanceDB SQL filter."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"
