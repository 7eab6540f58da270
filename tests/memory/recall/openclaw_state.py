"""Build OpenClaw 2026.9 state dirs for tests: the one place that knows how OpenClaw creates its database.

The schema is the one ``openclaw@2026.9.6`` creates, from the golden ``golden/openclaw-2026.9.6/schema.sql``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dreaming.memory.recall._openclaw_paths import entry_key, workspace_key

GOLDEN_SCHEMA = Path(__file__).parent / "golden" / "openclaw-2026.9.6" / "schema.sql"
"""The schema ``openclaw@2026.9.6`` creates (``make compat-openclaw`` dumps it from a database OpenClaw made)."""

Row = tuple[str, str, str, str, int, int | None]


def create_openclaw_db(state_dir: Path, *, user_version: int = 18) -> Path:
    """Create ``<state_dir>/state/openclaw.sqlite`` as OpenClaw does (WAL, incremental vacuum, its schema)."""
    db = state_dir / "state" / "openclaw.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    schema = GOLDEN_SCHEMA.read_text(encoding="utf-8")
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA auto_vacuum = 2")  # before the first table, or it does not take
        conn.execute("PRAGMA journal_mode = wal")
        conn.executescript(schema)
        conn.execute(f"PRAGMA user_version = {user_version}")
        conn.commit()
    db.chmod(0o600)
    return db


def wrapper(workspace_dir: str, logical_key: str, value: Any, *, key: str | None = None) -> str:
    """Return the ``value_json`` OpenClaw writes for a workspace entry (``key`` forges its workspaceKey)."""
    doc = {
        "version": 1,
        "workspaceKey": key or workspace_key(workspace_dir),
        "workspaceDir": workspace_dir,
        "key": logical_key,
        "value": value,
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def put_row(
    db: Path, namespace: str, row_key: str, value_json: str, *, created_at: int = 1, plugin: str = "memory-core"
) -> None:
    """Insert or replace one row, as any writer would."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO plugin_state_entries VALUES (?, ?, ?, ?, ?, NULL)",
            (plugin, namespace, row_key, value_json, created_at),
        )
        conn.commit()


def put_entry(
    db: Path, workspace_dir: str, namespace: str, logical_key: str, value: Any, *, created_at: int = 1
) -> str:
    """Write one wrapped entry as OpenClaw does; return its row key."""
    row_key = entry_key(workspace_key(workspace_dir), logical_key)
    put_row(db, namespace, row_key, wrapper(workspace_dir, logical_key, value), created_at=created_at)
    return row_key


def put_entries(db: Path, workspace_dir: str, namespace: str, values: dict[str, Any], *, created_at: int = 1) -> None:
    """Write many wrapped entries as OpenClaw does (logical key to payload), in one transaction."""
    prefix = workspace_key(workspace_dir)
    rows = [
        ("memory-core", namespace, entry_key(prefix, key), wrapper(workspace_dir, key, value), created_at)
        for key, value in values.items()
    ]
    with closing(sqlite3.connect(db)) as conn:
        conn.executemany("INSERT OR REPLACE INTO plugin_state_entries VALUES (?, ?, ?, ?, ?, NULL)", rows)
        conn.commit()


def all_rows(db: Path) -> list[Row]:
    """Return every plugin-state row, in primary-key order."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT * FROM plugin_state_entries ORDER BY plugin_id, namespace, entry_key").fetchall()
    return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]


def entries_in(db: Path, workspace_dir: str, namespace: str) -> list[tuple[str, Any]]:
    """Return ``(logical key, payload)`` of a workspace's rows, in OpenClaw's order (created_at, entry_key)."""
    prefix = workspace_key(workspace_dir) + ":"
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT entry_key, value_json FROM plugin_state_entries WHERE plugin_id = 'memory-core' AND namespace = ? "
            "ORDER BY created_at, entry_key",
            (namespace,),
        ).fetchall()
    out = []
    for row_key, value_json in rows:
        try:
            doc = json.loads(value_json)
        except ValueError:
            continue
        if row_key.startswith(prefix) and isinstance(doc, dict) and doc.get("workspaceKey") == prefix[:-1]:
            out.append((doc["key"], doc["value"]))
    return out


def file_digest(path: Path) -> str:
    """Return the sha256 of a file's bytes (to show a file was not touched)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class OpenClawInstall:
    """An OpenClaw state dir with its database, found through ``OPENCLAW_STATE_DIR``."""

    state_dir: Path
    db: Path


def install_openclaw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, user_version: int = 18) -> OpenClawInstall:
    """Create an OpenClaw state dir under ``tmp_path`` and point ``OPENCLAW_STATE_DIR`` at it."""
    state_dir = tmp_path / "openclaw-state"
    db = create_openclaw_db(state_dir, user_version=user_version)
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state_dir))
    return OpenClawInstall(state_dir=state_dir, db=db)
