"""Which files are memory, and how a markdown file is cut into searchable chunks with exact line ranges."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dreaming.memory._workspace import Workspace

__all__ = ["MAX_CHUNK_LINES", "Chunk", "chunk_markdown", "is_dreaming_output", "iter_memory_files"]

MAX_CHUNK_LINES = 12
"""A paragraph longer than this is cut into pieces of at most this many lines."""

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_MANAGED_START = re.compile(r"<!--\s*openclaw:dreaming:[\w-]+:start\s*-->")
_MANAGED_END = re.compile(r"<!--\s*openclaw:dreaming:[\w-]+:end\s*-->")


@dataclass(frozen=True, kw_only=True, slots=True)
class Chunk:
    """A run of lines of one file, as indexed."""

    start_line: int
    """First line, 1-based."""
    end_line: int
    """Last line, 1-based and inclusive."""
    text: str
    """The lines themselves, joined with newlines."""


def is_dreaming_output(relative: str) -> bool:
    """Return whether a workspace-relative POSIX path is dreaming's own output, never to be indexed as memory.

    That is DREAMS.md (any case, anywhere), everything under ``memory/dreaming/`` and ``memory/.dreams/``, and, since
    hidden folders are machine state, anything under a folder whose name starts with a dot.
    """
    parts = relative.split("/")
    if parts[-1].lower() == "dreams.md":
        return True
    if any(part.startswith(".") for part in parts[:-1]):
        return True
    return len(parts) > 1 and parts[0] == "memory" and parts[1] in {"dreaming", ".dreams"}


def iter_memory_files(ws: Workspace) -> Iterator[tuple[str, Path]]:
    """Yield ``(relative_posix_path, path)`` for every markdown file that is memory, sorted by path.

    Memory is MEMORY.md, the daily notes anywhere under ``memory/``, and the active insights in
    ``memory/insights/`` (the archive of retired insights is not searched). Dreaming's output is excluded
    (:func:`is_dreaming_output`).
    """
    found: list[tuple[str, Path]] = []
    if ws.memory_md.is_file():
        found.append(("MEMORY.md", ws.memory_md))
    archive = ws.archive_dir
    for folder, dirs, files in os.walk(ws.memory_dir):
        here = Path(folder)
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and here / d != archive and here / d != ws.reports_dir
        )
        for name in files:
            if not name.lower().endswith(".md"):
                continue
            path = here / name
            relative = path.relative_to(ws.root).as_posix()
            if not is_dreaming_output(relative):
                found.append((relative, path))
    found.sort()
    yield from found


def chunk_markdown(text: str) -> list[Chunk]:
    """Cut markdown into chunks of whole lines: one per paragraph, list or fenced block, at most a few lines each.

    A heading starts a new chunk and stays with the paragraph under it. Blank lines end a chunk (except inside a
    fenced code block). Blocks that dreaming manages inside a note (``<!-- openclaw:dreaming:*:start -->`` to
    ``:end -->``) are dreaming's output and are skipped.
    """
    chunks: list[Chunk] = []
    pending: list[tuple[int, str]] = []
    in_fence = False
    in_managed = False

    def flush() -> None:
        while pending and not pending[-1][1].strip():
            pending.pop()
        if pending:
            chunks.append(
                Chunk(start_line=pending[0][0], end_line=pending[-1][0], text="\n".join(line for _, line in pending))
            )
        pending.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        if in_managed:
            if _MANAGED_END.search(line):
                in_managed = False
            continue
        if _MANAGED_START.search(line):
            flush()
            in_managed = not _MANAGED_END.search(line)
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.strip():
            # A heading alone keeps waiting for its first paragraph; anything else ends here.
            if pending and not (len(pending) == 1 and _HEADING.match(pending[0][1])):
                flush()
            elif pending:
                pending.append((number, line))
            continue
        elif not in_fence and _HEADING.match(line):
            flush()
        pending.append((number, line))
        if len(pending) >= MAX_CHUNK_LINES:
            flush()
    flush()
    return chunks
