"""A night run by a fleet worker: the same files as ``dreaming run``, one worker at a time, resumed after a crash."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.config import load_config
from dreaming.errors import LockBusyError
from dreaming.fleet.postgres import (
    NIGHT_TASK,
    AdvisoryLock,
    NightAttempt,
    WorkerSettings,
    fleet_queue,
    night_run_id,
    run_fleet_night,
    tick,
)
from dreaming.memory import ConsolidationLock, Workspace
from tests._workspaces import NIGHT, build_verdict_workspace, snapshot
from tests.fleet._fleet import init, rows, run, without_run_ids, work, write_fleet

ROOT = Path(__file__).resolve().parents[2]
SLOT = datetime.fromisoformat(NIGHT)
TALLIES = ("memory/.dreams/verdict-tallies.json",)
"""Verdict tallies name inodes and mtimes (they differ between two copies) and a resumed chain stores none."""


def _fleet(tmp_path: Path, url: str) -> Path:
    """Register one verdict workspace; return it."""
    ws = build_verdict_workspace(tmp_path / "fleet" / "ws")
    init(url, write_fleet(tmp_path / "fleet", url, '[[workspaces]]\npath = "ws"\ncron = "0 3 * * *"\n'), SLOT)
    return ws


def _enqueue(url: str) -> None:
    result = CliRunner().invoke(app, ["fleet", "enqueue", "--now", NIGHT], env={"DREAMING_DATABASE_URL": url})
    assert result.exit_code == 0 and "1 queued" in result.output, result.output


def _reference(tmp_path: Path) -> Path:
    """Return a copy of the workspace dreamed by ``dreaming run`` at the same 'now'."""
    ref = build_verdict_workspace(tmp_path / "reference" / "ws")
    result = CliRunner().invoke(app, ["run", "--workspace", str(ref), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    return ref


def _log(url: str) -> list[tuple[object, ...]]:
    return rows(url, "SELECT attempt, outcome, exit_code, run_id FROM dreaming_night_log ORDER BY id")


def _job(url: str) -> tuple[object, ...]:
    (job,) = rows(url, "SELECT id, status, attempts FROM procrastinate_jobs WHERE task_name = %s", NIGHT_TASK)
    return job


def _checkpoints(url: str, run_id: str) -> int:
    return int(rows(url, "SELECT count(*) FROM checkpoints WHERE thread_id = %s", run_id)[0][0])


def test_a_job_dreams_the_same_files_as_dreaming_run(pg_url: str, tmp_path: Path) -> None:
    ws = _fleet(tmp_path, pg_url)
    _enqueue(pg_url)
    assert work(pg_url) == 1
    ref = _reference(tmp_path)
    assert snapshot(ws, exclude=TALLIES) == snapshot(ref, exclude=TALLIES)
    assert (ws / "memory" / "insights" / "reliable-buy-test-uptrend-7d.md").exists()
    diary = (ws / "DREAMS.md").read_text()
    run_id = night_run_id(str(ws), SLOT)
    assert f"<!-- dreaming:run:{run_id} -->" in diary  # the run id derived from (workspace, slot)
    assert without_run_ids(diary) == without_run_ids((ref / "DREAMS.md").read_text())
    assert _log(pg_url) == [(1, "done", 0, run_id)]
    assert _job(pg_url)[1] == "succeeded"
    assert _checkpoints(pg_url, run_id) == 0  # the night's checkpoints are gone once it is done
    assert not (ws / "memory" / ".dreams" / "checkpoints.sqlite").exists()  # none in the workspace
    assert not (ws / "memory" / ".dreams" / "current-run.json").exists()


def test_a_second_attempt_while_one_holds_the_workspace_is_busy_and_retried(pg_url: str, tmp_path: Path) -> None:
    ws = _fleet(tmp_path, pg_url)
    before = snapshot(ws)
    holder = AdvisoryLock(pg_url, str(ws))  # another worker, dreaming this workspace
    holder.acquire()
    try:
        with pytest.raises(LockBusyError):
            run_fleet_night(pg_url, str(ws), SLOT, attempt=NightAttempt(), env={})
        _enqueue(pg_url)
        assert work(pg_url) == 1  # the attempt ran and found the workspace busy
        job_id, status, attempts = _job(pg_url)
        assert (status, attempts) == ("todo", 1)  # retried later, with backoff
        assert _log(pg_url) == [] and snapshot(ws) == before  # nothing logged, nothing written
    finally:
        holder.release()
    run(pg_url, "UPDATE procrastinate_jobs SET scheduled_at = now() WHERE id = %s", job_id)  # the backoff is over
    assert work(pg_url) == 1
    assert _log(pg_url) == [(2, "done", 0, night_run_id(str(ws), SLOT))]


def test_a_local_run_holding_the_lock_file_keeps_the_worker_off(pg_url: str, tmp_path: Path) -> None:
    """A ``dreaming run`` or a chat's "dream now" on the workspace's machine holds its lock file: the job is busy."""
    ws = _fleet(tmp_path, pg_url)
    local = ConsolidationLock(Workspace.at(ws).lock_file, timeout_s=0.0)
    local.acquire()
    try:
        before = snapshot(ws)
        with pytest.raises(LockBusyError):
            run_fleet_night(pg_url, str(ws), SLOT, attempt=NightAttempt(), env={})
        assert _log(pg_url) == [] and snapshot(ws) == before  # nothing logged, nothing written
        other = AdvisoryLock(pg_url, str(ws))
        other.acquire()  # the worker let its advisory lock go
        other.release()
    finally:
        local.release()
    assert run_fleet_night(pg_url, str(ws), SLOT, attempt=NightAttempt(attempt=2), env={}).outcome == "done"


def test_the_worker_s_night_keeps_a_local_run_off(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a worker dreams the workspace, a run on its machine finds the lock file held."""
    ws = _fleet(tmp_path, pg_url)
    probes: list[str] = []

    def probe_then_load(path: Path) -> Any:  # called inside the night, with the worker's locks held
        with pytest.raises(LockBusyError) as busy:
            ConsolidationLock(Workspace.at(ws).lock_file, timeout_s=0.0).acquire()
        probes.append(str(busy.value))
        return load_config(path)

    monkeypatch.setattr("dreaming.fleet._night.load_config", probe_then_load)
    assert run_fleet_night(pg_url, str(ws), SLOT, attempt=NightAttempt(), env={}).outcome == "done"
    assert len(probes) == 1
    after = ConsolidationLock(Workspace.at(ws).lock_file, timeout_s=0.0)
    after.acquire()  # released with the night
    after.release()


def test_a_slot_already_done_is_skipped(pg_url: str, tmp_path: Path) -> None:
    ws = _fleet(tmp_path, pg_url)
    run_fleet_night(pg_url, str(ws), SLOT, attempt=NightAttempt(), env={})
    after = snapshot(ws) | {"DREAMS.md": (ws / "DREAMS.md").read_bytes()}
    again = run_fleet_night(pg_url, str(ws), SLOT, attempt=NightAttempt(attempt=2), env={})
    assert again.outcome == "skipped"
    assert snapshot(ws) | {"DREAMS.md": (ws / "DREAMS.md").read_bytes()} == after
    assert [row[:2] for row in _log(pg_url)] == [(1, "done"), (2, "skipped")]


def test_a_failed_night_is_retried_and_resumes_from_its_postgres_checkpoint(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dreaming.graph.nodes as nodes

    ws = _fleet(tmp_path, pg_url)
    run_id = night_run_id(str(ws), SLOT)
    real_deep, calls = nodes.deep, {"light": 0}
    real_light = nodes.light

    def light_counted(state: Any, runtime: Any) -> Any:
        calls["light"] += 1
        return real_light(state, runtime)

    def deep_fails(state: Any, runtime: Any) -> Any:
        raise RuntimeError("the model went away")

    monkeypatch.setattr(nodes, "light", light_counted)
    monkeypatch.setattr(nodes, "deep", deep_fails)
    _enqueue(pg_url)
    assert work(pg_url) == 1
    assert _log(pg_url) == [(1, "failed", 1, run_id)]
    assert _job(pg_url)[1:] == ("todo", 1)
    assert _checkpoints(pg_url, run_id) > 0  # light, rem, ... are saved
    assert rows(pg_url, "SELECT detail FROM dreaming_night_log") == [("RuntimeError: the model went away",)]
    monkeypatch.setattr(nodes, "deep", real_deep)
    run(pg_url, "UPDATE procrastinate_jobs SET scheduled_at = now()")  # the backoff is over
    assert work(pg_url) == 1
    assert calls["light"] == 1  # the retry resumed after light instead of starting over
    assert [row[:3] for row in _log(pg_url)] == [(1, "failed", 1), (2, "done", 0)]
    ref = _reference(tmp_path)
    assert snapshot(ws, exclude=TALLIES) == snapshot(ref, exclude=TALLIES)
    assert without_run_ids((ws / "DREAMS.md").read_text()) == without_run_ids((ref / "DREAMS.md").read_text())


KILLED_WORKER = """
import os, sys
import dreaming.graph.nodes as nodes

def die(*args, **kwargs):
    os._exit(137)  # the machine went away mid-night: no clean-up, no unregistering

nodes.deep = die
from dreaming.cli import main
sys.argv = ["dreaming", "worker", "--once", "--heartbeat", "1", "--stalled-after", "5"]
main()
"""


@pytest.mark.slow
def test_a_killed_worker_s_night_is_retried_and_resumes_from_its_postgres_checkpoint(
    pg_url: str, tmp_path: Path
) -> None:
    ws = _fleet(tmp_path, pg_url)
    run_id = night_run_id(str(ws), SLOT)
    _enqueue(pg_url)
    env = {**os.environ, "DREAMING_DATABASE_URL": pg_url,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}  # fmt: skip
    killed = subprocess.run([sys.executable, "-c", textwrap.dedent(KILLED_WORKER)], env=env, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert killed.returncode == 137, killed.stderr
    job_id, status, _ = _job(pg_url)
    assert status == "doing" and _log(pg_url) == [(1, "running", None, run_id)]
    assert _checkpoints(pg_url, run_id) > 0 and (ws / "memory" / ".dreams" / "current-run.json").exists()

    settings = WorkerSettings(heartbeat_seconds=1, stalled_after_seconds=5)

    async def tick_now() -> list[int]:
        queue = fleet_queue(pg_url, settings=settings)
        async with queue.app.open_async():
            return (await tick(queue, now=SLOT)).retried

    assert asyncio.run(tick_now()) == []  # its heartbeat is recent: not yet taken for dead
    run(pg_url, "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 minute'")  # time passes
    assert asyncio.run(tick_now()) == [job_id]
    assert _log(pg_url) == [(1, "stalled", None, run_id)]
    assert work(pg_url) == 1  # another worker takes the retried job
    assert [row[:3] for row in _log(pg_url)] == [(1, "stalled", None), (2, "done", 0)]
    events = (ws / "memory" / ".dreams" / "events.jsonl").read_text()
    assert f'"run_id": "{run_id}"' in events and '"type": "run.resumed"' in events
    ref = _reference(tmp_path)
    assert snapshot(ws, exclude=TALLIES) == snapshot(ref, exclude=TALLIES)
    assert without_run_ids((ws / "DREAMS.md").read_text()) == without_run_ids((ref / "DREAMS.md").read_text())
    assert _checkpoints(pg_url, run_id) == 0


PAUSED_WORKER = """
import os, sys, time
from pathlib import Path
import dreaming.graph.nodes as nodes

flags, real_rem = Path(sys.argv[1]), nodes.rem

def rem(state, runtime):
    (flags / "started").touch()
    while not (flags / "go").exists():  # the test sends SIGTERM here, mid-night, then lets the night go on
        time.sleep(0.02)
    return real_rem(state, runtime)

nodes.rem = rem
from dreaming.cli import main
sys.argv = ["dreaming", "worker", "--heartbeat", "1", "--stalled-after", "5", "--tick-seconds", "1"]
main()
"""


@pytest.mark.slow
def test_a_worker_ticks_its_nights_in_and_sigterm_lets_the_running_night_finish(pg_url: str, tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "fleet" / "ws")
    fleet = write_fleet(tmp_path / "fleet", pg_url, '[[workspaces]]\npath = "ws"\ncron = "* * * * *"\n')
    init(pg_url, fleet, datetime.now(UTC) - timedelta(minutes=1))  # the real clock: a worker ticks on it
    flags = tmp_path / "flags"
    flags.mkdir()
    env = {**os.environ, "DREAMING_DATABASE_URL": pg_url,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}  # fmt: skip
    worker = subprocess.Popen([sys.executable, "-c", textwrap.dedent(PAUSED_WORKER), str(flags)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (flags / "started").exists() and worker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (flags / "started").exists(), worker.communicate(timeout=5)
        worker.send_signal(signal.SIGTERM)
        (flags / "go").touch()
        _, stderr = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0, stderr
    first = rows(pg_url, "SELECT outcome, exit_code, slot FROM dreaming_night_log ORDER BY id")[0]
    assert first[:2] == ("done", 0)  # the night the tick queued ran to its end after SIGTERM
    assert f"<!-- dreaming:run:{night_run_id(str(ws), first[2])} -->" in (ws / "DREAMS.md").read_text()
    assert rows(pg_url, "SELECT count(*) FROM procrastinate_workers") == [(0,)]  # it unregistered on its way out


def test_a_night_that_keeps_failing_gives_up_after_five_attempts(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dreaming.graph.nodes as nodes

    def light_fails(state: Any, runtime: Any) -> Any:
        raise RuntimeError("a bug in this workspace's night")

    monkeypatch.setattr(nodes, "light", light_fails)
    _fleet(tmp_path, pg_url)
    _enqueue(pg_url)
    for _ in range(6):
        work(pg_url)
        run(pg_url, "UPDATE procrastinate_jobs SET scheduled_at = now() WHERE status = 'todo'")  # the backoff is over
    assert [row[:3] for row in _log(pg_url)] == [(n, "failed", 1) for n in range(1, 6)]
    assert _job(pg_url)[1] == "failed"
    result = CliRunner().invoke(app, ["fleet", "status", "--json"], env={"DREAMING_DATABASE_URL": pg_url})
    (status,) = json.loads(result.output)["workspaces"]
    assert (status["queued"], status["failed"], status["last_night"]["outcome"]) == (0, 1, "failed")
