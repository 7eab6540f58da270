"""OpenClaw 2026.9's workspace lock: its ``short-term-locks`` row, taken and released as OpenClaw does.

Every recall record, phase-signal update, repair and apply of OpenClaw runs under this row (``withMemoryWorkspaceLock``
in ``dreaming-dreams-file``); a Python writer takes the same row, so neither overwrites the other's store. The row is
unwrapped: its key is the bare workspace key and its value ``{owner: "<pid>:<uuid>", acquiredAt, ownerStartTime?}``,
``ownerStartTime`` being field 22 of ``/proc/<pid>/stat`` (Linux). Acquiring inserts it only when absent, inside
``BEGIN IMMEDIATE``; a holder older than 60 s is taken over when its pid cannot be parsed, is dead (or a zombie), or is
alive with another start time (a reused pid). Releasing deletes it only while it still holds our owner and
``acquiredAt``. Critical sections must stay well under 60 s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dreaming.errors import LockBusyError, RecallStoreError
from dreaming.memory._decode import parse_json_bytes, why_unparsable
from dreaming.memory.recall._openclaw_db import (
    DELETE,
    LOCK_NAMESPACE,
    PLUGIN_ID,
    UPSERT,
    OpenClawStore,
    connect,
    encode_json,
    immediate,
)
from dreaming.memory.workspace import pid_alive

__all__ = ["LOCK_STALE_MS", "process_start_time", "workspace_lock"]

_log = logging.getLogger(__name__)

LOCK_STALE_MS = 60_000
"""A holder older than this may be taken over (if its owner is gone)."""


def process_start_time(pid: int) -> int | None:
    """Return field 22 of ``/proc/<pid>/stat`` (start time in clock ticks since boot), or None where unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 1 :].split()
    try:
        start = int(fields[19])
    except (IndexError, ValueError):
        return None
    return start if start >= 0 else None


def _pid_dead(pid: int) -> bool:
    # OpenClaw's isPidDefinitelyDead: gone, or a Linux zombie with nothing left running.
    if not pid_alive(pid):
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return bool(re.search(r"^State:\s+Z", status, re.M) and re.search(r"^Threads:[ \t]+1[ \t]*$", status, re.M))


def _stealable(holder: dict[str, Any], now_ms: int) -> bool:
    """Return whether a held lock row may be taken over: older than 60 s and its owner gone or replaced."""
    acquired = holder.get("acquiredAt")
    if isinstance(acquired, (int, float)) and not isinstance(acquired, bool) and now_ms - acquired <= LOCK_STALE_MS:
        return False
    owner = holder.get("owner")
    match = re.match(r"^(\d+):", owner.strip()) if isinstance(owner, str) else None
    pid = int(match.group(1)) if match else 0
    if pid <= 0 or pid == os.getpid():
        # This process holds its own in-process lock while it acquires, so a row of its pid is a leftover.
        return True
    if _pid_dead(pid):
        return True
    if "ownerStartTime" not in holder:
        return False
    current = process_start_time(pid)
    return current is not None and current != holder["ownerStartTime"]


def _lock_row(conn: sqlite3.Connection, store: OpenClawStore, now_ms: int) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT value_json FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? AND entry_key = ? "
        "AND (expires_at IS NULL OR expires_at > ?)",
        (PLUGIN_ID, LOCK_NAMESPACE, store.workspace_key, now_ms),
    ).fetchone()
    if row is None:
        return None
    try:
        holder = parse_json_bytes(bytes(row[0]))
    except ValueError as exc:
        raise RecallStoreError(store.db, f"its lock row is {why_unparsable(exc)}") from exc
    if not isinstance(holder, dict):
        raise RecallStoreError(store.db, "its lock row is not an object")
    return holder


def _try_acquire(conn: sqlite3.Connection, store: OpenClawStore, mine: dict[str, Any]) -> str | None:
    """Insert ``mine`` as the lock row if it is absent or stealable; return None, or the live holder's owner."""
    with immediate(conn):
        now_ms = int(time.time() * 1000)
        holder = _lock_row(conn, store, now_ms)
        if holder is not None:
            if not _stealable(holder, now_ms):
                return str(holder.get("owner") or "unknown")
            _log.warning("taking over the stale OpenClaw workspace lock of %s", holder.get("owner"))
            conn.execute(DELETE, (PLUGIN_ID, LOCK_NAMESPACE, store.workspace_key))
        mine["acquiredAt"] = now_ms
        conn.execute(UPSERT, (PLUGIN_ID, LOCK_NAMESPACE, store.workspace_key, encode_json(mine), now_ms))
    return None


def _release(store: OpenClawStore, mine: Mapping[str, Any]) -> None:
    """Delete the lock row only if it is still ours (same owner and acquiredAt)."""
    with connect(store.db, write=True) as conn, immediate(conn):
        holder = _lock_row(conn, store, int(time.time() * 1000))
        if holder is not None and (holder.get("owner"), holder.get("acquiredAt")) == (
            mine["owner"],
            mine["acquiredAt"],
        ):
            conn.execute(DELETE, (PLUGIN_ID, LOCK_NAMESPACE, store.workspace_key))


@contextlib.contextmanager
def workspace_lock(store: OpenClawStore, *, wait_s: float, retry_s: float) -> Iterator[None]:
    """Hold OpenClaw's ``short-term-locks`` row for the workspace (the caller holds the in-process lock).

    Acquiring inserts ``{owner: "<pid>:<uuid>", acquiredAt, ownerStartTime}`` inside ``BEGIN IMMEDIATE`` only when no
    row is there, retrying every ``retry_s`` up to ``wait_s``. A row older than 60 s is taken over when its owner pid
    cannot be parsed or is dead, or is alive with another start time (a reused pid). Releasing deletes the row only
    if it still holds this owner and ``acquiredAt``.

    Raises:
        LockBusyError: a live owner held the row for longer than ``wait_s``.
        RecallStoreError: the database cannot be used.
    """
    mine: dict[str, Any] = {"owner": f"{os.getpid()}:{uuid.uuid4()}", "acquiredAt": 0}
    start = process_start_time(os.getpid())
    if start is not None:
        mine["ownerStartTime"] = start
    deadline = time.monotonic() + wait_s
    with connect(store.db, write=True) as conn:
        while (holder := _try_acquire(conn, store, mine)) is not None:
            if time.monotonic() >= deadline:
                raise LockBusyError(store.lock_ref, holder)
            time.sleep(retry_s)
    try:
        yield
    finally:
        try:
            _release(store, mine)
        except RecallStoreError as exc:
            # The row stays until it is stale and this process is gone; the work under it is done.
            _log.warning("could not release the OpenClaw workspace lock: %s", exc)
