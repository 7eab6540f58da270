"""OpenClaw 2026.9's SQLite plugin-state store, read and written as OpenClaw does (its lock row: ``_openclaw_lock``).

OpenClaw keeps a workspace's recall entries, phase signals, their ``updatedAt`` and its lock as rows of
``plugin_state_entries`` (plugin ``memory-core``) in ``<state dir>/state/openclaw.sqlite``. A wrapped row's
``entry_key`` is ``<workspace key>:<sha256(logical key)>`` and its value
``{"version":1,"workspaceKey","workspaceDir","key","value"}``; a row counts only when the key has the workspace's
prefix **and** the wrapper names the same workspace key. Rows come back ``ORDER BY created_at, entry_key``: OpenClaw
builds its JS object in that order, and ranking's last tie-break is that order, so it is kept.

This module moves bytes; what an entry means is the recall path's business. It never creates or migrates the
database: the file must exist with ``user_version`` 18 (OpenClaw refuses a newer schema; so do we), and anything else
(missing, not SQLite, another version, read-only, locked past the 5 s busy timeout) raises
:class:`~dreaming.errors.RecallStoreError`. A row that is not JSON, or not a wrapper of this workspace, is reported
and left alone: the file is OpenClaw's, so nothing in it is ever moved aside or repaired.

Differences from OpenClaw, each deliberate:

- A store is replaced in **one** ``BEGIN IMMEDIATE`` transaction (every entry upserted, the workspace's other rows
  of that namespace deleted, the meta row upserted); OpenClaw uses one transaction per row, so its readers can see a
  half-written store and ours cannot.
- Rows that cannot be read are never deleted (OpenClaw's reader fails on them instead).
- Nothing is evicted to honour the 50,000-rows-per-namespace cap: that would delete other workspaces' rows. A write
  that leaves a namespace over the cap is logged; OpenClaw evicts its oldest rows on its next write.
- A value over 1 MiB (impossible for a capped entry) is refused and logged, and the row it would replace is kept.
- Integral floats are written as integers, as ``JSON.stringify`` writes them; a non-integral number below 1e-4 is
  written in Python's form (``5e-05`` where JS writes ``0.00005``), which parses to the same value.
- Reads open the file read-only, so closing never checkpoints into it (SQLite may still create the empty ``-wal``
  and ``-shm`` files OpenClaw itself keeps beside it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import sqlite3
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from dreaming.errors import OutsideWorkspaceError, RecallStoreError
from dreaming.memory._decode import parse_json_bytes, why_unparsable
from dreaming.memory.recall._openclaw_paths import entry_key, workspace_key

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DELETE",
    "LOCK_NAMESPACE",
    "MAX_VALUE_BYTES",
    "META_NAMESPACE",
    "NAMESPACE_MAX_ROWS",
    "PHASE_NAMESPACE",
    "PLUGIN_ID",
    "RECALL_NAMESPACE",
    "SCHEMA_VERSION",
    "UPSERT",
    "DbFacts",
    "NamespaceRows",
    "OpenClawStore",
    "check_db_confined",
    "connect",
    "encode_json",
    "find_workspace_rows",
    "immediate",
    "inspect_db",
    "read_namespace",
    "write_namespace",
]

_log = logging.getLogger(__name__)

PLUGIN_ID = "memory-core"
RECALL_NAMESPACE = "short-term-recall"
PHASE_NAMESPACE = "short-term-phase-signals"
META_NAMESPACE = "short-term-meta"
LOCK_NAMESPACE = "short-term-locks"
SCHEMA_VERSION = 18
"""The only ``user_version`` read or written (OpenClaw 2026.9.6's schema)."""
BUSY_TIMEOUT_MS = 5000
MAX_VALUE_BYTES = 1_048_576
NAMESPACE_MAX_ROWS = 50_000
_WRAPPER_VERSION = 1
_SIDECARS = ("-wal", "-shm", "-journal")
_OPEN_MODE = "rw"
"""SQLite's open mode: ``rw`` never creates the file, and opens a write-protected one read-only (tests say ``ro``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OpenClawStore:
    """Where one workspace's recall state lives in OpenClaw's database."""

    db: Path
    """``<state dir>/state/openclaw.sqlite``."""
    workspace_dir: str
    """The workspace as OpenClaw spells it (``path.resolve``, links not resolved): the wrappers' ``workspaceDir``."""
    workspace_key: str
    """``sha256_hex(workspace_dir)``: the rows' key prefix and the lock row's key."""
    reason: str
    """Why this workspace uses the database: ``configured``, ``rows`` or ``default-workspace``."""

    @property
    def lock_ref(self) -> Path:
        """Name the lock row as OpenClaw's messages do (``plugin-state:memory-core/short-term-locks/<key>``)."""
        return Path(f"plugin-state:{PLUGIN_ID}/{LOCK_NAMESPACE}/{self.workspace_key}")


@dataclass(frozen=True, kw_only=True, slots=True)
class NamespaceRows:
    """A workspace's rows of one namespace, unwrapped."""

    entries: dict[str, Any]
    """Payload by logical key, in OpenClaw's order (``created_at``, then ``entry_key``)."""
    updated_at: str | None
    """The meta row's ``updatedAt``, if any."""
    ignored: tuple[str, ...]
    """One line per row with this workspace's prefix that was not used, saying why."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DbFacts:
    """What ``dreaming doctor`` shows about the database."""

    user_version: int | None
    """The schema version, or None when the file could not be read."""
    rows: dict[str, int]
    """This workspace's rows per namespace (the lock row counted under its namespace)."""
    problem: str | None
    """Why the database cannot be used, or None."""


def check_db_confined(db: Path) -> None:
    """Refuse a database path that would make a write land somewhere other than a regular file.

    The database itself may be a symbolic link to a regular file (OpenClaw follows links too); a link to anything
    else (a device, a folder, a FIFO) is refused, and so is a link in place of the ``-wal``, ``-shm`` or ``-journal``
    file SQLite writes beside the real database.

    Raises:
        OutsideWorkspaceError: naming the link and where it leads.
    """
    if db.is_symlink() and db.exists() and not db.is_file():
        raise OutsideWorkspaceError(db, Path(os.path.realpath(db)))
    real = Path(os.path.realpath(db))
    for suffix in _SIDECARS:
        sidecar = real.with_name(real.name + suffix)
        if sidecar.is_symlink():
            raise OutsideWorkspaceError(sidecar, Path(os.path.realpath(sidecar)))


def _check_db_file(db: Path) -> None:
    try:
        mode = db.stat().st_mode  # follows a link, as OpenClaw does
    except FileNotFoundError:
        raise RecallStoreError(db, "it does not exist (OpenClaw creates it; dreaming never does)") from None
    except OSError as exc:
        raise RecallStoreError(db, f"it cannot be inspected: {exc.strerror}") from exc
    if not stat.S_ISREG(mode):
        raise RecallStoreError(db, "it is not a regular file")


def _unusable(db: Path, exc: sqlite3.Error) -> RecallStoreError:
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        why = f"locked by another writer for more than the {BUSY_TIMEOUT_MS} ms busy timeout"
    elif name.startswith("SQLITE_READONLY") or "readonly" in str(exc):
        why = "it is read-only"
    elif name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        why = "it is not an SQLite database, or it is corrupt"
    else:
        why = str(exc)
    return RecallStoreError(db, why)


def _header_version(db: Path) -> int:
    """Return ``user_version`` from the file header without opening the database (no sidecar is created).

    Raises:
        RecallStoreError: the file is not an SQLite database.
    """
    try:
        with db.open("rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        raise RecallStoreError(db, f"it cannot be read: {exc.strerror}") from exc
    if not header:
        return 0  # an empty file is an empty database to SQLite: no schema at all
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise RecallStoreError(db, "it is not an SQLite database, or it is corrupt")
    return int.from_bytes(header[60:64], "big", signed=True)


def _refuse_version(db: Path, version: int) -> None:
    if version != SCHEMA_VERSION:
        raise RecallStoreError(db, f"its schema is user_version {version}; this dreaming reads only {SCHEMA_VERSION}")


@contextlib.contextmanager
def connect(db: Path, *, write: bool, check_version: bool = True) -> Iterator[sqlite3.Connection]:
    """Open the existing database (never create it) with OpenClaw's busy timeout; close it on the way out.

    A reading connection is opened read-only, so that closing it never checkpoints into OpenClaw's file. A wrong
    schema version is refused from the file header before anything is opened, then checked again once open (the
    header may lag behind a write still in the WAL).
    """
    _check_db_file(db)
    if check_version:
        _refuse_version(db, _header_version(db))
    uri = f"file:{quote(str(db))}?mode={_OPEN_MODE if write else 'ro'}"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise _unusable(db, exc) from exc
    try:
        conn.text_factory = bytes  # a TEXT value that is not UTF-8 is reported, not fatal to the whole read
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if check_version:
                _refuse_version(db, conn.execute("PRAGMA user_version").fetchone()[0])
            yield conn
        except sqlite3.Error as exc:
            raise _unusable(db, exc) from exc
    finally:
        conn.close()


@contextlib.contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block in one ``BEGIN IMMEDIATE`` transaction (the write lock taken up front, as OpenClaw does)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


_SELECT_WRAPPED = (
    "SELECT entry_key, value_json FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? "
    "AND entry_key >= ? AND entry_key < ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at, entry_key"
)
UPSERT = (
    "INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at, expires_at) "
    "VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT (plugin_id, namespace, entry_key) DO UPDATE SET "
    "value_json = excluded.value_json, created_at = excluded.created_at, expires_at = excluded.expires_at"
)
DELETE = "DELETE FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? AND entry_key = ?"


def _wrapped_rows(conn: sqlite3.Connection, namespace: str, key: str, now_ms: int) -> list[tuple[str, bytes]]:
    # The key range is exactly the "<key>:" prefix (":" + 1 is ";"), so the primary key index answers it.
    rows = conn.execute(_SELECT_WRAPPED, (PLUGIN_ID, namespace, f"{key}:", f"{key};", now_ms)).fetchall()
    return [(bytes(k).decode("utf-8", "surrogateescape"), bytes(v)) for k, v in rows]


def _unwrap(value_json: bytes, key: str) -> tuple[str, Any] | str:
    """Return ``(logical key, payload)`` of a wrapper of workspace ``key``, or why the row is not one."""
    try:
        doc = parse_json_bytes(value_json)
    except ValueError as exc:
        return why_unparsable(exc)
    if not isinstance(doc, dict):
        return "not a wrapper object"
    if doc.get("workspaceKey") != key:
        return "its wrapper names another workspace"
    logical = doc.get("key")
    if not isinstance(logical, str):
        return "its wrapper has no key"
    return logical, doc.get("value")


def read_namespace(store: OpenClawStore, namespace: str, meta_key: str, *, now_ms: int) -> NamespaceRows:
    """Read the workspace's rows of ``namespace`` and its ``updatedAt`` from the meta row ``meta_key``.

    Raises:
        RecallStoreError: the database cannot be used.
    """
    key = store.workspace_key
    entries: dict[str, Any] = {}
    ignored: list[str] = []
    updated_at: str | None = None
    with connect(store.db, write=False) as conn:
        conn.execute("BEGIN")  # one snapshot for the entries and the meta row
        try:
            rows = _wrapped_rows(conn, namespace, key, now_ms)
            meta = _wrapped_rows(conn, META_NAMESPACE, key, now_ms)
        finally:
            conn.execute("COMMIT")
    for row_key, value_json in rows:
        unwrapped = _unwrap(value_json, key)
        if isinstance(unwrapped, str):
            ignored.append(f"{namespace} row {row_key}: {unwrapped}")
        else:
            entries[unwrapped[0]] = unwrapped[1]
    for _, value_json in meta:
        unwrapped = _unwrap(value_json, key)
        if isinstance(unwrapped, tuple) and unwrapped[0] == meta_key and isinstance(unwrapped[1], dict):
            stamp = unwrapped[1].get("updatedAt")
            updated_at = stamp if isinstance(stamp, str) else updated_at
    return NamespaceRows(entries=entries, updated_at=updated_at, ignored=tuple(ignored))


def _js_numbers(value: Any) -> Any:
    """Return ``value`` with integral floats as ints and non-finite numbers as 0, as they should reach JSON."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return 0
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    return value


def encode_json(value: Any) -> str:
    """Return ``JSON.stringify(value)``: compact, non-ASCII kept."""
    return json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _wrapper(store: OpenClawStore, logical_key: str, value: Any) -> str:
    return encode_json(
        {
            "version": _WRAPPER_VERSION,
            "workspaceKey": store.workspace_key,
            "workspaceDir": store.workspace_dir,
            "key": logical_key,
            "value": value,
        }
    )


def _replace_rows(
    conn: sqlite3.Connection, store: OpenClawStore, namespace: str, entries: Mapping[str, Any], now_ms: int
) -> bool:
    """Make the workspace's rows of ``namespace`` hold exactly ``entries``; return whether anything changed."""
    key = store.workspace_key
    current = {
        row_key: value_json.decode("utf-8", "surrogateescape")
        for row_key, value_json in _wrapped_rows(conn, namespace, key, now_ms)
        if isinstance(_unwrap(value_json, key), tuple)  # a row that cannot be read is never replaced or deleted
    }
    fresh: dict[str, str] = {}
    kept: set[str] = set()
    for logical, value in entries.items():
        row_key = entry_key(key, logical)
        value_json = _wrapper(store, logical, value)
        if len(value_json.encode("utf-8", "surrogateescape")) > MAX_VALUE_BYTES:
            _log.warning("not writing %s entry %r: its value exceeds OpenClaw's 1 MiB limit", namespace, logical)
            kept.add(row_key)
            continue
        fresh[row_key] = value_json
    stale = [row_key for row_key in current if row_key not in fresh and row_key not in kept]
    if not stale and all(current.get(row_key) == value_json for row_key, value_json in fresh.items()):
        return False
    # Every entry is upserted, changed or not, as OpenClaw's writeStore does (its created_at is the write's time).
    conn.executemany(UPSERT, [(PLUGIN_ID, namespace, k, v, now_ms) for k, v in fresh.items()])
    conn.executemany(DELETE, [(PLUGIN_ID, namespace, k) for k in stale])
    (count,) = conn.execute(
        "SELECT COUNT(*) FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ?", (PLUGIN_ID, namespace)
    ).fetchone()
    if count > NAMESPACE_MAX_ROWS:
        _log.warning("%s holds %d rows, over OpenClaw's cap of %d", namespace, count, NAMESPACE_MAX_ROWS)
    return True


def write_namespace(
    store: OpenClawStore,
    namespace: str,
    meta_key: str,
    entries: Mapping[str, Any],
    *,
    updated_at: str,
    now_ms: int,
) -> bool:
    """Replace the workspace's rows of ``namespace`` with ``entries`` and stamp its meta row, in one transaction.

    Returns False, having written nothing, when the rows and the stamp are already there. Rows of other workspaces
    and namespaces, and rows that cannot be read, are never touched.

    Raises:
        RecallStoreError: the database cannot be used.
    """
    with connect(store.db, write=True) as conn, immediate(conn):
        changed = _replace_rows(conn, store, namespace, entries, now_ms)
        meta = _wrapper(store, meta_key, {"updatedAt": updated_at})
        meta_row = entry_key(store.workspace_key, meta_key)
        (existing,) = conn.execute(
            "SELECT COUNT(*) FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? AND entry_key = ? "
            "AND value_json = ?",
            (PLUGIN_ID, META_NAMESPACE, meta_row, meta),
        ).fetchone()
        if changed or not existing:
            conn.execute(UPSERT, (PLUGIN_ID, META_NAMESPACE, meta_row, meta, now_ms))
            return True
    return False


# Which workspace the rows belong to, and what doctor shows.


def _meta_identities(conn: sqlite3.Connection, now_ms: int) -> Iterator[tuple[str, str]]:
    """Yield ``(workspaceDir, workspaceKey)`` of every consistent meta row, most recently written first."""
    rows = conn.execute(
        "SELECT entry_key, value_json FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? "
        "AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, entry_key",
        (PLUGIN_ID, META_NAMESPACE, now_ms),
    )
    for raw_key, value_json in rows:
        try:
            doc = parse_json_bytes(bytes(value_json))
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        folder, key = doc.get("workspaceDir"), doc.get("workspaceKey")
        if (
            isinstance(folder, str)
            and isinstance(key, str)
            and bytes(raw_key).decode("utf-8", "surrogateescape").startswith(f"{key}:")
            and workspace_key(folder) == key
        ):
            yield folder, key


def _has_rows(conn: sqlite3.Connection, key: str, now_ms: int) -> bool:
    row = conn.execute(
        "SELECT 1 FROM plugin_state_entries WHERE plugin_id = ? AND namespace IN (?, ?, ?) "
        "AND entry_key >= ? AND entry_key < ? AND (expires_at IS NULL OR expires_at > ?) LIMIT 1",
        (PLUGIN_ID, RECALL_NAMESPACE, PHASE_NAMESPACE, META_NAMESPACE, f"{key}:", f"{key};", now_ms),
    ).fetchone()
    return row is not None


def find_workspace_rows(db: Path, root: str, *, now_ms: int, any_version: bool) -> tuple[str, str] | None:
    """Return how OpenClaw spells the workspace at ``root`` in rows it already wrote, or None.

    Its own path comes first; then a meta row whose ``workspaceDir`` leads to the same real folder (OpenClaw keys by
    the path it was given, links unresolved; dreaming's workspace root is a real path). With ``any_version`` a
    database of another schema version is looked at too (read-only): a newer OpenClaw's rows still say the workspace
    is OpenClaw's, and using its store is then refused and reported rather than silently replaced by the JSON file.

    Raises:
        RecallStoreError: the database cannot be read.
    """
    own = workspace_key(root)
    with connect(db, write=False, check_version=not any_version) as conn:
        if _has_rows(conn, own, now_ms):
            return root, own
        for folder, key in _meta_identities(conn, now_ms):
            if os.path.realpath(folder) == root:
                return folder, key
    return None


def inspect_db(store: OpenClawStore, *, now_ms: int) -> DbFacts:
    """Return the schema version and this workspace's row counts, or why the database cannot be read."""
    try:
        _check_db_file(store.db)
        version = _header_version(store.db)
    except RecallStoreError as exc:
        return DbFacts(user_version=None, rows={}, problem=str(exc))
    try:
        with connect(store.db, write=False) as conn:  # another version is refused before anything is opened
            rows = {
                ns: len(_wrapped_rows(conn, ns, store.workspace_key, now_ms))
                for ns in (RECALL_NAMESPACE, PHASE_NAMESPACE, META_NAMESPACE)
            }
            (locked,) = conn.execute(
                "SELECT COUNT(*) FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ? AND entry_key = ?",
                (PLUGIN_ID, LOCK_NAMESPACE, store.workspace_key),
            ).fetchone()
            rows[LOCK_NAMESPACE] = int(locked)
    except RecallStoreError as exc:
        return DbFacts(user_version=version, rows={}, problem=str(exc))
    return DbFacts(user_version=version, rows=rows, problem=None)
