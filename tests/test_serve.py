"""``dreaming serve``: the scheduler driven by a fake clock and a fake night runner, /healthz, the lock probe."""

from __future__ import annotations

import _socket
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dreaming.errors import ConfigError
from dreaming.memory import ConsolidationLock, Workspace
from dreaming.serve import (
    DEFAULT_HEALTH_PORT,
    HealthServer,
    ScheduledWorkspace,
    Scheduler,
    lock_holder,
    scheduled_workspace,
)


@dataclass(frozen=True)
class _Outcome:
    outcome: str = "done"
    exit_code: int = 0
    detail: str = ""


class _Nights:
    """A fake night runner: records each workspace it runs; a night may be held open until released."""

    def __init__(self, *, hold: bool = False, outcome: _Outcome | None = None) -> None:
        self.ran: list[Path] = []
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self._hold = hold
        self._outcome = outcome or _Outcome()

    def __call__(self, path: Path) -> _Outcome:
        self.ran.append(path)
        self.entered.release()
        if self._hold:
            assert self.release.wait(10)
        return self._outcome


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


A, B, C = Path("/fleet/a"), Path("/fleet/b"), Path("/fleet/c")
START = _at("2026-03-10T00:00:00")


def _scheduler(entries: list[ScheduledWorkspace], nights: _Nights, *, concurrency: int = 4, locked: dict[Path, str]
               | None = None) -> Scheduler:  # fmt: skip
    held = locked if locked is not None else {}
    return Scheduler(
        entries, night=nights, concurrency=concurrency, clock=lambda: START, is_locked=lambda p: held.get(p, "")
    )


def test_each_workspace_is_due_at_its_cron_in_its_timezone() -> None:
    entries = [
        ScheduledWorkspace(path=A, cron="0 3 * * *", timezone="UTC"),
        ScheduledWorkspace(path=B, cron="0 3 * * *", timezone="Europe/Paris"),  # 02:00 UTC in March (CET)
        ScheduledWorkspace(path=C, cron="30 2 * * *", timezone="America/New_York"),  # 06:30 UTC (EST)
    ]
    nights = _Nights()
    scheduler = _scheduler(entries, nights)
    assert scheduler.next_runs() == {
        A: _at("2026-03-10T03:00:00"), B: _at("2026-03-10T02:00:00"), C: _at("2026-03-10T06:30:00"),
    }  # fmt: skip
    assert scheduler.tick(_at("2026-03-10T01:59:59")).started == []
    assert scheduler.tick(_at("2026-03-10T02:00:00")).started == [B]
    assert scheduler.wait_idle(timeout=10)
    assert scheduler.tick(_at("2026-03-10T03:00:30")).started == [A]  # within the due minute
    scheduler.close()
    assert nights.ran == [B, A]
    assert scheduler.next_runs() == {
        A: _at("2026-03-11T03:00:00"), B: _at("2026-03-11T02:00:00"), C: _at("2026-03-10T06:30:00"),
    }  # fmt: skip
    assert [path for path, _ in scheduler.finished] == [B, A]


def test_missed_slots_make_one_night_and_the_next_time_is_after_now() -> None:
    nights = _Nights()
    scheduler = _scheduler([ScheduledWorkspace(path=A, cron="0 * * * *", timezone="UTC")], nights)
    report = scheduler.tick(_at("2026-03-10T05:20:00"))  # 01:00 ... 05:00 were missed
    scheduler.close()
    assert report.started == [A] and nights.ran == [A]
    assert scheduler.next_runs()[A] == _at("2026-03-10T06:00:00")


def test_a_held_lock_skips_that_slot_only() -> None:
    nights = _Nights()
    locked = {A: "4242:1773100000000"}
    entries = [ScheduledWorkspace(path=p, cron="0 3 * * *", timezone="UTC") for p in (A, B)]
    scheduler = _scheduler(entries, nights, locked=locked)
    report = scheduler.tick(_at("2026-03-10T03:00:00"))
    assert report.started == [B]
    assert report.skipped == [(A, "busy: run 4242:1773100000000 holds the lock")]
    locked.clear()
    assert scheduler.wait_idle(timeout=10)
    assert scheduler.tick(_at("2026-03-11T03:00:00")).started == [A, B]
    scheduler.close()
    assert nights.ran[0] == B and sorted(nights.ran[1:]) == [A, B]  # the second slot's two nights run concurrently


def test_a_night_still_running_is_skipped_and_concurrency_caps_the_running_ones() -> None:
    nights = _Nights(hold=True)
    entries = [ScheduledWorkspace(path=p, cron="* * * * *", timezone="UTC") for p in (A, B, C)]
    scheduler = _scheduler(entries, nights, concurrency=2)
    first = scheduler.tick(_at("2026-03-10T00:01:00"))
    assert first.started == [A, B, C]  # C waits for a free slot
    assert nights.entered.acquire(timeout=10) and nights.entered.acquire(timeout=10)
    assert scheduler.running() == [A, B] and scheduler.waiting() == [A, B, C]
    second = scheduler.tick(_at("2026-03-10T00:02:00"))
    assert second.started == [] and [p for p, _ in second.skipped] == [A, B, C]
    assert all(reason == "its previous night is still running" for _, reason in second.skipped)
    nights.release.set()
    scheduler.close()
    assert sorted(nights.ran) == [A, B, C] and scheduler.running() == []


def test_a_busy_or_failed_night_is_recorded_and_a_crashing_runner_does_not_stop_the_scheduler() -> None:
    busy = _Nights(outcome=_Outcome(outcome="busy", exit_code=3))
    scheduler = _scheduler([ScheduledWorkspace(path=A, cron="0 3 * * *", timezone="UTC")], busy)
    scheduler.tick(_at("2026-03-10T03:00:00"))
    scheduler.close()
    assert [r.exit_code for _, r in scheduler.finished] == [3]

    def crash(path: Path) -> _Outcome:
        raise RuntimeError("boom")

    broken = Scheduler([ScheduledWorkspace(path=A, cron="0 3 * * *", timezone="UTC")], night=crash, concurrency=1,
                       clock=lambda: START, is_locked=lambda p: "")  # fmt: skip
    assert broken.tick(_at("2026-03-10T03:00:00")).started == [A]
    broken.close()
    assert broken.finished == [] and broken.running() == []


def test_run_forever_sleeps_until_the_next_due_time_and_returns_when_stopped() -> None:
    nights = _Nights()
    before, due = _at("2026-03-10T02:59:30"), _at("2026-03-10T03:00:00")
    times = iter([START, before, before, due, due])  # the first due times, then (tick, sleep) per turn
    now = {"t": START}

    def clock() -> datetime:
        now["t"] = next(times, now["t"])
        return now["t"]

    scheduler = Scheduler([ScheduledWorkspace(path=A, cron="0 3 * * *", timezone="UTC")], night=nights,
                          concurrency=1, clock=clock, is_locked=lambda p: "")  # fmt: skip
    assert scheduler.seconds_until_next(_at("2026-03-10T02:59:30")) == 30.0
    assert scheduler.seconds_until_next(_at("2026-03-09T00:00:00")) == 60.0  # capped: clock jumps are noticed
    waits: list[float] = []

    class _Stop:  # the loop's sleeps go through stop.wait: this one returns at once, and stops after two turns
        def is_set(self) -> bool:
            return len(waits) >= 2

        def wait(self, timeout: float) -> bool:
            waits.append(timeout)
            return self.is_set()

    scheduler.run_forever(_Stop())
    assert nights.ran == [A] and waits == [30.0, 60.0]


@pytest.fixture
def loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let this test connect to 127.0.0.1 (conftest blocks every connection; the rest stays blocked)."""
    real_connect = _socket.socket.connect

    def loopback_only(self: socket.socket, address: Any) -> Any:
        if self.family == socket.AF_INET and address[0] == "127.0.0.1":
            return real_connect(self, address)
        raise OSError(f"test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", loopback_only)


@pytest.mark.usefixtures("loopback")
def test_healthz_answers_running_nights_and_next_times() -> None:
    nights = _Nights(hold=True)
    scheduler = _scheduler([ScheduledWorkspace(path=A, cron="0 3 * * *", timezone="UTC"),
                            ScheduledWorkspace(path=B, cron="0 4 * * *", timezone="UTC")], nights)  # fmt: skip
    health = HealthServer(scheduler, 0).start()
    try:
        scheduler.tick(_at("2026-03-10T03:00:00"))
        assert nights.entered.acquire(timeout=10)
        with urllib.request.urlopen(f"http://127.0.0.1:{health.port}/healthz", timeout=10) as reply:
            assert reply.status == 200 and reply.headers["Content-Type"] == "application/json"
            body = json.loads(reply.read())
        assert body == {
            "ok": True,
            "running": [str(A)],
            "next": {str(A): "2026-03-11T03:00:00+00:00", str(B): "2026-03-10T04:00:00+00:00"},
        }
        connection = http.client.HTTPConnection("127.0.0.1", health.port, timeout=10)
        try:
            connection.request("GET", "/other")
            assert connection.getresponse().status == 404
        finally:
            connection.close()
    finally:
        nights.release.set()
        scheduler.close()
        health.stop()


def test_a_schedule_comes_from_the_fleet_else_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "dreaming.toml").write_text('timezone = "Asia/Tokyo"\n[schedule]\ncron = "15 4 * * 1"\n')
    assert scheduled_workspace(ws) == ScheduledWorkspace(path=ws, cron="15 4 * * 1", timezone="Asia/Tokyo")
    mixed = scheduled_workspace(ws, cron="0  2 * * *")
    assert (mixed.cron, mixed.timezone) == ("0 2 * * *", "Asia/Tokyo")
    bare = scheduled_workspace(tmp_path)  # no dreaming.toml: the defaults
    assert (bare.cron, bare.timezone) == ("0 3 * * *", "UTC")
    (ws / "dreaming.toml").write_text('[schedule]\ncron = "0 25 * * *"\n')
    with pytest.raises(ConfigError, match="0 25"):
        scheduled_workspace(ws)
    with pytest.raises(ConfigError, match="Mars/Olympus"):
        scheduled_workspace(ws, cron="0 3 * * *", timezone="Mars/Olympus")


def test_the_lock_probe_sees_a_live_holder_and_not_a_stale_file(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path)
    ws.state_dir.mkdir(parents=True)
    assert lock_holder(tmp_path) == ""
    ws.lock_file.write_text("999999:1\n")  # left by a dead holder: no flock on it
    assert lock_holder(tmp_path) == ""
    with ConsolidationLock(ws.lock_file, timeout_s=1):
        assert lock_holder(tmp_path).startswith(f"{os.getpid()}:")
    assert lock_holder(tmp_path) == ""


@pytest.mark.usefixtures("loopback")
def test_serve_stops_on_sigterm_and_exits_0(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('[[workspaces]]\npath = "ws"\ncron = "0 3 1 1 *"\n')
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1] / "src"))
    with subprocess.Popen(
        [sys.executable, "-m", "dreaming", "serve", "--fleet", str(fleet), "--health-port", "0"],
        env=env, stderr=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        try:
            assert proc.stderr is not None
            lines = []
            for line in proc.stderr:
                lines.append(line)
                if "healthz: http://127.0.0.1:" in line:
                    break
            port = int(lines[-1].rsplit(":", 1)[1].split("/")[0])
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as reply:
                assert json.loads(reply.read())["next"][str(ws.resolve())].endswith("T03:00:00+00:00")
            proc.send_signal(signal.SIGTERM)
            rest = proc.stderr.read()
            assert proc.wait(timeout=30) == 0, "".join(lines) + rest
        finally:
            if proc.poll() is None:  # a failed assertion must not leave the server behind
                proc.kill()
    assert "SIGTERM" in rest


def test_serve_refuses_an_invalid_cron(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('[[workspaces]]\npath = "ws"\ncron = "0 25 * * *"\n')
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1] / "src"))
    done = subprocess.run([sys.executable, "-m", "dreaming", "serve", "--fleet", str(fleet)], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "0 25" in done.stderr


def test_the_servers_default_ports_differ() -> None:
    """serve's /healthz, the viewer and the MCP server run on one machine with their defaults."""
    from dreaming.cli import mcp, view

    assert len({DEFAULT_HEALTH_PORT, view.DEFAULT_PORT, mcp.DEFAULT_PORT}) == 3
