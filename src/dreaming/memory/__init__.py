"""The deterministic core: records, workspace files, scoring, phases as pure transforms.

Imports no LangGraph and no LLM code.
"""

from __future__ import annotations

from dreaming.memory._events import record_event
from dreaming.memory._fingerprint import fingerprint
from dreaming.memory._io import (
    BadLine,
    InputReport,
    LoadedState,
    append_jsonl,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    dump_json,
    iter_jsonl,
    move_aside,
    read_state,
    set_aside_unreadable,
    sweep_orphan_temps,
)
from dreaming.memory._lock import ConsolidationLock, pid_alive
from dreaming.memory._workspace import Workspace

__all__ = [
    "BadLine",
    "ConsolidationLock",
    "InputReport",
    "LoadedState",
    "Workspace",
    "append_jsonl",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "dump_json",
    "fingerprint",
    "iter_jsonl",
    "move_aside",
    "pid_alive",
    "read_state",
    "record_event",
    "set_aside_unreadable",
    "sweep_orphan_temps",
]
