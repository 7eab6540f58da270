"""The minute tick: each workspace's cron slot, read in its timezone, is queued once, whoever ticks and how often."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from procrastinate.periodic import PeriodicDeferrer

from dreaming.fleet.postgres import (
    NIGHT_TASK,
    TICK_TASK,
    EnqueueReport,
    FleetQueue,
    TickReport,
    WorkerSettings,
    enqueue_now,
    fleet_queue,
    latest_slot,
    tick,
)
from dreaming.memory import Workspace, init_workspace
from tests.fleet._fleet import init, rows, run, write_fleet

T = TypeVar("T")
REGISTERED = datetime(2026, 9, 1, 0, 0, tzinfo=UTC)
FLEET = """
[[workspaces]]
path = "paris"
cron = "0 3 * * *"
timezone = "Europe/Paris"
[[workspaces]]
path = "newyork"
cron = "0 3 * * *"
timezone = "America/New_York"
"""


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _fleet(tmp_path: Path, url: str) -> tuple[str, str]:
    for name in ("paris", "newyork"):
        init_workspace(Workspace.at(tmp_path / name))
    init(url, write_fleet(tmp_path, url, FLEET), REGISTERED)
    return str(tmp_path / "paris"), str(tmp_path / "newyork")


def _with_queues(url: str, count: int, body: Callable[..., Awaitable[T]]) -> T:
    """Run ``body(*queues)`` with ``count`` open fleet queues (as many "workers")."""

    async def main() -> T:
        queues = [fleet_queue(url, settings=WorkerSettings(heartbeat_seconds=1, stalled_after_seconds=5))
                  for _ in range(count)]  # fmt: skip
        for queue in queues:
            await queue.app.open_async()
        try:
            return await body(*queues)
        finally:
            for queue in queues:
                await queue.app.close_async()

    return asyncio.run(main())


def _ticks(url: str, *moments: datetime) -> list[TickReport]:
    async def body(queue: FleetQueue) -> list[TickReport]:
        return [await tick(queue, now=moment) for moment in moments]

    return _with_queues(url, 1, body)


def _jobs(url: str) -> list[tuple[object, ...]]:
    return rows(
        url,
        "SELECT args->>'workspace', args->>'slot', lock, queueing_lock, status FROM procrastinate_jobs"
        " WHERE task_name = %s ORDER BY id",
        NIGHT_TASK,
    )


def test_latest_slot_reads_the_cron_in_the_workspace_timezone() -> None:
    # 03:00 in Paris is 01:00 UTC in summer (CEST) and 02:00 UTC in winter (CET).
    assert latest_slot("0 3 * * *", "Europe/Paris", at("2026-09-01T01:00:00")) == at("2026-09-01T01:00:00")
    assert latest_slot("0 3 * * *", "Europe/Paris", at("2026-09-01T00:59:59")) == at("2026-08-31T01:00:00")
    assert latest_slot("0 3 * * *", "Europe/Paris", at("2026-12-01T12:00:00")) == at("2026-12-01T02:00:00")
    assert latest_slot("0 3 * * *", "America/New_York", at("2026-09-01T07:00:30")) == at("2026-09-01T07:00:00")


def test_each_slot_is_queued_once_in_its_timezone(pg_url: str, tmp_path: Path) -> None:
    paris, newyork = _fleet(tmp_path, pg_url)
    moments = [
        at("2026-09-01T00:30:00"),  # the latest slots (Aug 31) are before the registration: nothing
        at("2026-09-01T01:00:00"),  # 03:00 in Paris
        at("2026-09-01T01:00:40"),  # the same minute again
        at("2026-09-01T01:01:00"),  # the next minute: Paris' slot is already queued
        at("2026-09-01T07:00:00"),  # 03:00 in New York
        at("2026-09-01T09:00:00"),
    ]
    reports = _ticks(pg_url, *moments)
    assert [r.enqueued for r in reports] == [
        [], [(paris, at("2026-09-01T01:00:00"))], [], [], [(newyork, at("2026-09-01T07:00:00"))], [],
    ]  # fmt: skip
    assert _jobs(pg_url) == [
        (paris, "2026-09-01T01:00:00+00:00", paris, paris, "todo"),
        (newyork, "2026-09-01T07:00:00+00:00", newyork, newyork, "todo"),
    ]
    assert rows(pg_url, "SELECT workspace, slot, job_id IS NOT NULL FROM dreaming_slots ORDER BY slot") == [
        (paris, at("2026-09-01T01:00:00"), True),
        (newyork, at("2026-09-01T07:00:00"), True),
    ]


def test_two_workers_ticking_the_same_minute_queue_one_job(pg_url: str, tmp_path: Path) -> None:
    paris, _ = _fleet(tmp_path, pg_url)
    moment = at("2026-09-01T01:00:00")

    async def both(first: FleetQueue, second: FleetQueue) -> list[TickReport]:
        return list(await asyncio.gather(*(tick(q, now=moment) for q in (first, second, first, second))))

    reports = _with_queues(pg_url, 2, both)
    assert sorted(len(r.enqueued) for r in reports) == [0, 0, 0, 1]
    assert [job[:2] for job in _jobs(pg_url)] == [(paris, "2026-09-01T01:00:00+00:00")]


def test_the_tick_itself_is_deferred_once_per_minute_across_workers(pg_url: str, tmp_path: Path) -> None:
    _fleet(tmp_path, pg_url)
    minute = int(at("2026-09-01T01:00:00").timestamp())

    async def defer(first: FleetQueue, second: FleetQueue) -> None:
        for queue in (first, second, first):
            deferrer = PeriodicDeferrer(registry=queue.app.periodic_registry)
            (periodic,) = queue.app.periodic_registry.periodic_tasks.values()
            await deferrer.defer_jobs([(periodic, minute)])

    _with_queues(pg_url, 2, defer)
    assert rows(pg_url, "SELECT task_name, args FROM procrastinate_jobs") == [(TICK_TASK, {"timestamp": minute})]


def test_a_night_still_queued_holds_back_the_next_slot_until_it_leaves(pg_url: str, tmp_path: Path) -> None:
    paris, newyork = _fleet(tmp_path, pg_url)
    first, next_night = at("2026-09-01T01:00:00"), at("2026-09-02T01:00:00")
    reports = _ticks(pg_url, first, next_night)
    assert reports[1].enqueued == [(newyork, at("2026-09-01T07:00:00"))]
    assert reports[1].waiting == [paris]  # its queueing lock: one night of a workspace waits in the queue at most
    assert [job[1] for job in _jobs(pg_url) if job[0] == paris] == ["2026-09-01T01:00:00+00:00"]
    run(pg_url, "UPDATE procrastinate_jobs SET status = 'succeeded'")  # a worker took them
    (later,) = _ticks(pg_url, at("2026-09-02T01:05:00"))
    assert later.enqueued == [(paris, next_night)]


def test_enqueue_now_queues_every_workspace_not_already_queued_or_running(pg_url: str, tmp_path: Path) -> None:
    paris, newyork = _fleet(tmp_path, pg_url)
    _ticks(pg_url, at("2026-09-01T01:00:00"))  # Paris' night is queued by its cron

    def enqueue(moment: datetime) -> EnqueueReport:
        async def body(queue: FleetQueue) -> EnqueueReport:
            return await enqueue_now(queue, now=moment)

        return _with_queues(pg_url, 1, body)

    first = enqueue(at("2026-09-01T14:00:30"))
    assert (first.slot, first.enqueued, first.skipped) == (at("2026-09-01T14:00:00"), [newyork], [paris])
    run(pg_url, "UPDATE procrastinate_jobs SET status = 'doing' WHERE args->>'workspace' = %s", newyork)
    second = enqueue(at("2026-09-01T14:05:00"))
    assert (second.enqueued, second.skipped) == ([], [newyork, paris])  # queued, and dreaming
    run(pg_url, "UPDATE procrastinate_jobs SET status = 'succeeded'")
    third = enqueue(at("2026-09-01T14:00:50"))
    assert (third.enqueued, third.skipped) == ([paris], [newyork])  # New York's 14:00 night is already done
