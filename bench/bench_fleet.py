"""The distributed fleet's throughput: nights per minute with 1, 2 and 4 ``dreaming worker`` processes (issue 15).

Needs the machine's Postgres (``DREAMING_BENCH_DATABASE_URL``, default ``postgresql://postgres@127.0.0.1:5432/test``;
each run in a schema of its own, dropped after); without it the benchmark says so and skips. For each worker count:
``200 * scale`` generated workspaces (one asset, 50 verdicts, deterministic nights, no model), ``fleet init``,
``fleet enqueue``, then the workers started together with ``--once`` (each takes nights until the queue is empty,
then exits). Nights per minute = nights done / the wall time from the workers' start to the last one's exit, so a
worker's start-up (about two seconds of imports) counts. Wall time is the measure here, not CPU: throughput is what
a fleet buys. Also prints the CPU per night (all workers' CPU / nights) and what each night cost Postgres in
connections: the figures the closing note extrapolates to 100,000 workspaces from.
"""

from __future__ import annotations

import os
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from tests._workspaces import build_verdict_workspace  # the tests' small verdict workspace (run from the repo root)

SERVER_URL = os.environ.get("DREAMING_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
NIGHT = "2026-09-01T03:00:00+00:00"
WORKERS = (1, 2, 4)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DREAMING_", "TAVILY_"))}
    return env


def _dreaming(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dreaming", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, check=True)  # fmt: skip


def _one(tmp: Path, pristine: Path, n: int, workers: int) -> tuple[float, float]:
    import psycopg

    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(SERVER_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    root = tmp / f"fleet-{workers}"
    try:
        for i in range(n):
            shutil.copytree(pristine, root / "agents" / f"a{i:03d}" / "workspace")
        url = f"{SERVER_URL}?options={quote(f'-csearch_path={schema}')}"
        env = _env() | {"DREAMING_DATABASE_URL": url}
        fleet = root / "fleet.toml"
        fleet.write_text('[[workspaces]]\npath = "agents/*/workspace"\n')
        _dreaming(["fleet", "init", "--fleet", str(fleet)], env, root)
        _dreaming(["fleet", "enqueue", "--fleet", str(fleet), "--now", NIGHT], env, root)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "dreaming", "worker", "--fleet", str(fleet), "--once"],
                env=env,
                cwd=root,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(workers)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=1800)
            if proc.returncode != 0:
                raise RuntimeError(f"a worker failed ({proc.returncode}):\n{err[-3000:]}")
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT count(*) FROM dreaming_night_log WHERE outcome = 'done'").fetchone()
        done = int(row[0]) if row else 0
        if done != n:
            raise RuntimeError(f"{done} of {n} nights done")
        return wall, cpu
    finally:
        shutil.rmtree(root, ignore_errors=True)
        with psycopg.connect(SERVER_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def run(scale: float) -> None:
    try:
        import psycopg

        psycopg.connect(SERVER_URL, connect_timeout=5).close()
    except Exception as exc:  # any reason means: no fleet benchmark here
        print(f"  skipped: no Postgres at {SERVER_URL} ({exc})")
        return
    n = max(8, int(200 * scale))
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as name:
        tmp = Path(name)
        pristine = tmp / "pristine"
        build_verdict_workspace(pristine, assets=("A0",))
        base = None
        for workers in WORKERS:
            wall, cpu = _one(tmp, pristine, n, workers)
            rate = n / wall * 60
            base = base or rate
            print(f"  {workers} worker{'s' if workers > 1 else ' '}: {n} nights in {wall:6.1f} s wall = "
                  f"{rate:6.1f} nights/min ({rate / base:.2f}x one worker); CPU {cpu / n:.2f} s a night "
                  f"on {os.cpu_count()} cores")  # fmt: skip
