"""``dreaming serve``: a long-running scheduler that starts each workspace's night when its cron fires.

Each workspace has a cron read in its timezone (:class:`ScheduledWorkspace`; the fleet config's ``cron`` and
``timezone``, else the workspace's own ``[schedule] cron`` and ``timezone``). :meth:`Scheduler.tick` starts every
night due at ``now`` (at most ``concurrency`` run at once; the rest wait for a free slot) and skips, with a log line,
a workspace whose lock is held or whose previous night is still running. Slots missed while the scheduler was busy
or asleep are coalesced into one night. The clock and the night runner are injected, so the loop is tested without
sleeping; the command line hands in the fleet's child-process runner (each night ``python -m dreaming run``, with
the fleet's global budget ledger in its environment).

:meth:`Scheduler.run_forever` sleeps until the next due time or the stop event, and on stop waits for the running
nights to finish (it never kills one mid-night). :class:`HealthServer` answers ``GET /healthz`` on 127.0.0.1 with
``{"ok": true, "running": [...], "next": {workspace: iso time}}``.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from dreaming.config import load_config, next_run, validate_cron, zone_info
from dreaming.memory import ConsolidationLock, Workspace

__all__ = [
    "DEFAULT_HEALTH_PORT",
    "HealthServer",
    "NightOutcome",
    "ScheduledWorkspace",
    "Scheduler",
    "StopEvent",
    "TickReport",
    "lock_holder",
    "scheduled_workspace",
]

DEFAULT_HEALTH_PORT = 8767
"""Where ``dreaming serve`` answers ``GET /healthz``: not ``dreaming mcp --http``'s (8765) nor ``dreaming view``'s
(8766), so the three run on one machine with their defaults."""
MAX_SLEEP_SECONDS = 60.0
"""The loop wakes at least this often, so a clock jump (a suspended machine) is noticed within a minute."""

_log = logging.getLogger("dreaming.serve")


class NightOutcome(Protocol):
    """What a night runner returns (the fleet's ``NightResult`` is one)."""

    @property
    def outcome(self) -> str:
        """``done``, ``busy`` (another run held the lock: exit 3) or ``failed``."""
        ...

    @property
    def exit_code(self) -> int:
        """The night's own exit code."""
        ...

    @property
    def detail(self) -> str:
        """Why it did not finish, or a note."""
        ...


class StopEvent(Protocol):
    """What :meth:`Scheduler.run_forever` waits on (a :class:`threading.Event` is one)."""

    def is_set(self) -> bool:
        """Return True once the scheduler should stop."""
        ...

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds or until set; return whether it is set."""
        ...


NightRunner = Callable[[Path], NightOutcome]
"""Run one night on a workspace and return how it ended (called from a worker thread)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScheduledWorkspace:
    """One workspace of the scheduler and when its night runs."""

    path: Path
    """The workspace folder."""
    cron: str
    """A valid five-field cron expression, read in ``timezone``."""
    timezone: str
    """An IANA timezone."""


def scheduled_workspace(path: Path, *, cron: str | None = None, timezone: str | None = None) -> ScheduledWorkspace:
    """Return ``path``'s schedule: ``cron``/``timezone`` when given, else its dreaming.toml's (read, never written).

    Raises:
        ConfigError: the cron expression or the timezone is invalid, or dreaming.toml is not valid TOML.
    """
    config = load_config(Workspace.at(path).config_file) if cron is None or timezone is None else None
    expression = cron if cron is not None else config.schedule.cron if config is not None else ""
    zone = timezone if timezone is not None else config.timezone if config is not None else ""
    zone_info(zone)
    return ScheduledWorkspace(path=path, cron=validate_cron(expression), timezone=zone)


def lock_holder(workspace: Path) -> str:
    """Return who holds ``workspace``'s consolidation lock (``<pid>:<ms>``, or ``unknown``), or ``""`` when free.

    A non-blocking probe: the lock file left by a dead holder reads as free (the kernel released its ``flock``).
    """
    path = Workspace.at(workspace).lock_file
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return ""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return ConsolidationLock(path).holder() or "unknown"
    except OSError:
        return ""
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return ""
    finally:
        os.close(fd)


@dataclass(frozen=True, kw_only=True, slots=True)
class TickReport:
    """What one :meth:`Scheduler.tick` did."""

    started: list[Path] = field(default_factory=list)
    """Nights started (or queued for a free slot when ``concurrency`` are running), in due order."""
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    """Workspaces due but skipped for this slot, with the reason."""


class Scheduler:
    """Start each workspace's night when its cron fires; at most ``concurrency`` at once.

    Args:
        workspaces: the workspaces and their schedules.
        night: runs one night (the command line passes the fleet's child-process runner).
        concurrency: how many nights run at once (at least 1).
        clock: the current time (aware); the first due times are computed from it.
        is_locked: returns the holder of a workspace's lock, or ``""`` (default: :func:`lock_holder`).
    """

    def __init__(
        self,
        workspaces: Iterable[ScheduledWorkspace],
        *,
        night: NightRunner,
        concurrency: int,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        is_locked: Callable[[Path], str] = lock_holder,
    ) -> None:
        self._entries = {entry.path: entry for entry in workspaces}
        self._night = night
        self._clock = clock
        self._is_locked = is_locked
        self._mutex = threading.Lock()
        self._running: set[Path] = set()
        self._pending: dict[Path, Future[NightOutcome | None]] = {}
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="dreaming-serve")
        self.finished: list[tuple[Path, NightOutcome]] = []
        """Every night that ended, with its outcome, in the order they ended."""
        start = clock()
        self._next = {path: next_run(e.cron, e.timezone, start) for path, e in self._entries.items()}

    def next_runs(self) -> dict[Path, datetime]:
        """Return each workspace's next due time (UTC)."""
        with self._mutex:
            return dict(self._next)

    def running(self) -> list[Path]:
        """Return the workspaces whose night is running now (not those waiting for a free slot)."""
        with self._mutex:
            return sorted(self._running)

    def waiting(self) -> list[Path]:
        """Return the workspaces whose night is started or queued and not finished."""
        with self._mutex:
            return sorted(path for path, future in self._pending.items() if not future.done())

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every started night has finished (or ``timeout`` seconds); return whether they all have."""
        with self._mutex:
            futures = list(self._pending.values())
        return not wait_futures(futures, timeout=timeout).not_done

    def tick(self, now: datetime) -> TickReport:
        """Start every night due at ``now``; skip (and log) a workspace still dreaming or whose lock is held.

        A workspace's next due time becomes its first after ``now``, so missed slots make one night, not many.
        """
        report = TickReport()
        with self._mutex:
            due = sorted((at, path) for path, at in self._next.items() if at <= now)
            for _, path in due:
                entry = self._entries[path]
                self._next[path] = next_run(entry.cron, entry.timezone, now)
                future = self._pending.get(path)
                if future is not None and not future.done():
                    report.skipped.append((path, "its previous night is still running"))
                    continue
                holder = self._is_locked(path)
                if holder:
                    report.skipped.append((path, f"busy: run {holder} holds the lock"))
                    continue
                self._pending[path] = self._pool.submit(self._run, path)
                report.started.append(path)
        for path in report.started:
            _log.info("started the night of %s", path)
        for path, reason in report.skipped:
            _log.warning("skipped the night of %s for this slot: %s", path, reason)
        return report

    def _run(self, path: Path) -> NightOutcome | None:
        with self._mutex:
            self._running.add(path)
        try:
            result = self._night(path)
        except Exception:  # a runner's bug must not kill the scheduler's worker silently
            _log.exception("the night of %s could not run", path)
            return None
        finally:
            with self._mutex:
                self._running.discard(path)
        with self._mutex:
            self.finished.append((path, result))
        if result.outcome == "busy":
            _log.warning("skipped the night of %s: another run holds its lock (exit 3)", path)
        elif result.outcome == "failed":
            _log.error("the night of %s failed (exit %d): %s", path, result.exit_code, result.detail)
        else:
            _log.info("the night of %s is done (exit %d)", path, result.exit_code)
        return result

    def seconds_until_next(self, now: datetime) -> float:
        """Return how long to sleep from ``now``: until the earliest due time, at most :data:`MAX_SLEEP_SECONDS`."""
        with self._mutex:
            earliest = min(self._next.values(), default=now + timedelta(seconds=MAX_SLEEP_SECONDS))
        return min(MAX_SLEEP_SECONDS, max(0.0, (earliest - now).total_seconds()))

    def run_forever(self, stop: StopEvent) -> None:
        """Tick at each due time until ``stop`` is set, then wait for the running nights to finish."""
        try:
            while not stop.is_set():
                self.tick(self._clock())
                stop.wait(self.seconds_until_next(self._clock()))
        finally:
            self.close()

    def close(self) -> None:
        """Start nothing more and wait for the started nights (queued ones included) to finish."""
        self._pool.shutdown(wait=True)

    def health(self) -> dict[str, Any]:
        """Return the ``/healthz`` answer: running nights and each workspace's next run (ISO, UTC)."""
        return {
            "ok": True,
            "running": [str(path) for path in self.running()],
            "next": {str(path): at.isoformat() for path, at in sorted(self.next_runs().items())},
        }


class HealthServer:
    """``GET /healthz`` on 127.0.0.1, answered from a daemon thread.

    Args:
        scheduler: whose state it reports.
        port: the port; 0 picks a free one (read it back from :attr:`port`).
    """

    def __init__(self, scheduler: Scheduler, port: int = DEFAULT_HEALTH_PORT) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # only `dreaming serve` answers HTTP

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] != "/healthz":
                    self.send_error(404)
                    return
                body = json.dumps(scheduler.health()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                _log.debug("healthz: " + format, *args)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="dreaming-healthz", daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._server.server_address[1])

    def start(self) -> HealthServer:
        """Start answering; return self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering and close the socket."""
        self._server.shutdown()
        self._server.server_close()
