"""Turn phase summaries (frozen dataclasses) into the JSON-able values the checkpointed state may hold."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

__all__ = ["jsonable"]


def jsonable(value: Any) -> Any:
    """Return ``value`` as plain dicts, lists, strings and numbers."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.name.startswith("_")
        }
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [jsonable(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return value.as_posix()
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
