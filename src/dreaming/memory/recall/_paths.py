"""Which paths are short-term memory (daily notes), and where a stored path lives on disk.

OpenClaw only records and promotes recalls of daily notes: ``memory/**/YYYY-MM-DD*.md`` at any depth, a bare legacy
basename ``YYYY-MM-DD*.md``, and session corpora ``memory/.dreams/session-corpus/YYYY-MM-DD.(md|txt)``. Dreaming's own
output (``memory/dreaming/**``, ``DREAMS.md``) and long-term memory (``MEMORY.md``) never are.
"""

from __future__ import annotations

import re
from pathlib import Path

from dreaming.memory.workspace import Workspace

__all__ = ["is_short_term_path", "normalize_memory_path", "note_day", "readable_note", "resolve_note_path"]

_DATE_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}[^/]*\.md$")
_SESSION_CORPUS = re.compile(r"^memory/\.dreams/session-corpus/\d{4}-\d{2}-\d{2}\.(?:md|txt)$")
_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")


def normalize_memory_path(path: str) -> str:
    """Return ``path`` in POSIX form without a leading ``./``."""
    text = path.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text


def is_short_term_path(path: str) -> bool:
    """Return whether ``path`` (workspace-relative) is a daily note or a session corpus file."""
    text = normalize_memory_path(path)
    if not text or text.startswith("/"):
        return False
    parts = text.split("/")
    # A parent segment can smuggle dreaming's own reports in (``../../vault/memory/dreaming/...``).
    if ".." in parts or f"/{text}".find("/memory/dreaming/") >= 0:
        return False
    if _SESSION_CORPUS.match(text):
        return True
    if len(parts) == 1:
        return bool(_DATE_NAME.match(text))
    if parts[0] != "memory" or any(part.startswith(".") for part in parts[1:-1]):
        return False
    return bool(_DATE_NAME.match(parts[-1]))


def resolve_note_path(ws: Workspace, path: str) -> Path:
    """Return the file a stored path names; a legacy bare basename lives under ``memory/``."""
    text = normalize_memory_path(path)
    if "/" not in text:
        return ws.memory_dir / text
    return ws.root / text


def readable_note(ws: Workspace, path: str) -> Path | None:
    """Return the file a stored path names, or None when its real path is outside the workspace (a symbolic link).

    A note outside the workspace is never read, ingested, recorded or promoted.
    """
    note = resolve_note_path(ws, path)
    return note if ws.contains(note) else None


def note_day(path: str) -> str | None:
    """Return the ``YYYY-MM-DD`` in a note's file name, if any."""
    match = _DAY.search(normalize_memory_path(path).rsplit("/", 1)[-1])
    return match.group(1) if match else None
