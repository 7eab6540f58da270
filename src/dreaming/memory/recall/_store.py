"""OpenClaw's ``short-term-recall.json`` (version 1) and the lock every writer of it takes.

Entries stay plain JSON objects with OpenClaw's camelCase keys, so fields this code does not know (written by a newer
OpenClaw) survive every rewrite. There is no size cap on reading (OpenClaw #92050 deadlocked promotion behind a 16 MiB
read cap). The file is written one entry per line: valid JSON that OpenClaw reads as is, rendered by one C encoder
(built once per write, not once per entry) so a 20,000-entry store is written in a fraction of a second.

Locking mirrors OpenClaw so both can write the same workspace: an in-process lock per store, then the file
``memory/.dreams/short-term-promotion.lock`` created exclusively with ``<pid>:<epoch ms>``, retried every 40 ms for
10 s, and taken over when older than 60 s and its owner is gone.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dreaming.errors import LockBusyError
from dreaming.memory._decode import parse_json_bytes, why_unparsable
from dreaming.memory.files import atomic_write_bytes, before_write, check_write_path, move_aside
from dreaming.memory.workspace import Workspace, pid_alive

__all__ = [
    "LOCK_RETRY_S",
    "LOCK_STALE_S",
    "LOCK_WAIT_S",
    "STORE_VERSION",
    "RecallStore",
    "format_iso",
    "lock_is_stale",
    "parse_iso",
    "promotion_lock_path",
    "read_store",
    "render_store",
    "short_term_lock",
    "write_store",
]

STORE_VERSION = 1
LOCK_WAIT_S = 10.0
LOCK_STALE_S = 60.0
LOCK_RETRY_S = 0.04

_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()


def promotion_lock_path(ws: Workspace) -> Path:
    """Return ``memory/.dreams/short-term-promotion.lock``."""
    return ws.state_dir / "short-term-promotion.lock"


def format_iso(moment: datetime) -> str:
    """Render ``moment`` as OpenClaw does (``Date.toISOString``): UTC, milliseconds, ``Z``."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_iso(value: object) -> datetime | None:
    """Parse an ISO timestamp from the store; None when it is missing or not a date (naive means UTC)."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(slots=True)
class RecallStore:
    """The store while it is being read or changed under the lock.

    Mutable on purpose: one locked read-modify-write edits ``entries`` in place, then writes once.
    """

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Entries by key, as OpenClaw's JSON objects (unknown fields kept)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Top-level fields other than ``version``, ``updatedAt`` and ``entries``."""
    updated_at: str | None = None
    """``updatedAt`` as read."""
    problem: str | None = None
    """Why the file could not be used (it was then treated as empty), or None."""
    raw: dict[str, Any] | None = None
    """The document exactly as parsed, to tell whether a rewrite changes anything."""


def read_store(ws: Workspace, *, now: datetime, move_unreadable: bool = False) -> RecallStore:
    """Read the recall store; a missing, blank or unusable file reads as empty with ``problem`` set.

    Args:
        ws: the workspace.
        now: stamps the name of an unreadable file moved aside.
        move_unreadable: move a file that is not JSON, or of another version, aside so a writer can start fresh
            without destroying it.
    """
    path = ws.recall_store
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return RecallStore()
    if not data.strip():
        return RecallStore(problem="empty")
    try:
        doc = parse_json_bytes(data)
    except ValueError as exc:
        problem = f"unreadable: {why_unparsable(exc)}: {exc}"
        doc = None
    else:
        if not isinstance(doc, dict):
            problem = "unreadable: not a JSON object"
        elif doc.get("version") != STORE_VERSION:
            problem = f"unreadable: unknown version {doc.get('version')!r}"
        elif not isinstance(doc.get("entries", {}), dict):
            problem = "unreadable: entries is not an object"
        else:
            problem = ""
    if problem:
        if move_unreadable:
            move_aside(path, now)
        return RecallStore(problem=problem)
    assert isinstance(doc, dict)
    entries = {str(k): v for k, v in doc.get("entries", {}).items()}
    extra = {k: v for k, v in doc.items() if k not in {"version", "updatedAt", "entries"}}
    updated = doc.get("updatedAt")
    return RecallStore(entries, extra, updated if isinstance(updated, str) else None, None, doc)


def _json_encoder() -> Callable[[object], str]:
    """Return ``JSONEncoder(ensure_ascii=False, allow_nan=False).encode`` with its C encoder built once.

    ``JSONEncoder.encode`` builds a new C encoder on every call, which is a third of the cost of encoding one entry.
    """
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the same output, one encoder per call
        return encoder.encode
    # The arguments JSONEncoder.iterencode passes for these settings (check_circular: a fresh markers dict).
    encode = make({}, encoder.default, json.encoder.encode_basestring, None, ": ", ", ", False, False, False)
    return lambda value: "".join(encode(value, 0))


def _finite(value: Any) -> Any:
    """Return ``value`` with every NaN or infinity (which JSON cannot hold) replaced by 0."""
    if isinstance(value, float):
        return value if math.isfinite(value) else 0
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def clamp_unit(value: float) -> float:
    """Clamp a score to [0, 1]; a non-finite value is 0 (OpenClaw's ``clamp``)."""
    return 0.0 if not math.isfinite(value) else min(1.0, max(0.0, value))


def render_store(store: RecallStore, *, updated_at: str) -> bytes:
    """Render the store as JSON with one entry per line and a trailing newline.

    A value JSON cannot hold (NaN, infinity: ``1e999`` in a hand-edited file parses as one) is written as 0 rather
    than failing the write; OpenClaw's reader counts such values as 0 anyway.
    """
    fast = _json_encoder()

    def dumps(value: Any) -> str:
        try:
            return fast(value)
        except ValueError:
            return fast(_finite(value))

    head = {"version": STORE_VERSION, "updatedAt": updated_at, **store.extra}
    # One list of pieces and one join: the 20,000-entry file is copied once, not once per nesting level.
    out = ["{\n"]
    for name, value in head.items():
        out += ("  ", dumps(name), ": ", dumps(value), ",\n")
    if not store.entries:
        out.append('  "entries": {}\n}\n')
    else:
        out.append('  "entries": {\n')
        for key, entry in store.entries.items():
            out += ("    ", dumps(key), ": ", dumps(entry), ",\n")
        out[-1] = "\n  }\n}\n"
    return "".join(out).encode("utf-8")


def write_store(ws: Workspace, store: RecallStore, *, now: datetime) -> bool:
    """Write the store atomically, stamping ``updatedAt``; return False when the bytes were already there."""
    return atomic_write_bytes(ws.recall_store, render_store(store, updated_at=format_iso(now)))


def lock_is_stale(path: Path, *, now_s: float) -> bool:
    """Return whether the lock file is older than 60 s and its owner pid is unparseable or dead."""
    try:
        age = now_s - path.stat().st_mtime
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        return False
    if age <= LOCK_STALE_S:
        return False
    pid_text = text.split(":", 1)[0]
    return not (pid_text.isdigit() and pid_alive(int(pid_text)))


def _create_lock_file(path: Path) -> None:
    """Create the lock file holding ``<pid>:<epoch ms>`` in one step, or raise FileExistsError.

    The content is written to a temp file first and hard-linked into place, so the lock never exists empty: a write
    that fails (a full disk) leaves no lock behind to block the next run until it goes stale.
    """
    before_write(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(f"{os.getpid()}:{int(time.time() * 1000)}\n".encode())
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp_name, path)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(tmp_name)


def _process_lock(path: Path) -> threading.Lock:
    with _process_locks_guard:
        return _process_locks.setdefault(str(path), threading.Lock())


@contextmanager
def short_term_lock(ws: Workspace, *, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the short-term promotion lock: in-process first, then the shared lock file.

    Raises:
        LockBusyError: the lock file was held by a live owner for longer than ``wait_s``.
    """
    path = promotion_lock_path(ws)
    inner = _process_lock(path)
    if not inner.acquire(timeout=wait_s):
        raise LockBusyError(path, "another thread of this process")
    try:
        check_write_path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                _create_lock_file(path)
            except FileExistsError:
                if lock_is_stale(path, now_s=time.time()):
                    with suppress(FileNotFoundError):
                        path.unlink()
                    continue
                if time.monotonic() >= deadline:
                    holder = ""
                    with suppress(OSError):
                        holder = path.read_text(encoding="utf-8", errors="replace").strip()
                    raise LockBusyError(path, holder or "unknown") from None
                time.sleep(LOCK_RETRY_S)
                continue
            break
        try:
            yield
        finally:
            with suppress(FileNotFoundError):
                path.unlink()
    finally:
        inner.release()
