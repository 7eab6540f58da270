"""One night run by a fleet worker: the advisory lock, the night log, and ``run_night`` with the fleet's seams.

The night is the embedded one (:func:`dreaming.night.run_night`: the same graph, the same files), with three parts
swapped: a session-level Postgres advisory lock on the workspace, taken first, beside its lock file (``flock`` cannot
be trusted on a network filesystem, so the advisory lock keeps the fleet's workers apart; the lock file, taken without
waiting, keeps a ``dreaming run`` or a chat's "dream now" on the workspace's own machine apart from the worker), the
LangGraph checkpoints in Postgres instead of the workspace's SQLite file (a retry on
another machine resumes from them), and a run id derived from the workspace and the night slot (a retried night
resumes under the same id and writes the same bytes). The night's ``now`` is its slot, so a night run late or twice
is the same night; the budget's window still runs on the real clock (money is spent in real time).

Each attempt that holds the lock writes one row of ``dreaming_night_log`` (``running``), and finishes it (``done``,
``failed``); an attempt that finds the slot already done writes ``skipped`` and runs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import psycopg

from dreaming.config import load_config
from dreaming.errors import LockBusyError
from dreaming.llm.ledger import FLEET_DATABASE_ENV
from dreaming.memory import ConsolidationLock, Workspace
from dreaming.memory.research import redact_secrets
from dreaming.night import (
    SaverFactory,
    budget_exhausted_before_any_work,
    night_context,
    run_night,
)

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = [
    "DATABASE_URL_ENV",
    "AdvisoryLock",
    "NightAttempt",
    "NightDone",
    "advisory_key",
    "night_run_id",
    "postgres_checkpointer",
    "run_fleet_night",
    "slot_text",
]

DATABASE_URL_ENV = FLEET_DATABASE_ENV
"""The environment variable naming the fleet's Postgres (it wins over ``[fleet] database_url``); one name with the
gateway's, which spends in the fleet's ledger when it is set."""

Outcome = Literal["done", "failed", "skipped"]


def slot_text(slot: datetime) -> str:
    """Return the canonical text of a night slot (UTC, ISO 8601): what a job carries and a run id hashes."""
    return slot.astimezone(UTC).isoformat()


def night_run_id(workspace: str, slot: datetime) -> str:
    """Return the run id of ``workspace``'s night at ``slot``: the same on every machine and every attempt.

    Sixteen hex digits of the hash keep two workspaces' nights of one slot apart (the id names their checkpoint
    thread in the shared Postgres) even across hundreds of thousands of workspaces.
    """
    at = slot.astimezone(UTC)
    digest = hashlib.sha256(f"{workspace}|{slot_text(at)}".encode()).hexdigest()[:16]
    return f"{at:%Y%m%dT%H%M%SZ}-fleet-{digest}"


def advisory_key(workspace: str) -> int:
    """Return the advisory-lock key of ``workspace`` (its canonical path): 64 bits of its hash, signed."""
    return int.from_bytes(hashlib.sha256(workspace.encode()).digest()[:8], "big", signed=True)


class AdvisoryLock:
    """A session-level Postgres advisory lock on one workspace, held on a dedicated connection for the whole night.

    It dies with its connection: a worker killed mid-night (or cut off from the database) releases it, so no stale
    lock is ever taken over (``took_over`` is always None). Used by :func:`run_fleet_night`; the connection also
    writes the night log.
    """

    took_over: str | None = None

    def __init__(self, url: str, workspace: str) -> None:
        self.url, self.workspace, self.key = url, workspace, advisory_key(workspace)
        self._conn: psycopg.Connection[Any] | None = None

    @property
    def connection(self) -> psycopg.Connection[Any]:
        """Return the lock's connection (autocommit), once acquired."""
        if self._conn is None:
            raise RuntimeError("the advisory lock is not held")
        return self._conn

    def acquire(self) -> None:
        """Take the lock without waiting.

        Raises:
            LockBusyError: another session holds it (another worker is dreaming this workspace).
        """
        if self._conn is not None:
            return
        conn = psycopg.connect(self.url, autocommit=True)
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
        except BaseException:
            conn.close()
            raise
        if not row or not row[0]:
            conn.close()
            raise LockBusyError(Path(self.workspace), "another fleet worker (Postgres advisory lock)")
        self._conn = conn

    def release(self) -> None:
        """Release the lock and close its connection (closing alone would release it too)."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        with contextlib.suppress(psycopg.Error):
            conn.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
        conn.close()


@dataclass(slots=True)
class _Held:
    """The night's locks as ``run_night`` sees them: already taken by the job, released by the job after the log."""

    took_over: str | None = None
    """The stale lock file taken over, if any (a process that died holding it)."""

    def acquire(self) -> None:
        """Do nothing: the job holds the lock."""

    def release(self) -> None:
        """Do nothing: the job releases the lock once the night log is written."""


def postgres_checkpointer(url: str) -> SaverFactory:
    """Return the factory of the night's checkpointer in Postgres (the tables ``dreaming fleet init`` set up)."""

    @contextlib.asynccontextmanager
    async def open_saver() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            yield saver

    return open_saver


@dataclass(frozen=True, kw_only=True, slots=True)
class NightAttempt:
    """Who runs this attempt: the job and the worker, as the night log records them."""

    job_id: int | None = None
    """The procrastinate job."""
    worker_id: int | None = None
    """The procrastinate worker that fetched it."""
    attempt: int = 1
    """This attempt's number (1 for the first)."""
    host: str = ""
    """The machine (``socket.gethostname()`` when empty)."""
    pid: int = 0
    """The worker process (``os.getpid()`` when 0)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class NightDone:
    """How one attempt ended (a failed one raises instead, after logging)."""

    workspace: str
    """The workspace's canonical path."""
    slot: datetime
    """The night slot (UTC)."""
    run_id: str
    """The night's run id."""
    outcome: Outcome
    """``done``, or ``skipped``: the slot was already done by an earlier attempt."""
    exit_code: int
    """What ``dreaming run`` would have exited with: 0, or 4 when the budget refused all the night's model work."""
    resumed: str | None = None
    """The run resumed from its checkpoint, if any."""


_ALREADY_DONE = "SELECT 1 FROM dreaming_night_log WHERE workspace = %s AND slot = %s AND outcome = 'done' LIMIT 1"
_START = (
    "INSERT INTO dreaming_night_log (workspace, slot, run_id, job_id, worker_id, host, pid, attempt, outcome,"
    " exit_code, finished_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
    " CASE WHEN %s = 'running' THEN NULL ELSE clock_timestamp() END) RETURNING id"
)
_FINISH = (
    "UPDATE dreaming_night_log SET outcome = %s, exit_code = %s, detail = %s, finished_at = clock_timestamp()"
    " WHERE id = %s"
)


def run_fleet_night(
    url: str, workspace: str, slot: datetime, *, attempt: NightAttempt, env: Mapping[str, str]
) -> NightDone:
    """Dream ``workspace``'s night of ``slot`` under its advisory lock, logging the attempt (blocking; a thread's).

    Args:
        url: the fleet's Postgres.
        workspace: the workspace's canonical path (as registered: the same on every machine).
        slot: the night slot; the night's ``now``.
        attempt: the job and the worker, for the night log.
        env: the environment the night reads (model keys...); ``DREAMING_DATABASE_URL`` is set to ``url`` so the
            gateway spends from the fleet's global budget when the database holds one.

    Raises:
        LockBusyError: another worker holds the workspace, or a run on this machine holds its lock file; nothing was
            logged or written (the job retries later).
        Exception: whatever ended the night (logged as ``failed`` first).
    """
    slot = slot.astimezone(UTC)
    run_id = night_run_id(workspace, slot)
    ws = Workspace.at(Path(workspace))
    lock = AdvisoryLock(url, workspace)
    lock.acquire()
    file_lock = ConsolidationLock(ws.lock_file, timeout_s=0.0)
    try:
        conn = lock.connection
        host, pid = attempt.host or socket.gethostname(), attempt.pid or os.getpid()
        who = (workspace, slot, run_id, attempt.job_id, attempt.worker_id, host, pid, attempt.attempt)
        if conn.execute(_ALREADY_DONE, (workspace, slot)).fetchone():
            conn.execute(_START, (*who, "skipped", 0, "skipped"))
            return NightDone(workspace=workspace, slot=slot, run_id=run_id, outcome="skipped", exit_code=0)
        if ws.is_workspace:  # else the night fails on it below, and says so in the log
            file_lock.acquire()  # busy: a local run holds the workspace; nothing logged, the job retries
        row = conn.execute(_START, (*who, "running", None, "running")).fetchone()
        assert row is not None
        log_id = row[0]
        try:
            done = _dream(url, ws, workspace, slot, run_id, env, took_over=file_lock.took_over)
        except BaseException as exc:
            detail = redact_secrets(f"{type(exc).__name__}: {exc}")[:500]  # a URL in an error may carry a password
            conn.execute(_FINISH, ("failed", 1, detail, log_id))
            raise
        conn.execute(_FINISH, ("done", done.exit_code, "", log_id))
        return done
    finally:
        file_lock.release()
        lock.release()


def _dream(
    url: str, ws: Workspace, workspace: str, slot: datetime, run_id: str, env: Mapping[str, str], *,
    took_over: str | None,
) -> NightDone:  # fmt: skip
    ws.require()
    config = load_config(ws.config_file)
    complete = night_context(env={**env, DATABASE_URL_ENV: url})
    outcome = asyncio.run(
        run_night(
            ws, config, now=slot, trigger="run", make_context=complete, lock=_Held(took_over),
            checkpointer=postgres_checkpointer(url), run_id=run_id,
        )
    )  # fmt: skip
    code = 4 if budget_exhausted_before_any_work(outcome.state) else 0
    return NightDone(
        workspace=workspace, slot=slot, run_id=outcome.run_id, outcome="done", exit_code=code, resumed=outcome.resumed
    )
