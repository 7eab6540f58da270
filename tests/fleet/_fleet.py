"""Helpers of the distributed fleet's tests: a fleet file, an in-process worker, rows of the fleet's tables."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from dreaming.fleet import load_fleet
from dreaming.fleet.postgres import FleetInit, WorkerSettings, init_fleet, run_worker

FAST = WorkerSettings(heartbeat_seconds=1.0, stalled_after_seconds=5.0, tick=False, once=True)
"""A worker that runs the nights queued now, one at a time, and stops (no tick: the tests drive it)."""


def write_fleet(root: Path, url: str, body: str) -> Path:
    """Write ``root/fleet.toml`` naming the database ``url``, with ``body`` (workspaces, budget) after it."""
    path = root / "fleet.toml"
    path.write_text(f'[fleet]\ndatabase_url = "{url}"\n{body}', encoding="utf-8")
    return path


def init(url: str, fleet_file: Path, now: datetime) -> FleetInit:
    """Run ``dreaming fleet init`` on ``fleet_file`` at ``now``."""
    return init_fleet(url, load_fleet(fleet_file, distributed=True), now=now)


def work(url: str, settings: WorkerSettings = FAST) -> int:
    """Run a worker in this process until the queue is empty; return how many nights it ran."""
    return asyncio.run(run_worker(url, settings=settings, env={}, install_signal_handlers=False))


def rows(url: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    """Return the rows of ``query``."""
    with psycopg.connect(url) as conn:
        return conn.execute(query.encode(), params or None).fetchall()


def run(url: str, statement: str, *params: Any) -> None:
    """Execute ``statement`` and commit."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement.encode(), params or None)


def without_run_ids(text: str) -> str:
    """Return ``text`` with every run id marker of a diary made the same."""
    return re.sub(r"<!-- dreaming:run:[^ ]+ -->", "<!-- dreaming:run:RUN -->", text)
