"""The deterministic core: records, workspace files, scoring, phases as pure transforms.

Imports no LangGraph and no LLM code.
"""

from __future__ import annotations

from dreaming.memory._secrets import REDACTED, SECRET_GLOBS, is_secret_name, is_secret_path, redact_secrets
from dreaming.memory.diary import DiaryEntry, DiarySection, append_diary_entry, diary_sections, render_diary_entry
from dreaming.memory.files import (
    BadLine,
    InputReport,
    LoadedState,
    WriteFaults,
    append_jsonl,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    before_write,
    check_write_path,
    dump_json,
    fingerprint,
    iter_jsonl,
    move_aside,
    read_state,
    record_event,
    set_aside_unreadable,
    sweep_orphan_temps,
)
from dreaming.memory.workspace import (
    ConsolidationLock,
    Workspace,
    check_confined,
    init_workspace,
    pid_alive,
    settled_decision,
)

__all__ = [
    "REDACTED",
    "SECRET_GLOBS",
    "BadLine",
    "ConsolidationLock",
    "DiaryEntry",
    "DiarySection",
    "InputReport",
    "LoadedState",
    "Workspace",
    "WriteFaults",
    "append_diary_entry",
    "append_jsonl",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "before_write",
    "check_confined",
    "check_write_path",
    "diary_sections",
    "dump_json",
    "fingerprint",
    "init_workspace",
    "is_secret_name",
    "is_secret_path",
    "iter_jsonl",
    "move_aside",
    "pid_alive",
    "read_state",
    "record_event",
    "redact_secrets",
    "render_diary_entry",
    "set_aside_unreadable",
    "settled_decision",
    "sweep_orphan_temps",
]
