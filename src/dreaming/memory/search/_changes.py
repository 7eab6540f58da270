"""What changed among the memory files since the index last looked, without listing a folder that did not change.

The index keeps, for each folder that holds memory, what the last look saw (:class:`FolderState`): the folder's stamp
(device, inode, ctime), the names of its notes and of its subfolders, and each note's stamp (ctime, size, inode).
A look at a folder (:func:`look`):

- its stamp is unchanged: no entry was added, removed or renamed in it since (each of these sets the folder's ctime,
  which no tool can set back, unlike an mtime), so its names are taken from the index and only its notes are
  ``stat``-ed, by name in the open folder;
- its stamp changed, or it holds a symbolic link (whose target can change while the folder does not): it is listed
  again (:func:`~dreaming.memory.search._chunks.list_memory_folder`), which applies the rules of what is memory.

A note whose stamp differs from the last look's, or that is new, is a *candidate*: the index re-reads it, and
re-indexes it only when its bytes changed. A note edited in place changes no folder, only its own ctime, so only a
``stat`` of the note finds that edit. A *full* look ``stat``-s every note of an unchanged folder; a look given
``watched`` notes (:func:`hottest`: the most recently changed ones) ``stat``-s only those, and the notes whose stamp is
not yet settled, and keeps the other stamps as they were: on a large workspace that ``stat`` per note is most of what
a full look costs. When each kind of look is taken is the index's rule (``_index.py``, :func:`refresh_index`).

Timestamps have a grain (the kernel's clock tick; a second or two on some filesystems): a stamp taken less than
:data:`SETTLE_NS` before the look could be given again by a later change in the same grain, so it is not trusted.
Such a folder is listed again, and such a note is a candidate again, at the next look, until the stamp is older.
"""

from __future__ import annotations

import heapq
import os
import struct
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from dreaming.memory.search._chunks import list_memory_folder, memory_md_stat
from dreaming.memory.workspace import Workspace

__all__ = [
    "HOT_NOTES",
    "NOTE_STAMP_SIZE",
    "SETTLE_NS",
    "UNSETTLED",
    "Changes",
    "FolderState",
    "Watched",
    "hottest",
    "look",
    "note_stamps",
]

SETTLE_NS = 3_000_000_000
"""How old a stamp must be to be trusted at the next look (nanoseconds): past the grain of any clock that stamps it."""

_NOTE = struct.Struct("<qQQ")  # ctime_ns, size, inode
_FOLDER = struct.Struct("<QQq")  # device, inode, ctime_ns
NOTE_STAMP_SIZE = _NOTE.size
_UNSETTLED_CTIME = -(2**63)
UNSETTLED = _NOTE.pack(_UNSETTLED_CTIME, 0, 0)
"""A note's stamp that matches no file: the note is a candidate at the next look."""

HOT_NOTES = 64
"""How many notes a look that is not full ``stat``-s besides the unsettled ones: those most recently changed."""

Watched = Mapping[str, Collection[int]]
"""The notes a look that is not full ``stat``-s, by folder: their positions in :attr:`FolderState.notes`."""


@dataclass(frozen=True, slots=True)
class FolderState:
    """What a look saw in one folder; the root (``""``) holds MEMORY.md and the ``memory`` folder."""

    stamp: bytes
    """The folder's device, inode and ctime; empty when the next look must list it again."""
    notes: tuple[str, ...]
    """The names of its notes."""
    stamps: bytes
    """Each note's stamp, in the order of :attr:`notes` (:data:`NOTE_STAMP_SIZE` bytes each)."""
    subfolders: tuple[str, ...]
    """The names of the folders under it that may hold memory."""

    def unsettle(self, name: str) -> FolderState:
        """Return this state with the note ``name`` to be checked again at the next look."""
        at = self.notes.index(name) * NOTE_STAMP_SIZE
        return replace(self, stamps=self.stamps[:at] + UNSETTLED + self.stamps[at + NOTE_STAMP_SIZE :])


@dataclass(frozen=True, slots=True)
class Changes:
    """What one look found."""

    folders: dict[str, FolderState]
    """The state of every folder that holds memory, as seen now (workspace-relative POSIX paths)."""
    candidates: dict[str, str]
    """Notes new or touched since the last look: workspace-relative path -> absolute path."""
    removed: tuple[str, ...]
    """Notes gone (or no longer memory), sorted."""
    scanned: int
    """Memory files seen."""
    dirty: bool
    """Whether anything differs from the last look (the index must be written)."""


def note_stamps(stats: list[os.stat_result], settled_before: int) -> bytes:
    """Return the stamps of notes, each :data:`UNSETTLED` when its ctime is not before ``settled_before``."""
    pack = _NOTE.pack
    return b"".join(
        [UNSETTLED if st.st_ctime_ns >= settled_before else pack(st.st_ctime_ns, st.st_size, st.st_ino) for st in stats]
    )


def _folder_stamp(st: os.stat_result, settled_before: int) -> bytes:
    return b"" if st.st_ctime_ns >= settled_before else _FOLDER.pack(st.st_dev, st.st_ino, st.st_ctime_ns)


def _listed(ws: Workspace, folder: str, relative: str, stamp: bytes, settled_before: int) -> FolderState:
    listing = list_memory_folder(ws, folder, relative)
    return FolderState(
        stamp=b"" if listing.linked else stamp,
        notes=tuple(name for name, _ in listing.notes),
        stamps=note_stamps([st for _, st in listing.notes], settled_before),
        subfolders=tuple(listing.subfolders),
    )


def _unsettled(stamps: bytes) -> list[int]:
    # The positions of the notes whose stamp is UNSETTLED (its bytes can also occur across two stamps: skipped).
    positions = []
    at = stamps.find(UNSETTLED)
    while at >= 0:
        if at % NOTE_STAMP_SIZE:
            at = stamps.find(UNSETTLED, at + 1)
            continue
        positions.append(at // NOTE_STAMP_SIZE)
        at = stamps.find(UNSETTLED, at + NOTE_STAMP_SIZE)
    return positions


def _restamped(fd: int, old: FolderState, watched: Collection[int] | None, settled_before: int) -> FolderState:
    # ``old`` with the stamps of its notes taken again (every note's, or the watched and unsettled ones'), by name in
    # the open folder ``fd``. Raises OSError when a note is gone.
    if watched is None:
        return replace(old, stamps=note_stamps([os.stat(name, dir_fd=fd) for name in old.notes], settled_before))
    positions = sorted({*watched, *_unsettled(old.stamps)})
    if not positions:
        return old
    stamps = bytearray(old.stamps)
    for at in positions:
        stamp = note_stamps([os.stat(old.notes[at], dir_fd=fd)], settled_before)
        stamps[at * NOTE_STAMP_SIZE : (at + 1) * NOTE_STAMP_SIZE] = stamp
    return replace(old, stamps=bytes(stamps))


def _seen(
    ws: Workspace, relative: str, old: FolderState | None, watched: Collection[int] | None, settled_before: int
) -> FolderState | None:
    # The folder's state now; None when it is gone or cannot be opened.
    folder = os.path.join(ws.root, relative)
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        stamp = _folder_stamp(os.fstat(fd), settled_before)  # before the listing: a later change shows next time
        if old is not None and stamp and stamp == old.stamp:
            try:
                return _restamped(fd, old, watched, settled_before)
            except (OSError, IndexError):  # a note vanished under a folder whose ctime has not ticked yet: list it
                pass
        return _listed(ws, folder, relative, stamp, settled_before)
    finally:
        os.close(fd)


def _root(ws: Workspace, settled_before: int) -> FolderState:
    stat = memory_md_stat(ws)
    return FolderState(
        stamp=b"",
        notes=("MEMORY.md",) if stat is not None else (),
        stamps=note_stamps([stat], settled_before) if stat is not None else b"",
        subfolders=("memory",) if ws.contains(ws.memory_dir) else (),
    )


def look(ws: Workspace, stored: Mapping[str, FolderState], *, now_ns: int, watched: Watched | None = None) -> Changes:
    """Compare the memory files with ``stored`` (the last look's folders); ``now_ns`` is the wall clock now.

    With ``watched`` None the look is full: every note is ``stat``-ed. Otherwise, in a folder whose stamp is unchanged,
    only the ``watched`` notes and those whose stamp is unsettled are; a folder whose stamp changed is listed, as ever.
    """
    settled_before = now_ns - SETTLE_NS
    folders: dict[str, FolderState] = {}
    candidates: dict[str, str] = {}
    removed: list[str] = []
    dirty = False
    stack = [""]
    while stack:
        relative = stack.pop()
        old = stored.get(relative)
        if not relative:
            new: FolderState | None = _root(ws, settled_before)
        else:
            notes = None if watched is None else watched.get(relative, ())
            new = _seen(ws, relative, old, notes, settled_before)
        if new is None:
            continue
        folders[relative] = new
        dirty = dirty or new != old
        _compare(ws, relative, old, new, candidates, removed)
        stack.extend(f"{relative}/{name}" if relative else name for name in new.subfolders)
    for relative in stored.keys() - folders.keys():
        dirty = True
        removed.extend(f"{relative}/{name}" if relative else name for name in stored[relative].notes)
    scanned = sum(len(state.notes) for state in folders.values())
    return Changes(folders=folders, candidates=candidates, removed=tuple(sorted(removed)), scanned=scanned, dirty=dirty)


def hottest(folders: Mapping[str, FolderState]) -> dict[str, list[int]]:
    """Return the :data:`HOT_NOTES` notes most recently changed (the newest ctimes; ties: the last path), by folder.

    Those are the notes a look that is not full ``stat``-s: the ones a user is editing (today's note, appended to in
    place) are among them. A note whose stamp is unsettled is not counted here: every look ``stat``-s it anyway.
    """
    unpack = _NOTE.iter_unpack
    newest = heapq.nlargest(
        HOT_NOTES,
        (
            (stamp[0], relative, state.notes[at], at)
            for relative, state in folders.items()
            if relative
            for at, stamp in enumerate(unpack(state.stamps))
            if stamp[0] != _UNSETTLED_CTIME
        ),
    )
    chosen: dict[str, list[int]] = {}
    for _, relative, _, at in newest:
        chosen.setdefault(relative, []).append(at)
    return {relative: sorted(positions) for relative, positions in chosen.items()}


def _compare(
    ws: Workspace,
    relative: str,
    old: FolderState | None,
    new: FolderState,
    candidates: dict[str, str],
    removed: list[str],
) -> None:
    # Adds to ``candidates`` and ``removed`` what differs in one folder.
    if old is not None and old.notes is new.notes and old.stamps == new.stamps and UNSETTLED not in new.stamps:
        return  # the common case: nothing touched (an unsettled note is checked again even when its stamp is equal)
    size = NOTE_STAMP_SIZE
    before = {} if old is None else {n: old.stamps[i * size : (i + 1) * size] for i, n in enumerate(old.notes)}
    for i, name in enumerate(new.notes):
        stamp = new.stamps[i * size : (i + 1) * size]
        if stamp == UNSETTLED or before.get(name) != stamp:
            path = f"{relative}/{name}" if relative else name
            candidates[path] = os.path.join(ws.root, path)
    if old is not None and old.notes is not new.notes:
        removed.extend(f"{relative}/{name}" if relative else name for name in before.keys() - set(new.notes))
