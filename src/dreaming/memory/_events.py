"""The append-only event log ``memory/.dreams/events.jsonl``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from dreaming.memory._io import append_jsonl

__all__ = ["EVENTS_MAX_BYTES", "record_event"]

EVENTS_MAX_BYTES = 8 * 1024 * 1024
"""When the log passes this size it is rotated to ``events.jsonl.1`` (one generation kept), so it stays bounded."""


def record_event(path: Path, kind: str, now: datetime, **fields: Any) -> None:
    """Append one event ``{"type": kind, "at": now, ...fields}``."""
    try:
        if path.stat().st_size > EVENTS_MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    row: Mapping[str, Any] = {"type": kind, "at": now.isoformat(), **fields}
    append_jsonl(path, [row])
