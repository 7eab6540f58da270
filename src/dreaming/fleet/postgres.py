"""The distributed fleet: workspaces registered in Postgres, their nights run as jobs by ``dreaming worker``s.

Any number of worker processes, on any number of machines, take the nights from one procrastinate queue.

What lives where (every table unqualified, in the ``search_path``'s first schema):

- ``dreaming fleet init`` (:func:`init_fleet`) applies the fleet's migrations (``_schema.py``), procrastinate's
  schema and LangGraph's checkpoint tables, registers the fleet file's workspaces in ``dreaming_workspaces`` (path,
  cron, timezone: a workspace without its own in the fleet file gets its dreaming.toml's, read at init) and writes its
  ``[budget]`` as the ``dreaming_budget`` row (none: the row is deleted and each workspace keeps its own ledger) and
  ``[fleet] keep_days`` in the ``dreaming_retention`` row. Running it twice changes nothing.
- A minute tick (the procrastinate periodic task ``dreaming_tick``, deferred once per minute across all workers)
  runs :func:`tick`: it enqueues each registered workspace's latest cron slot, read in its timezone, once (the
  ``(workspace, slot)`` row of ``dreaming_slots`` is inserted in the same transaction as the job), never a slot
  before the workspace was registered; it retries the jobs of workers whose heartbeat stopped; and once a day it
  prunes the finished jobs, night log rows and slots older than ``keep_days`` (``_prune.py``).
- The job ``dream_night(workspace, slot)`` (queueing lock and lock: the workspace's path; retried with exponential
  backoff) runs the night in a thread of the worker (``_night.py``): under the workspace's Postgres advisory lock,
  with its checkpoints in Postgres and a run id derived from the workspace and the slot.
- ``dreaming fleet enqueue`` (:func:`enqueue_now`) queues a night now for every registered workspace not already
  queued or running; ``dreaming fleet status`` (:func:`fleet_status`) reads the queue, the night log and the global
  budget's tables (its done and failed counts cover the retention period).

One night at a time per worker process (procrastinate concurrency 1); scale by running more processes. Workspace
paths must be the same on every machine (a shared filesystem).
"""

from __future__ import annotations

import logging
import math
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import psycopg
from croniter import croniter
from procrastinate import App, JobContext, PsycopgConnector, RetryStrategy, exceptions, tasks, worker
from procrastinate.schema import SchemaManager

from dreaming.config import load_config, validate_cron, zone_info
from dreaming.errors import ConfigError
from dreaming.fleet._local import FleetConfig
from dreaming.fleet._night import (
    DATABASE_URL_ENV,
    AdvisoryLock,
    NightAttempt,
    NightDone,
    advisory_key,
    night_run_id,
    postgres_checkpointer,
    run_fleet_night,
    slot_text,
)
from dreaming.fleet._prune import PRUNE_BATCH, PruneReport, prune_old_rows
from dreaming.fleet._schema import SCHEMA_VERSION, apply_migrations, schema_version
from dreaming.memory import Workspace

__all__ = [
    "DATABASE_URL_ENV",
    "DEFAULT_HEARTBEAT_SECONDS",
    "DEFAULT_STALLED_AFTER_SECONDS",
    "NIGHT_RETRY",
    "NIGHT_TASK",
    "PRUNE_BATCH",
    "TICK_TASK",
    "AdvisoryLock",
    "EnqueueReport",
    "FleetInit",
    "FleetQueue",
    "NightAttempt",
    "NightDone",
    "PruneReport",
    "TickReport",
    "WorkerSettings",
    "advisory_key",
    "database_url",
    "enqueue_due",
    "enqueue_now",
    "fleet_queue",
    "fleet_status",
    "init_fleet",
    "latest_slot",
    "night_run_id",
    "postgres_checkpointer",
    "prune_old_rows",
    "require_schema",
    "retry_stalled",
    "run_fleet_night",
    "run_worker",
    "tick",
]

_log = logging.getLogger(__name__)

NIGHT_TASK = "dream_night"
TICK_TASK = "dreaming_tick"
DEFAULT_HEARTBEAT_SECONDS = 10.0
DEFAULT_STALLED_AFTER_SECONDS = 60.0
NIGHT_RETRY = RetryStrategy(max_attempts=4, exponential_wait=4)
"""A failed or busy night is retried 4 times (5 attempts in all), after 4, 16, 64 and 256 seconds.

procrastinate retries while the job's earlier attempts are fewer than ``max_attempts``, after ``4 ** (attempts + 1)``
seconds; a stalled worker's job put back by the tick counts as an attempt too."""
_TICK_LOCK = "dreaming-tick"  # the tick's queueing lock: one tick waiting at most, however long the workers are busy
_TICK_PRIORITY = 100  # a free worker ticks before it starts a night
_INIT_LOCK_KEY = 0x647265616D696E69  # "dreamini": serialises `dreaming fleet init`s (a session advisory lock)


def database_url(fleet: FleetConfig | None, env: Mapping[str, str]) -> str:
    """Return the fleet's Postgres URL: ``DREAMING_DATABASE_URL``, else the fleet file's ``[fleet] database_url``.

    Raises:
        ConfigError: neither is set.
    """
    url = env.get(DATABASE_URL_ENV, "").strip() or (fleet.database_url if fleet is not None else None)
    if not url:
        raise ConfigError(f"no fleet database: set {DATABASE_URL_ENV} or [fleet] database_url in the fleet file")
    return url


def require_schema(conn: psycopg.Connection[Any]) -> None:
    """Refuse a database that ``dreaming fleet init`` has not set up (or set up with an older ``dreaming``).

    Raises:
        ConfigError: the schema is missing or older than this code.
    """
    version = schema_version(conn)
    if version < SCHEMA_VERSION:
        raise ConfigError(f"the fleet database is at schema version {version}: run `dreaming fleet init` first")


# Settings


@dataclass(frozen=True, kw_only=True, slots=True)
class WorkerSettings:
    """How a worker runs: its heartbeat, when another worker counts as dead, and when it stops."""

    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS
    """Seconds between the worker's heartbeats in ``procrastinate_workers``."""
    stalled_after_seconds: float = DEFAULT_STALLED_AFTER_SECONDS
    """A worker silent this long is dead: the tick retries its job (a few heartbeats, so a slow one is not)."""
    tick_seconds: int = 60
    """How often the tick runs (a divisor of 60, or 60: every minute). Shorter only speeds up the stalled retries."""
    tick: bool = True
    """Run the tick (False: only the jobs already queued; what ``--once`` does)."""
    once: bool = False
    """Stop when the queue is empty instead of waiting for more."""
    max_nights: int | None = None
    """Stop after this many night jobs, busy or failed attempts included (None: never)."""

    def __post_init__(self) -> None:
        """Refuse settings that would make live workers look dead, or a tick procrastinate cannot schedule."""
        for name in ("heartbeat_seconds", "stalled_after_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ConfigError(f"{name} = {value!r} is not a positive number of seconds")
        if self.stalled_after_seconds <= self.heartbeat_seconds:
            raise ConfigError(
                f"stalled_after_seconds ({self.stalled_after_seconds:g}) must exceed heartbeat_seconds "
                f"({self.heartbeat_seconds:g}): a live worker would be taken for dead"
            )
        if self.tick_seconds < 1 or 60 % self.tick_seconds:
            raise ConfigError(f"tick_seconds = {self.tick_seconds} does not divide a minute")
        if self.max_nights is not None and self.max_nights < 1:
            raise ConfigError(f"max_nights = {self.max_nights} is not a positive integer")

    @property
    def tick_cron(self) -> str:
        """Return the tick's cron for procrastinate (a sixth field for seconds when more often than each minute)."""
        return "* * * * *" if self.tick_seconds == 60 else f"* * * * * */{self.tick_seconds}"


# The registry

BudgetChange = Literal["set", "updated", "unchanged", "removed", "none"]


@dataclass(frozen=True, kw_only=True, slots=True)
class FleetInit:
    """What ``dreaming fleet init`` changed (nothing, the second time)."""

    migrations: list[int]
    """The fleet migrations applied."""
    queue_schema: bool
    """True when procrastinate's schema was created."""
    registered: list[str]
    """Workspaces added to the registry."""
    updated: list[str]
    """Workspaces whose cron or timezone changed."""
    unregistered: list[str]
    """Workspaces no longer in the fleet file, removed from the registry (their night log stays)."""
    budget: BudgetChange
    """What happened to the ``dreaming_budget`` row (``none``: there is none, nor any in the fleet file)."""
    keep_days: int | None
    """The retention in days the ``dreaming_retention`` row now holds: the fleet file's, or as it was without one
    (None: no row, so no prune, only after someone deleted it by hand)."""
    retention_changed: bool = False
    """True when ``keep_days`` was changed by this init."""

    @property
    def changed(self) -> bool:
        """Return True when anything changed."""
        return bool(
            self.migrations
            or self.queue_schema
            or self.registered
            or self.updated
            or self.unregistered
            or self.retention_changed
        ) or self.budget in ("set", "updated", "removed")

    def to_json(self) -> dict[str, Any]:
        """Return what ``dreaming fleet init --json`` prints."""
        return {
            "migrations": self.migrations, "queue_schema": self.queue_schema, "registered": self.registered,
            "updated": self.updated, "unregistered": self.unregistered, "budget": self.budget,
            "keep_days": self.keep_days, "changed": self.changed,
        }  # fmt: skip


def _schedule(path: Path, cron: str | None, timezone: str | None) -> tuple[str, str]:
    config = load_config(Workspace.at(path).config_file) if cron is None or timezone is None else None
    expression = cron if cron is not None else config.schedule.cron if config is not None else ""
    zone = timezone if timezone is not None else config.timezone if config is not None else ""
    zone_info(zone)
    return validate_cron(expression), zone


def init_fleet(url: str, fleet: FleetConfig | None, *, now: datetime) -> FleetInit:
    """Set up the fleet's database and register ``fleet``'s workspaces and budget; idempotent.

    Serialised across machines by a session advisory lock, so two inits started together do the work once.

    Args:
        url: the fleet's Postgres.
        fleet: the fleet file, read (``load_fleet(path, distributed=True)``); None sets up the tables only, leaving
            the registry and the budget as they are.
        now: when the registration happens: a workspace's nights start with the first cron slot from then on.

    Raises:
        ConfigError: a workspace's cron or timezone is invalid, or the database is from a newer ``dreaming``.
    """
    from langgraph.checkpoint.postgres import PostgresSaver

    schedules = {str(m.path): _schedule(m.path, m.cron, m.timezone) for m in fleet.members} if fleet else {}
    with psycopg.connect(url, autocommit=True) as conn:
        # Polled, not awaited in pg_advisory_lock: a waiting statement holds a snapshot, and LangGraph's setup (on its
        # own connection) creates its indexes CONCURRENTLY, which waits for every older snapshot: a deadlock.
        while not _fetch_flag(conn, "SELECT pg_try_advisory_lock(%s)", _INIT_LOCK_KEY):
            time.sleep(0.05)
        try:
            migrations = apply_migrations(conn)
            queue_schema = False
            if not _fetch_flag(conn, "SELECT to_regclass('procrastinate_jobs') IS NOT NULL"):
                with conn.transaction():
                    conn.execute(SchemaManager.get_schema().encode())
                queue_schema = True
            with PostgresSaver.from_conn_string(url) as saver:
                saver.setup()  # idempotent: LangGraph records its own migrations
            registered: list[str] = []
            updated: list[str] = []
            unregistered: list[str] = []
            budget: BudgetChange = "unchanged"
            row = conn.execute("SELECT keep_days FROM dreaming_retention WHERE id = 1").fetchone()
            keep_days, retention_changed = (int(row[0]) if row else None), False
            if fleet is not None:
                with conn.transaction():
                    registered, updated, unregistered = _sync_registry(conn, schedules, now)
                    budget = _sync_budget(conn, fleet)
                    if fleet.keep_days != keep_days:
                        conn.execute(
                            "INSERT INTO dreaming_retention (id, keep_days) VALUES (1, %s)"
                            " ON CONFLICT (id) DO UPDATE SET keep_days = EXCLUDED.keep_days",
                            (fleet.keep_days,),
                        )
                        keep_days, retention_changed = fleet.keep_days, True
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_INIT_LOCK_KEY,))
    return FleetInit(
        migrations=migrations, queue_schema=queue_schema, registered=registered, updated=updated,
        unregistered=unregistered, budget=budget, keep_days=keep_days, retention_changed=retention_changed,
    )  # fmt: skip


def _sync_registry(
    conn: psycopg.Connection[Any], schedules: Mapping[str, tuple[str, str]], now: datetime
) -> tuple[list[str], list[str], list[str]]:
    known = {
        str(r[0]): (str(r[1]), str(r[2])) for r in conn.execute("SELECT path, cron, timezone FROM dreaming_workspaces")
    }
    registered, updated = [], []
    for path, (cron, zone) in schedules.items():
        if path not in known:
            conn.execute(
                "INSERT INTO dreaming_workspaces (path, cron, timezone, registered_at, updated_at)"
                " VALUES (%s, %s, %s, %s, %s)",
                (path, cron, zone, now, now),
            )
            registered.append(path)
        elif known[path] != (cron, zone):
            conn.execute(
                "UPDATE dreaming_workspaces SET cron = %s, timezone = %s, updated_at = %s WHERE path = %s",
                (cron, zone, now, path),
            )
            updated.append(path)
    unregistered = sorted(set(known) - set(schedules))
    if unregistered:
        conn.execute("DELETE FROM dreaming_workspaces WHERE path = ANY(%s)", (unregistered,))
    return registered, updated, unregistered


def _sync_budget(
    conn: psycopg.Connection[Any], fleet: FleetConfig
) -> Literal["set", "updated", "unchanged", "removed", "none"]:
    row = conn.execute("SELECT max_cost_usd, window_minutes FROM dreaming_budget WHERE id = 1").fetchone()
    if fleet.budget is None:
        if row is None:
            return "none"
        conn.execute("DELETE FROM dreaming_budget WHERE id = 1")
        return "removed"
    wanted = (fleet.budget.max_cost_usd, fleet.budget.window_minutes)
    if row is not None and (float(row[0]), float(row[1])) == wanted:
        return "unchanged"
    conn.execute(
        "INSERT INTO dreaming_budget (id, max_cost_usd, window_minutes) VALUES (1, %s, %s)"
        " ON CONFLICT (id) DO UPDATE"
        " SET max_cost_usd = EXCLUDED.max_cost_usd, window_minutes = EXCLUDED.window_minutes",
        wanted,
    )
    return "set" if row is None else "updated"


def _fetch_flag(conn: psycopg.Connection[Any], query: str, *params: Any) -> bool:
    row = conn.execute(query.encode(), params).fetchone()
    return bool(row and row[0])


def latest_slot(cron: str, timezone: str, now: datetime) -> datetime:
    """Return the latest instant at or before ``now`` at which ``cron``, read in ``timezone``, fires (in UTC)."""
    local = now.astimezone(zone_info(timezone)).replace(second=0, microsecond=0) + timedelta(seconds=1)
    fire: datetime = croniter(cron, local).get_prev(datetime)
    return fire.astimezone(UTC)


# The queue


@dataclass(frozen=True, kw_only=True, slots=True)
class FleetQueue:
    """The fleet's job queue: a procrastinate app over the fleet's Postgres, with its two tasks."""

    url: str
    """The fleet's Postgres."""
    app: App
    """The procrastinate app (open it with ``async with app.open_async()``)."""
    night: tasks.Task[Any, Any, Any]
    """``dream_night(workspace, slot)``."""
    settings: WorkerSettings
    """How the worker using it runs."""


def fleet_queue(
    url: str, *, settings: WorkerSettings | None = None, env: Mapping[str, str] | None = None
) -> FleetQueue:
    """Return the fleet's procrastinate app over a psycopg connector to ``url``, with its tasks.

    Args:
        url: the fleet's Postgres.
        settings: the worker's settings (the tick's stalled timeout); defaults otherwise.
        env: the environment the nights read (model keys...); ``os.environ`` at each night by default.
    """
    settings = settings or WorkerSettings()
    # A small pool: a worker runs one job at a time; the night opens its own connections (lock, checkpoints, ledger).
    app = App(connector=PsycopgConnector(conninfo=url, min_size=1, max_size=4))

    @app.task(name=NIGHT_TASK, pass_context=True, retry=NIGHT_RETRY)
    def dream_night(context: JobContext, workspace: str, slot: str) -> str:
        job = context.job
        attempt = NightAttempt(job_id=job.id, worker_id=job.worker_id, attempt=job.attempts + 1)
        done = run_fleet_night(
            url, workspace, datetime.fromisoformat(slot), attempt=attempt, env=os.environ if env is None else env
        )
        return f"{done.outcome} {done.run_id} exit {done.exit_code}"

    queue = FleetQueue(url=url, app=app, night=dream_night, settings=settings)

    async def dreaming_tick(timestamp: int) -> str:
        report = await tick(queue, now=datetime.fromtimestamp(timestamp, UTC))
        return report.summary()

    tick_task = app.task(name=TICK_TASK, queueing_lock=_TICK_LOCK, priority=_TICK_PRIORITY)(dreaming_tick)
    if settings.tick:
        app.periodic(cron=settings.tick_cron, periodic_id="tick")(tick_task)
    return queue


@dataclass(frozen=True, kw_only=True, slots=True)
class TickReport:
    """What one tick did."""

    enqueued: list[tuple[str, datetime]] = field(default_factory=list)
    """``(workspace, slot)`` nights queued."""
    waiting: list[str] = field(default_factory=list)
    """Workspaces whose due night waits: their previous night is still queued (retried at the next tick)."""
    retried: list[int] = field(default_factory=list)
    """Jobs of dead workers put back in the queue."""
    pruned: PruneReport | None = None
    """What the daily prune deleted, when this tick ran it (None: another tick ran it in the last 24 hours)."""

    def summary(self) -> str:
        """Return one line for the logs (the prune named when it deleted something)."""
        line = f"{len(self.enqueued)} enqueued, {len(self.waiting)} waiting, {len(self.retried)} stalled retried"
        if self.pruned is not None and self.pruned.deleted:
            line += f"; {self.pruned.summary()}"
        return line


@dataclass(frozen=True, kw_only=True, slots=True)
class EnqueueReport:
    """What ``dreaming fleet enqueue`` did."""

    slot: datetime
    """The nights' slot (their ``now``)."""
    enqueued: list[str] = field(default_factory=list)
    """Workspaces whose night was queued."""
    skipped: list[str] = field(default_factory=list)
    """Workspaces already queued or dreaming, or already enqueued for this slot."""

    def to_json(self) -> dict[str, Any]:
        """Return what ``dreaming fleet enqueue --json`` prints."""
        return {"slot": slot_text(self.slot), "enqueued": self.enqueued, "skipped": self.skipped}


async def _connect(url: str) -> psycopg.AsyncConnection[Any]:
    return await psycopg.AsyncConnection.connect(url, autocommit=True)


async def _enqueue(
    conn: psycopg.AsyncConnection[Any], queue: FleetQueue, workspace: str, slot: datetime
) -> Literal["enqueued", "already", "waiting"]:
    """Insert the ``(workspace, slot)`` row and defer its job in one transaction (exactly once per slot)."""
    try:
        async with conn.transaction():
            cur = await conn.execute(
                "INSERT INTO dreaming_slots (workspace, slot) VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING 1",
                (workspace, slot),
            )
            if await cur.fetchone() is None:
                return "already"
            deferrer = queue.night.configure(lock=workspace, queueing_lock=workspace, connection=conn)
            job_id = await deferrer.defer_async(workspace=workspace, slot=slot_text(slot))
            await conn.execute(
                "UPDATE dreaming_slots SET job_id = %s WHERE workspace = %s AND slot = %s", (job_id, workspace, slot)
            )
    except exceptions.AlreadyEnqueued:
        return "waiting"
    return "enqueued"


async def enqueue_due(queue: FleetQueue, *, now: datetime) -> TickReport:
    """Queue each registered workspace's latest cron slot at or before ``now`` (in its timezone) not yet queued.

    A slot before the workspace's registration is never queued (registering does not replay past nights); a slot
    older than one already queued is not either. A workspace whose previous night still waits in the queue (its
    queueing lock) is left for the next tick.
    """
    report = TickReport()
    async with await _connect(queue.url) as conn:
        rows = await (
            await conn.execute(
                "SELECT w.path, w.cron, w.timezone, w.registered_at,"
                " (SELECT max(s.slot) FROM dreaming_slots s WHERE s.workspace = w.path)"
                " FROM dreaming_workspaces w ORDER BY w.path"
            )
        ).fetchall()
        slots: dict[tuple[str, str], datetime] = {}
        for path, cron, zone, registered_at, last in rows:
            key = (cron, zone)
            if key not in slots:
                slots[key] = latest_slot(cron, zone, now)
            slot = slots[key]
            if slot < registered_at.replace(second=0, microsecond=0) or (last is not None and slot <= last):
                continue
            result = await _enqueue(conn, queue, path, slot)
            if result == "enqueued":
                report.enqueued.append((path, slot))
            elif result == "waiting":
                report.waiting.append(path)
    return report


async def retry_stalled(queue: FleetQueue) -> list[int]:
    """Put the jobs of workers silent for ``stalled_after_seconds`` back in the queue; mark their attempts stalled.

    The retry resumes the night from its Postgres checkpoint. A worker that was only slow, not dead, still holds the
    workspace's advisory lock: the retry then finds it busy and waits (it never runs the night twice at once).
    """
    manager = queue.app.job_manager
    stalled = await manager.get_stalled_jobs(seconds_since_heartbeat=queue.settings.stalled_after_seconds)
    retried: list[int] = []
    for job in stalled:
        try:
            await manager.retry_job(job)
        except exceptions.ConnectorException:  # finished or retried by someone else meanwhile
            continue
        assert job.id is not None
        retried.append(job.id)
    if retried:
        async with await _connect(queue.url) as conn:
            await conn.execute(
                "UPDATE dreaming_night_log SET outcome = 'stalled', finished_at = clock_timestamp(),"
                " detail = 'its worker stopped sending heartbeats; the job was retried'"
                " WHERE job_id = ANY(%s) AND finished_at IS NULL",
                (retried,),
            )
        _log.warning("retried %d jobs of stalled workers: %s", len(retried), retried)
    return retried


async def tick(queue: FleetQueue, *, now: datetime, prune_batch: int = PRUNE_BATCH) -> TickReport:
    """Run the minute tick at ``now``: queue the due nights, retry the jobs of dead workers, prune once a day.

    Args:
        queue: the fleet's queue.
        now: the tick's minute; the nights' slots and the prune's retention are read from it.
        prune_batch: rows deleted by one statement of the prune (see :func:`prune_old_rows`).
    """
    report = await enqueue_due(queue, now=now)
    report.retried.extend(await retry_stalled(queue))
    async with await _connect(queue.url) as conn:
        pruned = await prune_old_rows(conn, now=now, tasks=(NIGHT_TASK, TICK_TASK), batch=prune_batch)
    if pruned is not None:
        report = replace(report, pruned=pruned)
    if report.enqueued or report.retried or (pruned is not None and pruned.deleted):
        _log.info("tick %s: %s", now.isoformat(), report.summary())
    return report


async def enqueue_now(queue: FleetQueue, *, now: datetime) -> EnqueueReport:
    """Queue a night at ``now`` (to the minute) for every registered workspace not already queued or dreaming."""
    slot = now.astimezone(UTC).replace(second=0, microsecond=0)
    report = EnqueueReport(slot=slot)
    async with await _connect(queue.url) as conn:
        paths = [
            r[0] for r in await (await conn.execute("SELECT path FROM dreaming_workspaces ORDER BY path")).fetchall()
        ]
        busy = {
            r[0]
            for r in await (
                await conn.execute(
                    "SELECT DISTINCT lock FROM procrastinate_jobs WHERE task_name = %s AND status IN ('todo', 'doing')",
                    (NIGHT_TASK,),
                )
            ).fetchall()
        }
        for path in paths:
            if path in busy or await _enqueue(conn, queue, path, slot) != "enqueued":
                report.skipped.append(path)
            else:
                report.enqueued.append(path)
    return report


# The worker


async def run_worker(url: str, *, settings: WorkerSettings, env: Mapping[str, str] | None = None,
                     install_signal_handlers: bool = True) -> int:  # fmt: skip
    """Run nights (and the tick), one at a time, until stopped; return how many nights this worker ran.

    SIGTERM or SIGINT: the running night finishes, then the worker exits (procrastinate's graceful stop).

    Raises:
        ConfigError: the database has not been set up by ``dreaming fleet init``.
    """
    with psycopg.connect(url) as conn:
        require_schema(conn)
    queue = fleet_queue(url, settings=settings, env=env)
    nights = 0

    async def count_nights(call_next: Callable[[], Awaitable[Any]], context: JobContext, running: worker.Worker) -> Any:
        nonlocal nights
        try:
            return await call_next()
        finally:
            if context.job.task_name == NIGHT_TASK:
                nights += 1
                if settings.max_nights is not None and nights >= settings.max_nights:
                    running.stop()  # type: ignore[no-untyped-call]  # procrastinate leaves it untyped

    async with queue.app.open_async():
        await queue.app.run_worker_async(
            name=f"{socket.gethostname()}:{os.getpid()}",
            concurrency=1,
            wait=not settings.once,
            update_heartbeat_interval=settings.heartbeat_seconds,
            stalled_worker_timeout=settings.stalled_after_seconds,
            fetch_job_polling_interval=min(5.0, settings.heartbeat_seconds),
            abort_job_polling_interval=max(5.0, settings.heartbeat_seconds),
            worker_middleware=[count_nights],
            install_signal_handlers=install_signal_handlers,
        )
    return nights


# The status


def fleet_status(url: str, *, now: datetime) -> dict[str, Any]:
    """Return what ``dreaming fleet status`` shows (read only): per workspace its jobs and last night; the budget.

    Per workspace: ``queued`` (jobs waiting, retries included), ``running``, ``failed`` (jobs that gave up) and
    ``done`` (jobs that succeeded: both over the retention period, ``keep_days``, as older jobs are pruned), and the
    newest attempt of the night log (kept whatever its age). The global budget (from the ledger's tables): cap,
    window, the window's spend (reservations included) and the part of it still reserved. ``keep_days``: the
    retention (None: none is stored, so nothing is pruned).

    Raises:
        ConfigError: the database has not been set up by ``dreaming fleet init``.
    """
    with psycopg.connect(url) as conn:
        conn.read_only = True
        require_schema(conn)
        counts = conn.execute(
            "SELECT w.path, w.cron, w.timezone,"
            " count(j.id) FILTER (WHERE j.status = 'todo'), count(j.id) FILTER (WHERE j.status = 'doing'),"
            " count(j.id) FILTER (WHERE j.status = 'failed'), count(j.id) FILTER (WHERE j.status = 'succeeded')"
            " FROM dreaming_workspaces w LEFT JOIN procrastinate_jobs j"
            " ON j.task_name = %s AND j.args->>'workspace' = w.path"
            " GROUP BY w.path, w.cron, w.timezone ORDER BY w.path",
            (NIGHT_TASK,),
        ).fetchall()
        last = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT DISTINCT ON (workspace) workspace, slot, outcome, exit_code, run_id, attempt, host, pid,"
                " worker_id, started_at, finished_at, detail FROM dreaming_night_log"
                " ORDER BY workspace, started_at DESC, id DESC"
            ).fetchall()
        }
        retention = conn.execute("SELECT keep_days FROM dreaming_retention WHERE id = 1").fetchone()
        budget_row = conn.execute("SELECT max_cost_usd, window_minutes FROM dreaming_budget WHERE id = 1").fetchone()
        budget: dict[str, Any] | None = None
        if budget_row is not None:
            cap, window = float(budget_row[0]), float(budget_row[1])
            spend = conn.execute(
                "SELECT coalesce(sum((entry->>'cost_usd')::float8), 0),"
                " coalesce(sum((entry->>'cost_usd')::float8) FILTER (WHERE reserved), 0)"
                " FROM dreaming_budget_entries WHERE at > %s",
                (now - timedelta(minutes=window),),
            ).fetchone()
            assert spend is not None
            budget = {"cap_usd": cap, "window_minutes": window, "window_spend_usd": float(spend[0]),
                      "reserved_usd": float(spend[1])}  # fmt: skip
    keys = ("slot", "outcome", "exit_code", "run_id", "attempt", "host", "pid", "worker_id", "started_at",
            "finished_at", "detail")  # fmt: skip
    workspaces = []
    for path, cron, zone, queued, running, failed, done in counts:
        night = dict(zip(keys, last[path], strict=True)) if path in last else None
        if night is not None:
            for key in ("slot", "started_at", "finished_at"):
                night[key] = night[key].isoformat() if night[key] is not None else None
        workspaces.append({
            "workspace": path, "cron": cron, "timezone": zone, "queued": queued, "running": running,
            "failed": failed, "done": done, "last_night": night,
        })  # fmt: skip
    keep_days = int(retention[0]) if retention is not None else None
    return {"workspaces": workspaces, "budget": budget, "keep_days": keep_days}
