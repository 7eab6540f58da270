"""The fleet's retention: once a day the tick deletes old finished jobs, night log rows and slots, in batches.

Time is driven by the ticks' ``now``; planted rows carry explicit timestamps (a job's end is its newest event).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from psycopg.types.json import Jsonb
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.fleet import load_fleet
from dreaming.fleet.postgres import (
    DATABASE_URL_ENV,
    NIGHT_TASK,
    PRUNE_BATCH,
    TICK_TASK,
    TickReport,
    WorkerSettings,
    fleet_queue,
    tick,
)
from dreaming.memory import Workspace, init_workspace
from tests.fleet._fleet import init, rows, run, write_fleet

REGISTERED = datetime(2026, 6, 1, tzinfo=UTC)
NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
SETTINGS = WorkerSettings(heartbeat_seconds=1, stalled_after_seconds=3600)  # planted `doing` jobs are not stalled


def _fleet(root: Path, url: str, *, fleet_table: str = "", cron: str = "0 3 * * *") -> list[str]:
    names = ("a", "b", "c")
    for name in names:
        init_workspace(Workspace.at(root / name))
    body = "".join(f'[[workspaces]]\npath = "{n}"\ncron = "{cron}"\ntimezone = "UTC"\n' for n in names)
    fleet = write_fleet(root, url, fleet_table + body)
    init(url, fleet, REGISTERED)
    return [str(root / n) for n in names]


def _ticks(url: str, *moments: datetime, batch: int = PRUNE_BATCH, queues: int = 1) -> list[TickReport]:
    """Tick at each moment in turn; with ``queues`` > 1, as many workers tick each moment at once."""

    async def main() -> list[TickReport]:
        opened = [fleet_queue(url, settings=SETTINGS) for _ in range(queues)]
        for queue in opened:
            await queue.app.open_async()
        try:
            reports: list[TickReport] = []
            for moment in moments:
                reports += await asyncio.gather(*(tick(q, now=moment, prune_batch=batch) for q in opened))
            return reports
        finally:
            for queue in opened:
                await queue.app.close_async()

    return asyncio.run(main())


def _job(url: str, status: str, ended: datetime, *, task: str = NIGHT_TASK, workspace: str = "w") -> int:
    """Plant a job whose every event happened at ``ended``; return its id."""
    ((job_id,),) = rows(
        url,
        "INSERT INTO procrastinate_jobs (queue_name, task_name, args, status) VALUES ('default', %s, %s, %s)"
        " RETURNING id",
        task, Jsonb({"workspace": workspace, "slot": "x"}), status,
    )  # fmt: skip
    run(url, "INSERT INTO procrastinate_events (job_id, type, at) VALUES (%s, 'started', %s)", job_id, ended)
    run(url, "UPDATE procrastinate_events SET at = %s WHERE job_id = %s", ended, job_id)
    if status == "doing":
        ((worker,),) = rows(url, "INSERT INTO procrastinate_workers DEFAULT VALUES RETURNING id")
        run(url, "UPDATE procrastinate_jobs SET worker_id = %s WHERE id = %s", worker, job_id)
    return int(job_id)


def _night(url: str, workspace: str, started: datetime, *, finished: bool = True) -> int:
    """Plant a night log attempt started at ``started`` (finished an hour later, or still running)."""
    ((log_id,),) = rows(
        url,
        "INSERT INTO dreaming_night_log (workspace, slot, run_id, host, pid, attempt, started_at, finished_at,"
        " outcome) VALUES (%s, %s, 'r', 'h', 1, 1, %s, %s, %s) RETURNING id",
        workspace, started, started, started + timedelta(hours=1) if finished else None,
        "done" if finished else "running",
    )  # fmt: skip
    return int(log_id)


def _slot(url: str, workspace: str, slot: datetime) -> None:
    run(url, "INSERT INTO dreaming_slots (workspace, slot) VALUES (%s, %s)", workspace, slot)


def _ids(url: str, table: str) -> set[int]:
    return {int(r[0]) for r in rows(url, f"SELECT id FROM {table}")}


def _slots(url: str) -> set[tuple[str, datetime]]:
    return {(str(r[0]), r[1]) for r in rows(url, "SELECT workspace, slot FROM dreaming_slots")}


def test_old_finished_rows_go_and_live_recent_and_newest_rows_stay(pg_url: str, tmp_path: Path) -> None:
    a, b, c = _fleet(tmp_path, pg_url)
    old, recent = NOW - 31 * DAY, NOW - 29 * DAY
    gone_jobs = {_job(pg_url, status, old) for status in ("succeeded", "failed", "cancelled", "aborted")}
    gone_jobs.add(_job(pg_url, "succeeded", old, task=TICK_TASK))
    kept_jobs = {
        _job(pg_url, "succeeded", recent),
        _job(pg_url, "todo", old),
        _job(pg_url, "doing", old, workspace="busy"),
        _job(pg_url, "succeeded", old, task="another_apps_task"),
    }
    gone_nights = {_night(pg_url, a, old - DAY), _night(pg_url, a, old), _night(pg_url, b, old - DAY)}
    gone_nights.add(_night(pg_url, c, old))
    kept_nights = {
        _night(pg_url, a, recent),  # a's newest, recent
        _night(pg_url, b, old),  # b's newest, old: `fleet status` still shows it
        _night(pg_url, c, old + DAY, finished=False),  # c's newest, still running
    }
    elsewhere = "/unregistered/workspace"  # no new slot: its newest stays however old
    for workspace, slot in ((a, old - DAY), (a, old), (a, recent), (elsewhere, old - DAY), (elsewhere, old)):
        _slot(pg_url, workspace, slot)
    events = len(rows(pg_url, "SELECT 1 FROM procrastinate_events WHERE job_id = ANY(%s)", list(gone_jobs)))
    assert events == len(gone_jobs)  # one each (todo jobs also get a `deferred` one)

    (report,) = _ticks(pg_url, NOW)

    assert report.pruned is not None
    assert (report.pruned.keep_days, report.pruned.cutoff) == (30, NOW - 30 * DAY)
    assert (report.pruned.jobs, report.pruned.nights, report.pruned.slots) == (5, 4, 3)
    jobs = _ids(pg_url, "procrastinate_jobs")
    assert kept_jobs <= jobs and not gone_jobs & jobs
    assert rows(pg_url, "SELECT 1 FROM procrastinate_events WHERE job_id = ANY(%s)", list(gone_jobs)) == []
    assert _ids(pg_url, "dreaming_night_log") == kept_nights
    today = datetime(2026, 9, 1, 3, 0, tzinfo=UTC)  # the tick also queued today's slot of each workspace
    assert _slots(pg_url) == {(a, recent), (elsewhere, old), (a, today), (b, today), (c, today)}
    assert "pruned 5 jobs, 4 night log rows, 3 slots (older than 30 days)" in report.summary()


def test_the_prune_runs_at_most_once_a_day(pg_url: str, tmp_path: Path) -> None:
    a, _, _ = _fleet(tmp_path, pg_url)
    first = _job(pg_url, "succeeded", NOW - 40 * DAY)
    (report,) = _ticks(pg_url, NOW)
    assert report.pruned is not None and report.pruned.jobs == 1
    planted = _job(pg_url, "succeeded", NOW - 40 * DAY)
    _night(pg_url, a, NOW - 40 * DAY)
    _night(pg_url, a, NOW - 39 * DAY)
    later = _ticks(pg_url, NOW + timedelta(minutes=1), NOW + timedelta(hours=23, minutes=59))
    assert [r.pruned for r in later] == [None, None]
    assert "pruned" not in later[0].summary()
    assert planted in _ids(pg_url, "procrastinate_jobs") and len(_ids(pg_url, "dreaming_night_log")) == 2
    (next_day,) = _ticks(pg_url, NOW + DAY)
    assert next_day.pruned is not None and (next_day.pruned.jobs, next_day.pruned.nights) == (1, 1)
    assert not {first, planted} & _ids(pg_url, "procrastinate_jobs")


def test_two_workers_ticking_at_once_prune_once(pg_url: str, tmp_path: Path) -> None:
    _fleet(tmp_path, pg_url)
    for _ in range(6):
        _job(pg_url, "succeeded", NOW - 40 * DAY)
    reports = _ticks(pg_url, NOW, NOW, queues=3)  # three workers, the same minute, twice
    pruned = [r.pruned for r in reports if r.pruned is not None]
    assert len(pruned) == 1 and pruned[0].jobs == 6
    assert rows(pg_url, "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'") == [(0,)]


def test_a_backlog_larger_than_a_batch_is_deleted_batch_by_batch(pg_url: str, tmp_path: Path) -> None:
    a, _, _ = _fleet(tmp_path, pg_url)
    old = NOW - 100 * DAY
    for i in range(10):
        _job(pg_url, "failed", old + i * DAY)
        _night(pg_url, a, old + i * DAY)
        _slot(pg_url, "/unregistered/workspace", old + i * DAY)
    (report,) = _ticks(pg_url, NOW, batch=3)
    assert report.pruned is not None
    assert (report.pruned.jobs, report.pruned.nights, report.pruned.slots) == (10, 9, 9)  # each newest row stays
    assert rows(pg_url, "SELECT count(*) FROM procrastinate_jobs WHERE status = 'failed'") == [(0,)]
    assert rows(pg_url, "SELECT started_at FROM dreaming_night_log") == [(old + 9 * DAY,)]
    assert rows(pg_url, "SELECT slot FROM dreaming_slots WHERE slot < %s", NOW - DAY) == [(old + 9 * DAY,)]


def test_keep_days_reaches_the_tick_through_init(pg_url: str, tmp_path: Path) -> None:
    _fleet(tmp_path, pg_url, fleet_table="keep_days = 7\n")
    assert rows(pg_url, "SELECT keep_days FROM dreaming_retention") == [(7,)]
    kept, gone = _job(pg_url, "succeeded", NOW - 6 * DAY), _job(pg_url, "succeeded", NOW - 8 * DAY)
    (report,) = _ticks(pg_url, NOW)
    assert report.pruned is not None and (report.pruned.keep_days, report.pruned.jobs) == (7, 1)
    assert kept in _ids(pg_url, "procrastinate_jobs") and gone not in _ids(pg_url, "procrastinate_jobs")
    # The file changes: the next init stores it; without keep_days, the default.
    fleet = tmp_path / "fleet.toml"
    again = init(pg_url, fleet, NOW)
    assert (again.keep_days, again.retention_changed, again.changed) == (7, False, False)
    fleet.write_text(fleet.read_text().replace("keep_days = 7\n", ""))
    changed = init(pg_url, fleet, NOW)
    assert (changed.keep_days, changed.retention_changed, changed.changed) == (30, True, True)
    assert changed.to_json()["keep_days"] == 30
    assert rows(pg_url, "SELECT keep_days FROM dreaming_retention") == [(30,)]


@pytest.mark.parametrize(
    ("value", "why"),
    [("1", "out of range"), ("0", "out of range"), ("2.5", "not a whole number"), ('"soon"', "not a number"),
     ("true", "not a number")],
)  # fmt: skip
def test_a_bad_keep_days_falls_back_to_30_with_a_warning(tmp_path: Path, value: str, why: str) -> None:
    init_workspace(Workspace.at(tmp_path / "a"))
    fleet = write_fleet(tmp_path, "postgresql://db/fleet", f'keep_days = {value}\n[[workspaces]]\npath = "a"\n')
    config = load_fleet(fleet, distributed=True)
    assert config.keep_days == 30
    assert len(config.warnings) == 1 and "[fleet] keep_days" in config.warnings[0] and why in config.warnings[0]


def test_a_good_keep_days_is_read_without_warning(tmp_path: Path) -> None:
    init_workspace(Workspace.at(tmp_path / "a"))
    for value, days in (("2", 2), ("365", 365), ('"14"', 14)):
        fleet = write_fleet(tmp_path, "postgresql://db/fleet", f'keep_days = {value}\n[[workspaces]]\npath = "a"\n')
        assert (load_fleet(fleet).keep_days, load_fleet(fleet).warnings) == (days, ())
    fleet = write_fleet(tmp_path, "postgresql://db/fleet", '[[workspaces]]\npath = "a"\n')
    assert (load_fleet(fleet).keep_days, load_fleet(fleet).warnings) == (30, ())


def test_cli_init_warns_of_a_bad_keep_days_and_stores_the_default(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_workspace(Workspace.at(tmp_path / "a"))
    fleet = write_fleet(tmp_path, pg_url, 'keep_days = 1\n[[workspaces]]\npath = "a"\ncron = "0 3 * * *"\n')
    monkeypatch.setenv(DATABASE_URL_ENV, pg_url)
    result = CliRunner().invoke(app, ["fleet", "init", "--fleet", str(fleet), "--json"])
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "keep_days = 1 is out of range" in result.stderr
    assert json.loads(result.stdout)["keep_days"] == 30
    status = CliRunner().invoke(app, ["fleet", "status"])
    assert status.exit_code == 0 and "failed and done: the jobs of the last 30 days" in status.stdout


def test_after_pruning_each_slot_is_still_queued_once(pg_url: str, tmp_path: Path) -> None:
    # Monthly nights with a 2-day retention: a workspace's newest slot is older than keep_days most of the month,
    # yet it is the tick's latest slot; pruned, it would be queued again at every tick.
    a, b, c = _fleet(tmp_path, pg_url, fleet_table="keep_days = 2\n", cron="0 3 1 * *")
    moments = [datetime(2026, month, day, hour, tzinfo=UTC) for month in (9, 10) for day in (1, 4, 20)
               for hour in (3, 12)]  # fmt: skip
    enqueued: list[tuple[str, datetime]] = []
    pruned = 0
    for moment in moments:
        (report,) = _ticks(pg_url, moment)
        enqueued += report.enqueued
        pruned += report.pruned.slots if report.pruned is not None else 0
        run(pg_url, "UPDATE procrastinate_jobs SET status = 'succeeded' WHERE status = 'todo'")  # a worker took them
    first, second = datetime(2026, 9, 1, 3, tzinfo=UTC), datetime(2026, 10, 1, 3, tzinfo=UTC)
    assert sorted(enqueued) == sorted((w, s) for w in (a, b, c) for s in (first, second))
    assert pruned == 3  # September's rows, once October's were queued
    assert _slots(pg_url) == {(w, second) for w in (a, b, c)}
    night_jobs = rows(pg_url, "SELECT args->>'workspace', args->>'slot' FROM procrastinate_jobs WHERE task_name = %s",
                      NIGHT_TASK)  # fmt: skip
    assert len(night_jobs) == len(set(night_jobs)) == 6
