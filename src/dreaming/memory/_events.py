"""The append-only event log ``memory/.dreams/events.jsonl``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from dreaming.memory._io import append_jsonl, rotate_if_larger

__all__ = ["EVENTS_MAX_BYTES", "record_event"]

EVENTS_MAX_BYTES = 8 * 1024 * 1024
"""When the log passes this size it is rotated to ``events.jsonl.1`` (one generation kept), so it stays bounded."""


def record_event(path: Path, kind: str, now: datetime, **fields: Any) -> None:
    """Append one event ``{"type": kind, "at": now, ...fields}``."""
    rotate_if_larger(path, EVENTS_MAX_BYTES)
    row: Mapping[str, Any] = {"type": kind, "at": now.isoformat(), **fields}
    append_jsonl(path, [row])
