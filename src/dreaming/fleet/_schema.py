"""The distributed fleet's tables in Postgres: numbered migrations, applied once each, in order, idempotently.

Every object is created unqualified, so it lands in the first schema of the connection's ``search_path`` (a fleet
may live in a schema of its own: ``?options=-csearch_path%3Dmyfleet`` in the URL; tests use one schema each).
``dreaming_schema_version`` records what was applied. :func:`apply_migrations` runs in one transaction under a
transaction-scoped advisory lock, so workers and ``dreaming fleet init`` started together apply each migration once;
a database migrated by a newer ``dreaming`` (a version this code does not know) is refused, never downgraded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dreaming.errors import ConfigError

if TYPE_CHECKING:
    import psycopg

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "apply_migrations", "schema_version"]

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "the fleet's budget ledger",
        """
        CREATE TABLE dreaming_budget (
            id smallint PRIMARY KEY CHECK (id = 1),
            max_cost_usd double precision NOT NULL CHECK (max_cost_usd >= 0 AND max_cost_usd < 'Infinity'),
            window_minutes double precision NOT NULL CHECK (window_minutes > 0 AND window_minutes < 'Infinity')
        );
        CREATE TABLE dreaming_budget_entries (
            id text PRIMARY KEY,
            reserved boolean NOT NULL,
            at timestamptz NOT NULL,
            cost_usd double precision NOT NULL CHECK (cost_usd >= 0 AND cost_usd < 'Infinity'),
            entry jsonb NOT NULL
        );
        CREATE INDEX dreaming_budget_entries_at ON dreaming_budget_entries (at) INCLUDE (cost_usd, reserved);
        """,
    ),
    (
        2,
        "the workspace registry, the enqueued night slots and the night log",
        """
        CREATE TABLE dreaming_workspaces (
            path text PRIMARY KEY,
            cron text NOT NULL,
            timezone text NOT NULL,
            registered_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL
        );
        CREATE TABLE dreaming_slots (
            workspace text NOT NULL,
            slot timestamptz NOT NULL,
            job_id bigint,
            enqueued_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (workspace, slot)
        );
        CREATE TABLE dreaming_night_log (
            id bigserial PRIMARY KEY,
            workspace text NOT NULL,
            slot timestamptz NOT NULL,
            run_id text NOT NULL,
            job_id bigint,
            worker_id bigint,
            host text NOT NULL,
            pid integer NOT NULL,
            attempt integer NOT NULL,
            started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            finished_at timestamptz,
            outcome text NOT NULL
                CHECK (outcome IN ('running', 'done', 'failed', 'stalled', 'skipped')),
            exit_code integer,
            detail text NOT NULL DEFAULT ''
        );
        CREATE INDEX dreaming_night_log_workspace ON dreaming_night_log (workspace, slot);
        CREATE INDEX dreaming_night_log_job ON dreaming_night_log (job_id) WHERE finished_at IS NULL;
        """,
    ),
    (
        3,
        "the retention of finished jobs, the night log and the slots",
        """
        CREATE TABLE dreaming_retention (
            id smallint PRIMARY KEY CHECK (id = 1),
            keep_days integer NOT NULL CHECK (keep_days >= 2),
            pruned_at timestamptz
        );
        INSERT INTO dreaming_retention (id, keep_days) VALUES (1, 30);
        """,
    ),
)
"""``(version, what it adds, SQL)``, in order. Never edit a released migration: add the next one.

Migration 1 is :mod:`dreaming.llm.ledger_postgres`'s: ``dreaming_budget`` is the fleet's cap and window (one row),
``dreaming_budget_entries`` the window's entries (the whole entry as ``entry``; ``reserved``, ``at`` and ``cost_usd``
beside it so that the window's spend is summed in the database, from the index alone). ``< 'Infinity'`` also
refuses NaN, which Postgres sorts above every number.

Migration 3's ``dreaming_retention`` is one row: ``keep_days`` (``dreaming fleet init`` writes the fleet file's
``[fleet] keep_days``; 30 until then) and ``pruned_at``, the ``now`` of the tick that last claimed the daily prune.
"""

SCHEMA_VERSION = MIGRATIONS[-1][0]
_LOCK_KEY = 0x647265616D696E67  # "dreaming": serialises concurrent migrations (pg_advisory_xact_lock)


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """Return the newest migration applied to the connection's schema (0 when none)."""
    exists = conn.execute("SELECT to_regclass('dreaming_schema_version') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM dreaming_schema_version").fetchone()
    return int(row[0]) if row else 0


def apply_migrations(conn: psycopg.Connection[Any]) -> list[int]:
    """Apply the migrations not yet applied, in one transaction; return their versions (empty when up to date).

    Raises:
        ConfigError: the database was migrated by a newer ``dreaming`` than this one.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS dreaming_schema_version ("
            " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {int(row[0]) for row in conn.execute("SELECT version FROM dreaming_schema_version")}
        if done and max(done) > SCHEMA_VERSION:
            raise ConfigError(
                f"the fleet database is at schema version {max(done)}, newer than this dreaming knows "
                f"({SCHEMA_VERSION}): upgrade dreaming on this machine"
            )
        applied = []
        for version, name, sql in MIGRATIONS:
            if version in done:
                continue
            conn.execute(sql.encode())
            conn.execute("INSERT INTO dreaming_schema_version (version, name) VALUES (%s, %s)", (version, name))
            applied.append(version)
    return applied
