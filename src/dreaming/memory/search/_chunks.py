"""Which files are memory, and how a markdown file is cut into searchable chunks with exact line ranges."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dreaming.memory._decode import NAME_NOT_UTF8, has_undecodable, printable
from dreaming.memory._secrets import is_secret_name
from dreaming.memory.workspace import Workspace

__all__ = [
    "FENCE_END",
    "FENCE_START",
    "MAX_CHUNK_LINES",
    "Chunk",
    "FolderListing",
    "chunk_markdown",
    "is_dreaming_output",
    "iter_memory_files",
    "list_memory_folder",
    "memory_md_stat",
    "scan_memory_files",
]

_log = logging.getLogger(__name__)

MAX_CHUNK_LINES = 12
"""A paragraph longer than this is cut into pieces of at most this many lines."""

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
FENCE_START = re.compile(r"<!--\s*openclaw:dreaming:([\w-]+):start\s*-->")
"""Opens a block that dreaming manages inside a note (``<!-- openclaw:dreaming:<name>:start -->``)."""
FENCE_END = re.compile(r"<!--\s*openclaw:dreaming:([\w-]+):end\s*-->")
"""Closes a block that :data:`FENCE_START` opened."""


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


@dataclass(frozen=True, slots=True)
class FolderListing:
    """What one folder under ``memory/`` holds that is memory (see :func:`scan_memory_files` for the rule)."""

    notes: list[tuple[str, os.stat_result]]
    """Each note's name and ``stat`` (links followed), in the order the folder listed them."""
    subfolders: list[str]
    """The names of the folders under it that may hold memory."""
    linked: bool
    """Whether an entry is a symbolic link: what it reaches can change while the folder itself does not."""


_SKIPPED_FOLDERS = frozenset({("memory/insights", "archive"), ("memory", "dreaming")})


def list_memory_folder(ws: Workspace, folder: str, relative: str) -> FolderListing:
    """List the memory in ``folder`` (absolute), whose workspace-relative POSIX path is ``relative``.

    One ``scandir`` and one ``stat`` per note; a folder that cannot be listed holds nothing.
    """
    notes: list[tuple[str, os.stat_result]] = []
    subfolders: list[str] = []
    linked = False
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return FolderListing(notes=notes, subfolders=subfolders, linked=linked)
    for entry in entries:
        name = entry.name
        if has_undecodable(name):  # no index row could hold the path; see memory._decode
            _log.warning("%s/%s: %s", relative, printable(name), NAME_NOT_UTF8)
            continue
        if is_secret_name(name):
            continue
        try:
            if entry.is_symlink():
                linked = True
                if not ws.contains(Path(entry.path)):
                    continue
            if entry.is_dir():
                if not name.startswith(".") and (relative, name) not in _SKIPPED_FOLDERS:
                    subfolders.append(name)
            # The pruning of folders above is for speed; is_dreaming_output is the rule.
            elif name[-3:].lower() == ".md" and entry.is_file() and not is_dreaming_output(f"{relative}/{name}"):
                notes.append((name, entry.stat()))
        except OSError:
            continue
    return FolderListing(notes=notes, subfolders=subfolders, linked=linked)


def memory_md_stat(ws: Workspace) -> os.stat_result | None:
    """Return the ``stat`` of MEMORY.md when it is memory (it exists, and a link to it stays in the workspace)."""
    with contextlib.suppress(OSError):
        if not ws.memory_md.is_symlink() or ws.contains(ws.memory_md):
            return ws.memory_md.stat()
    return None


def scan_memory_files(ws: Workspace) -> dict[str, tuple[str, int, int]]:
    """Return ``{relative_posix_path: (absolute_path, mtime_ns, size)}`` for every markdown file that is memory.

    Memory is MEMORY.md, the daily notes anywhere under ``memory/``, and the active insights in
    ``memory/insights/`` (the archive of retired insights is not searched). Dreaming's output is excluded
    (:func:`is_dreaming_output`), and so is every file or folder whose name looks like it holds secrets
    (``secrets.md``, ``credentials/``: :func:`dreaming.memory.is_secret_name`) or whose real path is outside the
    workspace (a symbolic link out of it): such a file is never read. One ``scandir`` walk with one ``stat`` per file
    (:func:`list_memory_folder`); only links cost a path resolution.
    """
    found: dict[str, tuple[str, int, int]] = {}
    stat = memory_md_stat(ws)
    if stat is not None:
        found["MEMORY.md"] = (str(ws.memory_md), stat.st_mtime_ns, stat.st_size)
    stack = [(str(ws.memory_dir), "memory")] if ws.contains(ws.memory_dir) else []
    while stack:
        folder, relative = stack.pop()
        listing = list_memory_folder(ws, folder, relative)
        for name, note in listing.notes:
            found[f"{relative}/{name}"] = (os.path.join(folder, name), note.st_mtime_ns, note.st_size)
        stack.extend((os.path.join(folder, name), f"{relative}/{name}") for name in listing.subfolders)
    return found


def iter_memory_files(ws: Workspace) -> Iterator[tuple[str, Path]]:
    """Yield ``(relative_posix_path, path)`` for every memory file (see :func:`scan_memory_files`), sorted."""
    for relative, (path, _, _) in sorted(scan_memory_files(ws).items()):
        yield relative, Path(path)


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
            if FENCE_END.search(line):
                in_managed = False
            continue
        if FENCE_START.search(line):
            flush()
            in_managed = not FENCE_END.search(line)
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
