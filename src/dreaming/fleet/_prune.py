"""The distributed fleet's retention: once a day, the tick deletes the rows nobody needs any more, in small batches.

A fleet of 100k workspaces adds 100k jobs, night log rows and slot rows a night; without pruning the tables grow
forever. Once a day (:data:`PRUNE_INTERVAL`), the first tick to claim the ``dreaming_retention`` row deletes, older
than ``keep_days`` (``[fleet] keep_days``, written there by ``dreaming fleet init``):

- the fleet's procrastinate jobs that ended (``succeeded``, ``failed``, ``cancelled``, ``aborted``; never ``todo`` or
  ``doing``), with their events (``ON DELETE CASCADE``); a job ended when its newest event happened, as in
  procrastinate's own ``delete_old_jobs``, whose query this adapts: that one reads the database's clock and deletes in
  one statement, this one takes the tick's ``now`` and deletes in batches;
- the night log's finished attempts, except each workspace's newest (``fleet status`` shows it as its last night);
- the night slots, except each workspace's newest: the tick queues a workspace's latest cron slot only when it is
  newer than the workspace's newest row (``enqueue_due``), so the newest is the only row it reads. A cron firing
  less often than ``keep_days`` (monthly, yearly) has a newest slot older than ``keep_days`` that is still its latest:
  pruned, it would be queued again.

Each statement deletes at most ``batch`` rows and commits on its own, so a year of backlog never holds a long lock.
The claim is one ``UPDATE ... RETURNING`` on the one row: two workers ticking at once queue on its row lock, and the
second finds it claimed. A prune cut short (a worker killed) resumes the next day. The budget's entries are not
pruned here: the ledger deletes those that left the window at every change (``llm/ledger_postgres.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

__all__ = ["FINISHED_STATUSES", "PRUNE_BATCH", "PRUNE_INTERVAL", "PruneReport", "prune_old_rows"]

PRUNE_BATCH = 10_000
"""Rows deleted by one statement (one short transaction)."""
PRUNE_INTERVAL = timedelta(hours=24)
"""The fleet prunes at most once in this long."""
FINISHED_STATUSES = ("succeeded", "failed", "cancelled", "aborted")
"""The procrastinate job statuses that never change again unless retried by hand (``todo`` and ``doing`` are live)."""

_CLAIM = (
    "UPDATE dreaming_retention SET pruned_at = %(now)s"
    " WHERE id = 1 AND (pruned_at IS NULL OR pruned_at <= %(now)s - %(interval)s) RETURNING keep_days"
)
_JOBS = (
    "DELETE FROM procrastinate_jobs WHERE id IN ("
    " SELECT j.id FROM procrastinate_jobs j"
    " WHERE j.task_name = ANY(%(tasks)s) AND j.status = ANY(%(statuses)s::procrastinate_job_status[])"
    " AND (SELECT max(e.at) FROM procrastinate_events e WHERE e.job_id = j.id) < %(cutoff)s"
    " ORDER BY j.id LIMIT %(batch)s FOR UPDATE SKIP LOCKED)"
)
_NIGHTS = (
    "DELETE FROM dreaming_night_log WHERE id IN ("
    " SELECT l.id FROM dreaming_night_log l WHERE l.finished_at < %(cutoff)s"
    " AND EXISTS (SELECT 1 FROM dreaming_night_log n"
    "  WHERE n.workspace = l.workspace AND (n.started_at, n.id) > (l.started_at, l.id))"
    " ORDER BY l.id LIMIT %(batch)s)"
)
_SLOTS = (
    "DELETE FROM dreaming_slots s USING ("
    " SELECT o.workspace, o.slot FROM dreaming_slots o WHERE o.slot < %(cutoff)s"
    " AND EXISTS (SELECT 1 FROM dreaming_slots n WHERE n.workspace = o.workspace AND n.slot > o.slot)"
    " LIMIT %(batch)s) d"
    " WHERE s.workspace = d.workspace AND s.slot = d.slot"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class PruneReport:
    """What one daily prune deleted."""

    keep_days: int
    """The retention it applied."""
    cutoff: datetime
    """Rows older than this went: the tick's ``now`` less ``keep_days``."""
    jobs: int = 0
    """Finished jobs deleted (their events with them)."""
    nights: int = 0
    """Night log rows deleted."""
    slots: int = 0
    """Night slot rows deleted."""

    @property
    def deleted(self) -> int:
        """Return how many rows went in all (events not counted)."""
        return self.jobs + self.nights + self.slots

    def summary(self) -> str:
        """Return what went, for the tick's log line."""
        return (
            f"pruned {self.jobs} jobs, {self.nights} night log rows, {self.slots} slots "
            f"(older than {self.keep_days} days)"
        )


async def prune_old_rows(
    conn: psycopg.AsyncConnection[Any], *, now: datetime, tasks: Sequence[str], batch: int = PRUNE_BATCH
) -> PruneReport | None:
    """Claim the daily prune at ``now`` and delete what is older than the retention; None when not due.

    Args:
        conn: an autocommit connection to the fleet's Postgres (each batch commits on its own).
        now: the tick's time; the prune is due when none was claimed in the :data:`PRUNE_INTERVAL` before it.
        tasks: the procrastinate task names whose finished jobs go (the fleet's; another app's jobs stay).
        batch: rows deleted by one statement, at least 1.
    """
    if batch < 1:
        raise ValueError(f"batch = {batch} is not a positive number of rows")
    claimed = await (await conn.execute(_CLAIM, {"now": now, "interval": PRUNE_INTERVAL})).fetchone()
    if claimed is None:
        return None
    keep_days = int(claimed[0])
    cutoff = now - timedelta(days=keep_days)
    params = {"cutoff": cutoff, "batch": batch, "tasks": list(tasks), "statuses": list(FINISHED_STATUSES)}
    return PruneReport(
        keep_days=keep_days, cutoff=cutoff, jobs=await _in_batches(conn, _JOBS, params),
        nights=await _in_batches(conn, _NIGHTS, params), slots=await _in_batches(conn, _SLOTS, params),
    )  # fmt: skip


async def _in_batches(conn: psycopg.AsyncConnection[Any], statement: str, params: dict[str, Any]) -> int:
    """Run ``statement`` (a DELETE of at most ``params["batch"]`` rows) until a run deletes fewer; return the total."""
    total = 0
    while True:
        cur = await conn.execute(statement.encode(), params)
        total += cur.rowcount
        if cur.rowcount < params["batch"]:
            return total
