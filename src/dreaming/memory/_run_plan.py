"""What a run decided before it wrote: ``memory/.dreams/deep-plan.json``, reused when the run is resumed.

A step that writes several files and reports what it did (promoted, updated, created...) learns the answer from the
files themselves; a run that failed after some of those writes and is resumed would find them already there and report
"unchanged". So the step records each decision here *before* the write it describes, under the run's id, and a resumed
run reports the recorded decision. The file belongs to the running night and is removed when the run ends.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dreaming.memory._io import atomic_write_json, read_state
from dreaming.memory._workspace import Workspace

__all__ = ["settled_decision"]

_VERSION = 1


def settled_decision(ws: Workspace, key: str, decision: Any, *, run_id: str | None, now: datetime) -> Any:
    """Record ``decision`` (JSON-able) under ``key`` for ``run_id`` and return it, or return the one already recorded.

    Without a ``run_id`` (a caller outside a night) nothing is recorded and ``decision`` is returned.
    """
    if run_id is None:
        return decision
    loaded = read_state(ws.deep_plan, versions=(_VERSION,), now=now)
    data = loaded.data if loaded.data is not None and loaded.data.get("run_id") == run_id else None
    decisions = dict((data or {}).get("decisions") or {})
    if key in decisions:
        return decisions[key]
    decisions[key] = decision
    atomic_write_json(ws.deep_plan, {"version": _VERSION, "run_id": run_id, "decisions": decisions})
    return decision
