"""Issue 15's acceptance, on the real Postgres with real worker processes: 60 workspaces, 3 workers, one global cap.

A loopback model prices every verify call the same; the cap allows about half the fleet's model work. The answers
are held at first, so every worker is mid-night with a call in flight; one worker is then killed with SIGKILL, and
replaced (as a supervisor restarts a worker) once its heartbeat is stale: the fleet's first tick after that puts the
killed night back in the queue, a worker takes it, and only then do the answers come, so that the retried night
spends before the fleet reaches its cap, as the uninterrupted night it is compared with does. Every night completes. Checked from the database: every
workspace's night is done; no two attempts on one workspace overlapped (the night log, with the kill's moment as the
killed attempt's end); the recorded and the billed spend stay within the cap plus one call per worker; the killed
night, finished by another worker, wrote the same files as an uninterrupted night of the same workspace.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from dreaming.graph.verify import MAX_OUTPUT_TOKENS as VERIFY_MAX_OUTPUT_TOKENS
from tests._slow_server import (
    LOOPBACK_PRICE_PER_MILLION,
    LOOPBACK_WORKSPACE_CONFIG,
    SlowChatServer,
    completion_tokens,
)
from tests._workspaces import NIGHT, build_verdict_workspace, snapshot
from tests.fleet._fleet import rows, without_run_ids, write_fleet

ROOT = Path(__file__).resolve().parents[2]
FLEET_SIZE = 60
WORKERS = 3
CALLS_PER_NIGHT = 4
"""One asset in build_verdict_workspace gives four passing insights, each verified by one model call."""
PER_RUN = ("memory/.dreams/verdict-tallies.json", "memory/.dreams/dreaming-budget.json")
"""Verdict tallies name inodes and mtimes; the reference night spends in its own ledger file, the fleet's in Postgres."""
STALLED_AFTER_S = 3
"""A worker silent this many seconds is dead (heartbeats every 0.5 s)."""
HANG_GUARD_S = 1800.0
"""How long one wait may last before the test calls it a hang (the whole test takes about 20 s)."""


def _env(url: str, server: SlowChatServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DREAMING_", "TAVILY_"))}
    return env | {
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "DREAMING_DATABASE_URL": url,
        "OPENAI_API_KEY": "sk-test-loopback",
        "OPENAI_BASE_URL": server.base_url,
    }


def _dreaming(args: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "dreaming", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _start_worker(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _stable(files: dict[str, bytes]) -> dict[str, object]:
    """Return ``files`` with each cached model reply's arrival time and LangChain message id left out.

    Both are the reply's own, not the night's: the same request answered twice arrives at two moments.
    """
    out: dict[str, object] = dict(files)
    for name, data in files.items():
        if name.startswith("memory/.dreams/llm-cache/"):
            entry = json.loads(data)
            del entry["created_at"], entry["message"]["data"]["id"]
            out[name] = entry
    return out


def _night_text(diary: Path) -> str:
    """Return the diary without its run id and the budget's window line (the fleet's window, not the night's)."""
    text = without_run_ids(diary.read_text())
    text = re.sub(r"(- LLM spend: \$[0-9.]+ this run), .*\n", r"\1\n", text)
    return text.replace(
        "- Budget: the fleet's global ledger in Postgres (its cap and window), shared by every worker.\n", ""
    )


def _wait(condition: str, check: Callable[[], object], workers: dict[int, subprocess.Popen[str]]) -> None:
    """Poll until ``check()`` holds; fail as soon as a worker has died on its own (nothing else would make progress).

    Not a timing assertion: a loaded machine only makes the wait longer. A night that never ends is left to the
    run's own limit (``HANG_GUARD_S`` below), which only a hang reaches.
    """
    guard = time.monotonic() + HANG_GUARD_S
    while not check():
        for proc in workers.values():
            if proc.poll() is not None:
                pytest.fail(f"a worker exited ({proc.returncode}) while waiting for {condition}")
        if time.monotonic() > guard:
            pytest.fail(f"hung: {condition} never came")
        time.sleep(0.2)


@pytest.mark.slow
def test_three_workers_dream_sixty_workspaces_under_one_cap_and_survive_a_sigkill(pg_url: str, tmp_path: Path) -> None:
    one_call = VERIFY_MAX_OUTPUT_TOKENS * LOOPBACK_PRICE_PER_MILLION / 1e6
    wanted = FLEET_SIZE * CALLS_PER_NIGHT * one_call
    cap = round(wanted / 2 + one_call / 2, 6)  # about half of it, never a whole number of calls
    fleet_dir = tmp_path / "fleet"
    paths = []
    for i in range(FLEET_SIZE):
        ws = build_verdict_workspace(fleet_dir / "agents" / f"agent{i:02d}" / "workspace", assets=("A0",))
        (ws / "dreaming.toml").write_text(LOOPBACK_WORKSPACE_CONFIG)
        paths.append(ws)
    pristine = tmp_path / "pristine"
    shutil.copytree(fleet_dir / "agents", pristine)  # every workspace as it was before its night
    fleet = write_fleet(fleet_dir, pg_url, f'[budget]\nmax_cost_usd = {cap!r}\nwindow_minutes = 600\n'
                                           '[[workspaces]]\npath = "agents/*/workspace"\n')  # fmt: skip
    with SlowChatServer() as server:
        env = _env(pg_url, server)
        _dreaming(["fleet", "init", "--fleet", str(fleet)], env, fleet_dir)
        assert f"{FLEET_SIZE} queued" in _dreaming(["fleet", "enqueue", "--fleet", str(fleet), "--now", NIGHT],
                                                   env, fleet_dir)  # fmt: skip
        worker = [sys.executable, "-m", "dreaming", "worker", "--fleet", str(fleet), "--heartbeat", "0.5",
                  "--stalled-after", str(STALLED_AFTER_S), "--tick-seconds", "1"]  # fmt: skip
        workers = {p.pid: p for p in (_start_worker(worker, env, fleet_dir) for _ in range(WORKERS))}
        try:
            # Every answer is held: each worker ends up mid-night with a verify call in flight.
            _wait("a call in flight from every worker", lambda: len(server.requests) >= WORKERS, workers)
            running = rows(pg_url, "SELECT workspace, pid, worker_id FROM dreaming_night_log WHERE outcome = 'running'")
            assert len(running) == WORKERS and {pid for _, pid, _ in running} == set(workers)
            victim_ws, victim_pid, victim_worker = sorted(running)[0]
            workers[victim_pid].send_signal(signal.SIGKILL)
            workers.pop(victim_pid).communicate(timeout=60)
            ((killed_at,),) = rows(pg_url, "SELECT clock_timestamp()")
            # As a supervisor (systemd's Restart=always) would, a new worker replaces the dead one, once the dead
            # one's heartbeat is stale: the two others are still waiting on their answers, so the replacement's
            # first tick finds the dead worker, puts its night back in the queue and takes it.
            _wait("the killed worker's heartbeat to go stale", lambda: not rows(
                pg_url, "SELECT 1 FROM procrastinate_workers WHERE id = %s"
                " AND last_heartbeat > now() - make_interval(secs => %s)", victim_worker, STALLED_AFTER_S,
            ), workers)  # fmt: skip
            replacement = _start_worker(worker, env, fleet_dir)
            workers[replacement.pid] = replacement
            _wait("the killed night to be taken again", lambda: rows(
                pg_url, "SELECT 1 FROM dreaming_night_log WHERE workspace = %s AND attempt > 1", victim_ws
            ), workers)  # fmt: skip
            # Only now the answers come: the retried night spends before the fleet's cap is reached, as the
            # uninterrupted night it is compared with does.
            server.answer_now()
            server.release()
            _wait("every night done", lambda: rows(
                pg_url, "SELECT count(DISTINCT workspace) FROM dreaming_night_log WHERE outcome = 'done'"
            )[0][0] == FLEET_SIZE, workers)  # fmt: skip
        finally:
            for proc in workers.values():
                proc.send_signal(signal.SIGTERM)
            for proc in workers.values():
                _, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, err[-3000:]
        received = server.requests

    log = rows(pg_url, "SELECT workspace, pid, attempt, started_at, finished_at, outcome, exit_code "
                       "FROM dreaming_night_log ORDER BY started_at")  # fmt: skip
    by_workspace: dict[str, list[tuple[object, ...]]] = defaultdict(list)
    for row in log:
        by_workspace[str(row[0])].append(row)
    assert set(by_workspace) == {str(p) for p in paths}
    for attempts in by_workspace.values():
        assert [a[5] for a in attempts].count("done") == 1, attempts
        for earlier, later in itertools.pairwise(attempts):  # never two at once
            end = earlier[4] if earlier[4] is not None else killed_at
            started = later[3]
            assert isinstance(end, datetime) and isinstance(started, datetime) and end <= started, attempts
    victim = by_workspace[victim_ws]
    assert victim[0][1] == victim_pid and victim[0][5] in ("running", "stalled")  # the killed attempt, unfinished
    assert victim[-1][5] == "done" and victim[-1][1] != victim_pid  # finished by another worker
    assert victim[-1][6] == 0  # its model work was allowed: the same night as one never interrupted

    spend_rows = rows(pg_url, "SELECT entry FROM dreaming_budget_entries")
    entries = [e for (e,) in spend_rows if not e.get("cache_hit")]
    spend = math.fsum(e["cost_usd"] for e in entries)
    billed = math.fsum(completion_tokens(body) * LOOPBACK_PRICE_PER_MILLION / 1e6 for body in received)
    print(f"fleet spend ${spend:.4f} (billed ${billed:.4f}, {len(received)} calls) against a cap of ${cap:.4f}")
    assert len(entries) == len(received) > 0  # every request the server saw is in the one ledger
    assert spend <= cap + WORKERS * one_call and billed <= cap + WORKERS * one_call
    assert spend < wanted  # the cap really stopped some of the fleet's model work
    assert any(row[6] == 4 for row in log)  # ... and the nights it stopped say so
    assert all("Dream Diary" in (ws / "DREAMS.md").read_text() for ws in paths)

    # The killed night, finished elsewhere, against the same workspace dreamed at once by `dreaming run`.
    victim_path = Path(victim_ws)
    reference = tmp_path / "reference" / "workspace"
    shutil.copytree(pristine / victim_path.relative_to(fleet_dir / "agents"), reference)
    with SlowChatServer() as server:
        server.answer_now()
        env = {k: v for k, v in _env(pg_url, server).items() if k != "DREAMING_DATABASE_URL"}
        _dreaming(["run", "--workspace", str(reference), "--now", NIGHT], env, tmp_path)
    assert _stable(snapshot(victim_path, exclude=PER_RUN)) == _stable(snapshot(reference, exclude=PER_RUN))
    assert _night_text(victim_path / "DREAMS.md") == _night_text(reference / "DREAMS.md")
