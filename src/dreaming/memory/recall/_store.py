"""The recall store: OpenClaw 2026.9's SQLite rows or ``short-term-recall.json`` (version 1), and its lock.

**Which store** a workspace uses is decided in :mod:`._store_location`: OpenClaw 2026.9's SQLite database when the
workspace belongs to an OpenClaw install, else the JSON store (older OpenClaw, standalone workspaces). The choice is
pinned while the lock is held, so one read-modify-write never reads one store and writes the other.

**SQLite.** Read and written as OpenClaw does, under its ``short-term-locks`` row (see :mod:`._openclaw_db`). A
database that cannot be used reads as an empty store with ``problem`` set, and every write or lock raises
:class:`~dreaming.errors.RecallStoreError`; it is never moved aside.

**JSON.** Entries stay plain JSON objects with OpenClaw's camelCase keys, so fields this code does not know (written
by a newer OpenClaw) survive every rewrite. There is no size cap on reading (OpenClaw #92050 deadlocked promotion
behind a 16 MiB read cap). The file is written one entry per line: valid JSON that OpenClaw reads as is, rendered by
one C encoder (built once per write, not once per entry) so a 20,000-entry store is written in a fraction of a second.

Locking mirrors OpenClaw so both can write the same workspace: an in-process lock per store, then OpenClaw's lock
row, or for the JSON store the file ``memory/.dreams/short-term-promotion.lock`` created exclusively with
``<pid>:<epoch ms>``, retried every 40 ms for 10 s, and taken over when older than 60 s and its owner is gone.
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

from dreaming.errors import LockBusyError, RecallStoreError
from dreaming.memory._decode import parse_json_bytes, why_unparsable
from dreaming.memory.files import atomic_write_bytes, before_write, check_write_path, move_aside
from dreaming.memory.recall._openclaw_db import (
    META_NAMESPACE,
    RECALL_NAMESPACE,
    check_db_confined,
    inspect_db,
    read_namespace,
    write_namespace,
)
from dreaming.memory.recall._openclaw_lock import workspace_lock
from dreaming.memory.recall._store_location import openclaw_store_of, pinned_store
from dreaming.memory.workspace import Workspace, pid_alive

__all__ = [
    "LOCK_RETRY_S",
    "LOCK_STALE_S",
    "LOCK_WAIT_S",
    "STORE_VERSION",
    "RecallStore",
    "check_recall_store_confined",
    "epoch_ms",
    "format_iso",
    "lock_is_stale",
    "parse_iso",
    "promotion_lock_path",
    "read_store",
    "recall_store_exists",
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
    """Entries by key, as OpenClaw's JSON objects (unknown fields kept), in OpenClaw's order."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Top-level fields other than ``version``, ``updatedAt`` and ``entries`` (JSON store only)."""
    updated_at: str | None = None
    """``updatedAt`` as read."""
    problem: str | None = None
    """Why the store, or some of its rows, could not be used (what could not be read was treated as absent)."""
    unusable: RecallStoreError | None = None
    """Set when OpenClaw's database could not be read at all: :func:`write_store` raises it rather than replace
    what it could not see."""


def epoch_ms(moment: datetime) -> int:
    """Return ``moment`` in epoch milliseconds (OpenClaw's ``Date.now()`` unit)."""
    return math.floor(moment.timestamp() * 1000)


def recall_store_exists(ws: Workspace, *, now: datetime) -> bool:
    """Return whether the workspace's store holds anything yet: the JSON file, or recall or meta rows."""
    try:
        chosen = openclaw_store_of(ws)
    except RecallStoreError:
        return True  # configured but unusable: it is meant to exist
    if chosen is None:
        return ws.recall_store.exists()
    facts = inspect_db(chosen, now_ms=epoch_ms(now))
    return facts.problem is not None or bool(facts.rows.get(RECALL_NAMESPACE) or facts.rows.get(META_NAMESPACE))


def check_recall_store_confined(ws: Workspace) -> None:
    """Refuse, before a run writes anything, a recall store whose writes would not land where they appear to.

    OpenClaw's database is the one file outside the workspace dreaming writes (with its ``-wal``, ``-shm`` and
    ``-journal``): it may be a link to a regular file, as OpenClaw allows, never to anything else. A store that
    cannot even be chosen is not refused here: the recall phases report it and the night goes on.

    Raises:
        OutsideWorkspaceError: naming the link.
    """
    try:
        chosen = openclaw_store_of(ws)
    except RecallStoreError:
        return
    if chosen is None:
        for path in (ws.recall_store, ws.phase_signals, promotion_lock_path(ws)):
            check_write_path(path)
    else:
        check_db_confined(chosen.db)


def read_store(ws: Workspace, *, now: datetime, move_unreadable: bool = False) -> RecallStore:
    """Read the recall store, raw (not normalized); what cannot be read reads as empty with ``problem`` set.

    Args:
        ws: the workspace.
        now: stamps the name of an unreadable JSON file moved aside; expired SQLite rows are not read.
        move_unreadable: move a JSON file that is not JSON, or of another version, aside so a writer can start fresh
            without destroying it. OpenClaw's database is never moved or changed by a read.
    """
    try:
        chosen = openclaw_store_of(ws)
        if chosen is None:
            return _read_json_store(ws, now=now, move_unreadable=move_unreadable)
        rows = read_namespace(chosen, RECALL_NAMESPACE, "recall", now_ms=epoch_ms(now))
    except RecallStoreError as exc:
        return RecallStore(problem=f"unusable: {exc}", unusable=exc)
    problem = None
    if rows.ignored:
        problem = f"partly unreadable: {len(rows.ignored)} row(s) ignored ({'; '.join(rows.ignored[:3])})"
    return RecallStore(entries=rows.entries, updated_at=rows.updated_at, problem=problem)


def _read_json_store(ws: Workspace, *, now: datetime, move_unreadable: bool) -> RecallStore:
    path = ws.recall_store
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return RecallStore()
    if not data or data.isspace():  # as ``not data.strip()``, without copying the whole file
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
    entries = dict(doc.get("entries", {}))  # JSON object keys are strings already
    extra = {k: v for k, v in doc.items() if k not in {"version", "updatedAt", "entries"}}
    updated = doc.get("updatedAt")
    return RecallStore(entries, extra, updated if isinstance(updated, str) else None)


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
    """Write the whole store, stamping ``updatedAt``; return False when it was already there as is.

    The JSON file is replaced atomically. In OpenClaw's database one transaction upserts every entry, deletes the
    workspace's recall rows not in ``store`` (rows that could not be read are left alone) and stamps the meta row.

    Raises:
        RecallStoreError: OpenClaw's database cannot be used, or ``store`` was read from one that could not be read.
    """
    if store.unusable is not None:
        raise store.unusable
    chosen = openclaw_store_of(ws)
    if chosen is None:
        return atomic_write_bytes(ws.recall_store, render_store(store, updated_at=format_iso(now)))
    return write_namespace(
        chosen, RECALL_NAMESPACE, "recall", store.entries, updated_at=format_iso(now), now_ms=epoch_ms(now)
    )


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


def _process_lock(name: str) -> threading.Lock:
    with _process_locks_guard:
        return _process_locks.setdefault(name, threading.Lock())


@contextmanager
def short_term_lock(ws: Workspace, *, wait_s: float = LOCK_WAIT_S, retry_s: float = LOCK_RETRY_S) -> Iterator[None]:
    """Hold the short-term promotion lock: in-process first, then OpenClaw's lock row or the shared lock file.

    The store chosen when the lock is taken is the one every read and write under it uses.

    Raises:
        LockBusyError: the lock was held by a live owner for longer than ``wait_s``.
        RecallStoreError: the workspace's store is OpenClaw's database and it cannot be used.
    """
    chosen = openclaw_store_of(ws)
    if chosen is None:
        with _json_lock(ws, wait_s=wait_s, retry_s=retry_s), pinned_store(ws, None):
            yield
        return
    inner = _process_lock(f"{chosen.db}\n{chosen.workspace_key}")
    if not inner.acquire(timeout=wait_s):
        raise LockBusyError(chosen.lock_ref, "another thread of this process")
    try:
        with workspace_lock(chosen, wait_s=wait_s, retry_s=retry_s), pinned_store(ws, chosen):
            yield
    finally:
        inner.release()


@contextmanager
def _json_lock(ws: Workspace, *, wait_s: float, retry_s: float) -> Iterator[None]:
    """Hold the in-process lock, then ``memory/.dreams/short-term-promotion.lock``."""
    path = promotion_lock_path(ws)
    inner = _process_lock(str(path))
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
                time.sleep(retry_s)
                continue
            break
        try:
            yield
        finally:
            with suppress(FileNotFoundError):
                path.unlink()
    finally:
        inner.release()
