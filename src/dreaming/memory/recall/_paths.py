"""Which paths are short-term memory (daily notes), and where a stored path lives on disk.

OpenClaw 2026.9.6 (``isShortTermMemoryPath``) records and promotes recalls of daily notes only: a ``memory/`` segment
anywhere in the path followed, at any depth, by ``YYYY-MM-DD.md`` or ``YYYY-MM-DD-<anything>.md``; a bare legacy
basename of that form; and session corpora ``memory/.dreams/session-corpus/YYYY-MM-DD.(md|txt)``. Anything under a
``memory/dreaming/`` segment (dreaming's own reports) never is, and neither are ``MEMORY.md`` and ``DREAMS.md``. Digits
are ASCII digits. Whether the note lies inside the workspace is a separate question (:func:`readable_note`).
"""

from __future__ import annotations

import re
from pathlib import Path

from dreaming.memory.workspace import Workspace

__all__ = [
    "is_session_corpus_path",
    "is_short_term_path",
    "normalize_memory_path",
    "note_day",
    "readable_note",
    "resolve_note_path",
]

_DAILY_NOTE = re.compile(r"(?:^|/)memory/(?:[^/]+/)*[0-9]{4}-[0-9]{2}-[0-9]{2}(?:-[^/]+)?\.md\Z")
_DREAMING_OUTPUT = re.compile(r"(?:^|/)memory/dreaming/")
_SESSION_CORPUS = re.compile(r"(?:^|/)memory/\.dreams/session-corpus/[0-9]{4}-[0-9]{2}-[0-9]{2}\.(?:md|txt)\Z")
_BARE_DAILY_NOTE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:-[^/]+)?\.md\Z")
_DAY = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})")


def normalize_memory_path(path: str) -> str:
    """Return ``path`` as OpenClaw stores it: backslashes as slashes, one leading ``./`` removed."""
    text = path.replace("\\", "/")
    return text[2:] if text.startswith("./") else text


def is_short_term_path(path: str) -> bool:
    """Return whether ``path`` (as stored) is a daily note or a session corpus file."""
    text = normalize_memory_path(path)
    if _DREAMING_OUTPUT.search(text):
        return False
    return bool(_DAILY_NOTE.search(text) or _SESSION_CORPUS.search(text) or _BARE_DAILY_NOTE.match(text))


def is_session_corpus_path(path: str) -> bool:
    """Return whether ``path`` is a session corpus file, whose snippets may be raw ``User:``/``Assistant:`` turns."""
    return bool(_SESSION_CORPUS.search(normalize_memory_path(path)))


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
