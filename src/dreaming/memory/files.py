"""Workspace file IO: atomic writes, versioned JSON state, JSONL skipping bad lines, the event log, the fingerprint."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dreaming.errors import OutsideWorkspaceError
from dreaming.memory._decode import NOT_UTF8, parse_json_bytes, why_unparsable

__all__ = [
    "EVENTS_MAX_BYTES",
    "BadLine",
    "InputReport",
    "LoadedState",
    "WriteFaults",
    "append_jsonl",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "before_write",
    "check_write_path",
    "dump_json",
    "fingerprint",
    "iter_jsonl",
    "move_aside",
    "read_state",
    "record_event",
    "rotate_if_larger",
    "set_aside_unreadable",
    "sweep_orphan_temps",
]


_write_hook: Callable[[Path], None] | None = None


def before_write(path: Path) -> None:
    """Announce a write to ``path``: every write to a workspace file calls this first (the fault-injection seam).

    Writes go through :func:`atomic_write_bytes`, :func:`append_jsonl`, the large-file writer, the lock files and the
    checkpointer. It refuses a path that a symbolic link leads elsewhere (:func:`check_write_path`), then lets
    :class:`WriteFaults` fail the write the way a full or read-only disk would.

    Raises:
        OutsideWorkspaceError: a symbolic link on the way.
    """
    check_write_path(path)
    if _write_hook is not None:
        _write_hook(path)


@dataclass
class WriteFaults:
    """Fail the ``fail_at``-th write (1-based) with ``OSError(error)``, and count every write (for tests).

    ``with WriteFaults(fail_at=3, error=errno.ENOSPC) as faults: ...``; ``faults.writes`` then holds every path
    announced, in order. ``fail_at=0`` fails nothing (it only counts). Not thread-safe across nested uses.
    """

    fail_at: int = 0
    error: int = errno.ENOSPC
    writes: list[Path] = field(default_factory=list)
    failed: Path | None = None

    def _hook(self, path: Path) -> None:
        self.writes.append(path)
        if len(self.writes) == self.fail_at:
            self.failed = path
            raise OSError(self.error, os.strerror(self.error), str(path))

    def __enter__(self) -> WriteFaults:
        global _write_hook
        _write_hook = self._hook
        return self

    def __exit__(self, *exc: object) -> None:
        global _write_hook
        _write_hook = None


def check_write_path(path: Path) -> None:
    """Refuse to write ``path`` when its real path is not where it appears: a symbolic link on the way leads elsewhere.

    Every write helper here calls this first, and so does every other place that creates a file (locks, SQLite).
    A link planted inside the workspace (``memory/insights``, ``memory/.dreams``, ``events.jsonl`` itself) could send
    a write anywhere; dreaming writes only along real paths, so it never leaves the workspace. Workspace roots are
    resolved when made (``Workspace.at``), so links above the root do not count.

    Raises:
        OutsideWorkspaceError: naming ``path`` and where it leads; nothing has been written.
    """
    apparent = os.path.abspath(path)
    real = os.path.realpath(apparent)
    if real != apparent:
        raise OutsideWorkspaceError(path, Path(real))


def atomic_write_bytes(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; return False (and touch nothing) when the bytes are already there.

    A temp file in the same folder is written, fsynced and renamed over the target, so a crash at any instant
    leaves the file either as it was or as it is meant to be. The file mode of an existing target is kept.

    Raises:
        OutsideWorkspaceError: a symbolic link on the way (see :func:`check_write_path`).
    """
    check_write_path(path)
    try:
        # Read the old bytes only when the size matches: most changed files differ in size already.
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    before_write(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)
    return True


def sweep_orphan_temps(folders: Iterable[Path]) -> list[Path]:
    """Remove temp files left by writes that a crash interrupted; return what was removed.

    Only call this while holding the consolidation lock: then no write of ours is in flight.
    """
    removed: list[Path] = []
    for folder in folders:
        check_write_path(folder)
        if not folder.is_dir():
            continue
        for path in folder.glob(".*.tmp"):
            if path.is_file():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def set_aside_unreadable(paths: Iterable[Path], now: datetime) -> list[tuple[Path, Path, str]]:
    """Move aside each state file that is not a JSON object with an integer ``version``; return what moved.

    Run at the start of a night (under the lock) so that no phase can silently overwrite a corrupt file: each reader
    then sees it missing and starts fresh, and the corrupt bytes are kept next to it. Files whose reader must fail
    closed on corruption (the budget ledger) are not passed here.
    """
    moved: list[tuple[Path, Path, str]] = []
    for path in paths:
        try:
            raw = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            continue
        try:
            data = parse_json_bytes(raw)
            problem = None if isinstance(data, dict) and type(data.get("version")) is int else "no integer version"
        except ValueError as exc:
            problem = _unusable(exc)
        if problem is not None:
            moved.append((path, move_aside(path, now), problem))
    return moved


def _unusable(exc: ValueError) -> str:
    # Why a state file cannot be parsed, for the report of its move aside.
    why = why_unparsable(exc)
    return why if why.startswith(NOT_UTF8) else f"{why}: {exc}"


def _fsync_dir(folder: Path) -> None:
    # Make the rename itself durable; not every platform allows opening a folder.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> bool:
    """Write UTF-8 text atomically; see :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def dump_json(payload: Mapping[str, Any]) -> str:
    """Render JSON the way every state file is stored: two-space indent, UTF-8, trailing newline."""
    return json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def atomic_write_json(path: Path, payload: Mapping[str, Any]) -> bool:
    """Write a JSON document atomically; see :func:`atomic_write_bytes`."""
    return atomic_write_text(path, dump_json(payload))


def move_aside(path: Path, now: datetime) -> Path:
    """Rename an unusable file to ``<name>.corrupt-<timestamp>`` next to it and return the new path."""
    check_write_path(path)
    stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
        counter += 1
    os.replace(path, target)
    return target


@dataclass(frozen=True, slots=True)
class LoadedState:
    """The result of reading a versioned state file.

    ``data`` is None when the file was missing or unusable; ``moved_aside`` names where an unusable file went
    and ``problem`` says why.
    """

    data: dict[str, Any] | None
    moved_aside: Path | None = None
    problem: str | None = None


def read_state(path: Path, *, versions: Iterable[int], now: datetime) -> LoadedState:
    """Read a versioned JSON state file; move it aside when it is unreadable or of an unknown version.

    Args:
        path: the state file.
        versions: the ``version`` values this reader understands.
        now: used to stamp the name of a file moved aside.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return LoadedState(None)
    problem: str | None = None
    data: Any = None
    try:
        data = parse_json_bytes(raw)
    except ValueError as exc:
        problem = _unusable(exc)
    if problem is None:
        if not isinstance(data, dict):
            problem = "not a JSON object"
        elif type(data.get("version")) is not int or data.get("version") not in set(versions):  # True == 1 == 1.0
            problem = f"unknown version {data.get('version')!r}"
    if problem is not None:
        return LoadedState(None, move_aside(path, now), problem)
    return LoadedState(data)


@dataclass(frozen=True, slots=True)
class BadLine:
    """One input line that was skipped, with the reason."""

    path: str
    line: int
    reason: str

    def describe(self) -> str:
        """Return ``path:line: reason``."""
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(slots=True)
class InputReport:
    """Bad input lines seen while reading, counted and kept (up to a limit) for the run summary."""

    bad: list[BadLine] = field(default_factory=list)
    count: int = 0
    keep: int = 200

    def skip(self, path: str, line: int, reason: str) -> None:
        """Count a skipped line, keeping its details while under the limit."""
        self.count += 1
        if len(self.bad) < self.keep:
            self.bad.append(BadLine(path, line, reason))

    def merge(self, other: InputReport) -> None:
        """Add another report's lines to this one."""
        self.count += other.count
        room = max(0, self.keep - len(self.bad))
        self.bad.extend(other.bad[:room])


def iter_jsonl(path: Path, report: InputReport, *, label: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each JSON-object line; skip and report the rest.

    A line that is not UTF-8 (or escapes a lone surrogate) is reported as ``not UTF-8``. A missing file yields
    nothing. Blank lines are ignored silently.
    """
    name = label or path.name
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = parse_json_bytes(raw)
            except ValueError as exc:
                report.skip(name, number, why_unparsable(exc))
                continue
            if not isinstance(obj, dict):
                report.skip(name, number, "not a JSON object")
                continue
            yield number, obj


def rotate_if_larger(path: Path, max_bytes: int) -> bool:
    """Rename ``path`` to ``<name>.1`` (replacing an older one) once it passes ``max_bytes``; return whether it did.

    Append-only logs stay bounded this way: one previous generation is kept, nothing is rewritten.
    """
    try:
        if path.stat().st_size <= max_bytes:
            return False
    except FileNotFoundError:
        return False
    check_write_path(path)
    os.replace(path, path.with_name(path.name + ".1"))
    return True


def append_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Append rows to a JSONL file in one write, then fsync.

    A crash can at worst leave a torn last line, which readers skip and report.
    """
    text = "".join(json.dumps(row, ensure_ascii=False, allow_nan=False, sort_keys=True) + "\n" for row in rows)
    if not text:
        return
    before_write(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        # A crash may have left a torn last line; start on a fresh line so the new rows stay whole.
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                text = "\n" + text
        handle.write(text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


EVENTS_MAX_BYTES = 8 * 1024 * 1024
"""When the log passes this size it is rotated to ``events.jsonl.1`` (one generation kept), so it stays bounded."""


def record_event(path: Path, kind: str, now: datetime, **fields: Any) -> None:
    """Append one event ``{"type": kind, "at": now, ...fields}`` to the append-only ``memory/.dreams/events.jsonl``."""
    rotate_if_larger(path, EVENTS_MAX_BYTES)
    row: Mapping[str, Any] = {"type": kind, "at": now.isoformat(), **fields}
    append_jsonl(path, [row])


def fingerprint(text: str) -> str:
    """Return the first 16 hex digits of the sha256 of ``text`` trimmed, lowercased and whitespace-collapsed.

    Shared by every dedup layer (budget candidates, research gaps and claims).
    """
    return hashlib.sha256(" ".join(text.strip().lower().split()).encode("utf-8")).hexdigest()[:16]
