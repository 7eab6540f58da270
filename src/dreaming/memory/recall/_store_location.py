"""Which recall store a workspace uses: OpenClaw 2026.9's SQLite database, or the JSON files of older OpenClaw.

A workspace uses OpenClaw's database when:

1. ``[recall] openclaw_state_dir`` in its dreaming.toml names OpenClaw's state dir (``~`` expanded against OpenClaw's
   home, a relative path taken from the workspace); that database must exist, else the store cannot be used;
2. or the state dir OpenClaw itself would find (``OPENCLAW_STATE_DIR``, ``~/.openclaw``, ``~/.clawdbot``) holds a
   database with rows of this workspace;
3. or this workspace is OpenClaw's default one there (``OPENCLAW_WORKSPACE_DIR``, ``<state dir>/workspace``, ...)
   and it has no JSON store yet. A JSON store there is OpenClaw's doctor's to import (it does so once, only while
   the workspace has no rows, and archives it unmerged otherwise), so dreaming keeps writing the JSON until then
   rather than make OpenClaw discard it.

Otherwise it uses the JSON store (older OpenClaw, standalone workspaces). Nothing is ever merged or migrated by
dreaming. The choice is made on each call; while the workspace's lock is held it is pinned (:func:`pinned_store`), so
one read-modify-write never reads one store and writes the other.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from dreaming.config import load_config
from dreaming.errors import ConfigError, RecallStoreError
from dreaming.memory.recall._openclaw_db import (
    OpenClawStore,
    find_workspace_rows,
    inspect_db,
)
from dreaming.memory.recall._openclaw_paths import (
    db_path,
    default_workspace_dir,
    resolve_home_relative,
    state_dir,
    workspace_key,
)
from dreaming.memory.workspace import Workspace

__all__ = [
    "RecallStoreInfo",
    "describe_recall_store",
    "has_json_store",
    "locate_openclaw_store",
    "openclaw_store_of",
    "pinned_store",
]

_pinned: ContextVar[tuple[tuple[Path, OpenClawStore | None], ...]] = ContextVar("recall_store_pinned", default=())
"""The store chosen for each workspace whose lock this thread holds."""
_config_cache: dict[Path, tuple[tuple[int, int], str]] = {}

_REASONS = {
    "configured": "[recall] openclaw_state_dir names OpenClaw's state dir",
    "rows": "OpenClaw's database holds rows of this workspace",
    "default-workspace": "this is OpenClaw's default workspace",
}


def has_json_store(ws: Workspace) -> bool:
    """Return whether the workspace holds a JSON recall or phase-signal store."""
    return ws.recall_store.exists() or ws.phase_signals.exists()


def locate_openclaw_store(
    ws: Workspace, *, configured: str, env: Mapping[str, str] | None = None, now_ms: int | None = None
) -> OpenClawStore | None:
    """Return where the workspace's recall state lives in OpenClaw's database, or None for the JSON store.

    Args:
        ws: the workspace.
        configured: ``[recall] openclaw_state_dir`` (blank: found as OpenClaw finds it).
        env: the environment OpenClaw would run in (the process environment by default).
        now_ms: rows that expired before this are not counted (the clock by default).

    Raises:
        RecallStoreError: ``configured`` names a state dir without a database.
    """
    env = os.environ if env is None else env
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    root = str(ws.root)
    if configured.strip():
        state = resolve_home_relative(configured, env, cwd=root)
        db = db_path(state)
        if not os.path.lexists(db):
            raise RecallStoreError(db, f"it does not exist ([recall] openclaw_state_dir = {configured!r})")
        default = default_workspace_dir(env, state=state)
    else:
        db = db_path(state_dir(env))
        if not os.path.lexists(db):
            return None
        default = default_workspace_dir(env)
    try:
        found = find_workspace_rows(db, root, now_ms=now_ms, any_version=not configured.strip())
    except RecallStoreError:
        found = None  # decided without its rows; the store reports the problem when it is used
    is_default = default is not None and os.path.realpath(default) == root
    if configured.strip():
        folder = found[0] if found else default if is_default and default else root
        return OpenClawStore(db=db, workspace_dir=folder, workspace_key=workspace_key(folder), reason="configured")
    if found is not None:
        return OpenClawStore(db=db, workspace_dir=found[0], workspace_key=found[1], reason="rows")
    if is_default and default is not None and not has_json_store(ws):
        key = workspace_key(default)
        return OpenClawStore(db=db, workspace_dir=default, workspace_key=key, reason="default-workspace")
    return None


def _configured_state_dir(ws: Workspace) -> str:
    """Return ``[recall] openclaw_state_dir`` of the workspace's dreaming.toml (cached on the file's mtime and size).

    Raises:
        RecallStoreError: dreaming.toml cannot be read at all, so which store to use is unknown.
    """
    path = ws.config_file
    try:
        info = path.stat()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise RecallStoreError(path, f"dreaming.toml cannot be read: {exc.strerror}") from exc
    signature = (info.st_mtime_ns, info.st_size)
    cached = _config_cache.get(path)
    if cached is not None and cached[0] == signature:
        return cached[1]
    try:
        value = load_config(path).recall.openclaw_state_dir
    except ConfigError as exc:
        raise RecallStoreError(path, f"dreaming.toml cannot be read: {exc}") from exc
    _config_cache[path] = (signature, value)
    return value


def openclaw_store_of(ws: Workspace) -> OpenClawStore | None:
    """Return where the workspace's recall state lives in OpenClaw's database, or None for the JSON store.

    While this thread holds the workspace's lock: the choice made when the lock was taken.

    Raises:
        RecallStoreError: ``[recall] openclaw_state_dir`` names a state dir without a database, or dreaming.toml
            cannot be read.
    """
    for root, chosen in _pinned.get():
        if root == ws.root:
            return chosen
    return locate_openclaw_store(ws, configured=_configured_state_dir(ws))


@contextmanager
def pinned_store(ws: Workspace, chosen: OpenClawStore | None) -> Iterator[None]:
    """Make :func:`openclaw_store_of` answer ``chosen`` for ``ws`` in this thread until the block ends."""
    token = _pinned.set((*_pinned.get(), (ws.root, chosen)))
    try:
        yield
    finally:
        _pinned.reset(token)


@dataclass(frozen=True, kw_only=True, slots=True)
class RecallStoreInfo:
    """Which recall store a workspace uses, why, and what it holds (``dreaming doctor``)."""

    kind: str
    """``sqlite`` (OpenClaw 2026.9's database) or ``json`` (``memory/.dreams/short-term-recall.json``)."""
    reason: str
    """Why, for people."""
    json_path: str
    """The JSON store, workspace-relative (whether or not it is used)."""
    json_exists: bool
    """Whether a JSON recall or phase-signal store exists."""
    db: str | None = None
    """OpenClaw's database, when it is used (or was found and not used)."""
    workspace_dir: str | None = None
    """The workspace as OpenClaw spells it in the database."""
    workspace_key: str | None = None
    """Its workspace key: the rows' prefix."""
    user_version: int | None = None
    """The database's schema version."""
    rows: dict[str, int] = field(default_factory=dict)
    """This workspace's rows per namespace."""
    problem: str | None = None
    """Why the store cannot be used, or None."""
    warnings: tuple[str, ...] = ()
    """What a person should know (both stores present, a JSON store waiting for OpenClaw's import)."""


def describe_recall_store(ws: Workspace, *, now: datetime) -> RecallStoreInfo:
    """Say which recall store the workspace uses and why; read-only."""
    json_path = ws.relative(ws.recall_store)
    json_exists = has_json_store(ws)
    now_ms = int(now.timestamp() * 1000)
    try:
        chosen = openclaw_store_of(ws)
    except RecallStoreError as exc:
        return RecallStoreInfo(
            kind="sqlite", reason=_REASONS["configured"], json_path=json_path, json_exists=json_exists,
            db=str(exc.db), problem=str(exc),
        )  # fmt: skip
    if chosen is None:
        return _describe_json(ws, json_path=json_path, json_exists=json_exists, now_ms=now_ms)
    facts = inspect_db(chosen, now_ms=now_ms)
    warnings: list[str] = []
    if json_exists:
        warnings.append(
            f"{json_path} (or phase-signals.json) exists beside the SQLite store: OpenClaw 2026.9 reads only SQLite "
            "(its doctor imports the JSON once, and archives it unmerged when rows exist); nothing is merged, and "
            "dreaming uses the SQLite store"
        )
    return RecallStoreInfo(
        kind="sqlite", reason=_REASONS[chosen.reason], json_path=json_path, json_exists=json_exists,
        db=str(chosen.db), workspace_dir=chosen.workspace_dir, workspace_key=chosen.workspace_key,
        user_version=facts.user_version, rows=facts.rows, problem=facts.problem, warnings=tuple(warnings),
    )  # fmt: skip


def _describe_json(ws: Workspace, *, json_path: str, json_exists: bool, now_ms: int) -> RecallStoreInfo:
    db = db_path(state_dir())
    if not os.path.lexists(db):
        reason = f"no OpenClaw database at {db}"
        return RecallStoreInfo(kind="json", reason=reason, json_path=json_path, json_exists=json_exists)
    root = str(ws.root)
    probe = OpenClawStore(db=db, workspace_dir=root, workspace_key=workspace_key(root), reason="rows")
    facts = inspect_db(probe, now_ms=now_ms)
    default = default_workspace_dir()
    warnings: list[str] = []
    if facts.problem is not None:
        reason = f"OpenClaw's database at {db} cannot be read to tell ({facts.problem})"
    elif default is not None and os.path.realpath(default) == root:
        reason = "this is OpenClaw's default workspace, but its database holds no rows of it yet"
        warnings.append(
            f"{json_path} waits for OpenClaw's doctor to import it into {db}; dreaming keeps using it until then, "
            "so that nothing recorded meanwhile is lost to OpenClaw"
        )
    else:
        reason = f"OpenClaw's database at {db} holds no rows of this workspace"
    return RecallStoreInfo(
        kind="json", reason=reason, json_path=json_path, json_exists=json_exists, db=str(db),
        user_version=facts.user_version, warnings=tuple(warnings),
    )  # fmt: skip
