"""``dreaming fleet run``, ``serve``, ``schedule``; the distributed fleet's ``fleet init|enqueue|status``, ``worker``.

``fleet run``: many workspaces, one budget; ``serve``: the fleet on its crons; the distributed fleet runs on Postgres.
Each command imports the fleet's machinery (processes, threads, the health server; psycopg and procrastinate for the
distributed fleet) when it runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from dreaming.cli.options import (
    EXIT_FAILED,
    EXIT_USAGE,
    JsonOption,
    NowOption,
    WorkspaceOption,
    err_console,
    open_workspace,
    parse_now,
    print_json,
)
from dreaming.config import next_run
from dreaming.errors import ConfigError
from dreaming.serve import DEFAULT_HEALTH_PORT

if TYPE_CHECKING:
    from dreaming.fleet import FleetBudget, FleetConfig
    from dreaming.fleet.postgres import EnqueueReport

__all__ = ["register"]

fleet_app = typer.Typer(help="Many workspaces: one night each, one global budget.", no_args_is_help=True)


@fleet_app.command("run")
def fleet_run(
    workspaces: Annotated[
        list[str] | None,
        typer.Option("--workspaces", help="A glob of workspace folders, relative to the current folder (repeatable)."),
    ] = None,
    fleet: Annotated[
        Path | None, typer.Option("--fleet", help="A fleet config (TOML): [[workspaces]], [budget] ledger and cap.")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-j", min=1, help="Nights at once (default: the fleet's, or 4).")
    ] = None,
    now: NowOption = None,
    json_out: JsonOption = False,
) -> None:
    """Dream one night on every workspace, each in its own process; exit with the worst outcome.

    Exit codes, least severe first: 0 all done, 4 the budget refused some night's model work, 3 a workspace was
    busy (another run held its lock), 1 a night failed (whatever its own code); 2 is this command's usage error.
    """
    from dreaming.fleet import expand_workspaces, fleet_exit_code, ledger_spend, load_fleet, render_results, run_fleet

    if now is not None:
        parse_now(now)  # refuse a bad --now once, not once per night
    if not workspaces and fleet is None:
        err_console.print("[red]error:[/] name the workspaces: --workspaces GLOB or --fleet FILE")
        raise typer.Exit(EXIT_USAGE)
    budget: FleetBudget | None = None
    jobs = concurrency
    try:
        folders: list[Path] = []
        if fleet is not None:
            config = load_fleet(fleet)
            folders += [member.path for member in config.members]
            budget = config.budget
            jobs = jobs or config.concurrency
            if budget is not None:
                budget.ledger_file().parent.mkdir(parents=True, exist_ok=True)
        if workspaces:
            folders += expand_workspaces(workspaces, base=Path.cwd())
    except ConfigError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from exc
    folders = list(dict.fromkeys(folders))
    results = run_fleet(folders, concurrency=jobs or 4, budget=budget, env=os.environ, now=now)
    code = fleet_exit_code(results)
    if json_out:
        payload: dict[str, object] = {"exit_code": code, "nights": [r.to_json() for r in results]}
        if budget is not None:
            at = parse_now(None)
            payload["budget"] = {
                "ledger": str(budget.ledger), "cap_usd": budget.max_cost_usd,
                "window_minutes": budget.window_minutes, "window_spend_usd": ledger_spend(budget, at),
            }  # fmt: skip
        print_json(payload)
    else:
        typer.echo(render_results(results))
        if budget is not None:
            spend = ledger_spend(budget, parse_now(None))
            typer.echo(f"global budget: ${spend:.4f} of ${budget.max_cost_usd:g} in the last "
                       f"{budget.window_minutes:g} min ({budget.ledger})")  # fmt: skip
    raise typer.Exit(code)


FleetFileOption = Annotated[
    Path | None,
    typer.Option("--fleet", help="The fleet file (TOML): [fleet] database_url, [[workspaces]], [budget]."),
]


def _fleet_database(fleet: Path | None) -> tuple[str, FleetConfig | None]:
    """Return the fleet's Postgres URL (``DREAMING_DATABASE_URL`` wins) and its fleet file, read; exit 2 if unusable."""
    from dreaming.fleet import load_fleet
    from dreaming.fleet.postgres import database_url

    try:
        config = load_fleet(fleet, distributed=True) if fleet is not None else None
        url = database_url(config, os.environ)
    except ConfigError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from exc
    for warning in config.warnings if config is not None else ():
        err_console.print(f"[yellow]warning:[/] {escape(f'fleet config {fleet}: {warning}')}", highlight=False)
    return url, config


@contextlib.contextmanager
def _fleet_errors() -> Iterator[None]:
    """Exit 2 on a usage error, 1 when the fleet's database fails: one line each, no traceback."""
    import psycopg

    try:
        yield
    except ConfigError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from exc
    except psycopg.Error as exc:
        err_console.print(f"[red]error:[/] the fleet database failed: {escape(str(exc).strip())}", highlight=False)
        raise typer.Exit(EXIT_FAILED) from exc


@fleet_app.command("init")
def fleet_init(fleet: FleetFileOption = None, json_out: JsonOption = False) -> None:
    """Set up the fleet's Postgres and register the fleet file's workspaces and [budget]; running it again is safe.

    Applies the fleet's migrations, procrastinate's schema and LangGraph's checkpoint tables; registers each
    workspace with its cron and timezone (a workspace removed from the file is unregistered); writes [budget] as the
    fleet's global budget (without it, each workspace keeps its own ledger) and [fleet] keep_days as the retention
    the workers' daily prune applies (default 30). Without --fleet, only the tables.
    """
    from dreaming.fleet.postgres import init_fleet

    url, config = _fleet_database(fleet)
    with _fleet_errors():
        result = init_fleet(url, config, now=parse_now(None))
    if json_out:
        print_json(result.to_json())
        return
    lines = [f"migrations applied: {', '.join(map(str, result.migrations)) or 'none (up to date)'}"]
    lines.append("job queue schema: " + ("created" if result.queue_schema else "present"))
    for label, paths in (("registered", result.registered), ("updated", result.updated),
                         ("unregistered", result.unregistered)):  # fmt: skip
        lines += [f"{label}: {path}" for path in paths]
    lines.append(f"global budget: {result.budget}")
    if result.keep_days is not None:
        lines.append(f"retention: {result.keep_days} days" + (" (changed)" if result.retention_changed else ""))
    lines.append("changed" if result.changed else "nothing changed")
    typer.echo("\n".join(lines))


@fleet_app.command("enqueue")
def fleet_enqueue(fleet: FleetFileOption = None, now: NowOption = None, json_out: JsonOption = False) -> None:
    """Queue a night now for every registered workspace ("dream now" for a fleet); the workers run them.

    A workspace whose night is already queued or running is skipped. The nights' 'now' is --now (to the minute).
    """
    import asyncio

    import psycopg

    from dreaming.fleet.postgres import enqueue_now, fleet_queue, require_schema

    url, _ = _fleet_database(fleet)
    at = parse_now(now)

    async def enqueue() -> EnqueueReport:
        queue = fleet_queue(url)
        async with queue.app.open_async():
            return await enqueue_now(queue, now=at)

    with _fleet_errors():
        with psycopg.connect(url) as conn:
            require_schema(conn)
        report = asyncio.run(enqueue())
    if json_out:
        print_json(report.to_json())
        return
    lines = [f"queued: {path}" for path in report.enqueued] + [f"skipped (already queued or running): {path}"
                                                                for path in report.skipped]  # fmt: skip
    lines.append(f"{len(report.enqueued)} queued, {len(report.skipped)} skipped; slot {report.slot.isoformat()}")
    typer.echo("\n".join(lines))


@fleet_app.command("status")
def fleet_status(fleet: FleetFileOption = None, json_out: JsonOption = False) -> None:
    """Show each registered workspace's nights (queued, running, failed, done; the last one) and the global spend.

    The failed and done counts cover the retention period ([fleet] keep_days, default 30 days): the workers prune
    older finished jobs once a day. The last night is kept whatever its age.
    """
    from dreaming.fleet.postgres import fleet_status as read_status

    url, _ = _fleet_database(fleet)
    with _fleet_errors():
        status = read_status(url, now=parse_now(None))
    if json_out:
        print_json(status)
        return
    typer.echo(_render_status(status))


def _render_status(status: dict[str, Any]) -> str:
    head = ("workspace", "queued", "running", "failed", "done", "last night")
    rows = []
    for w in status["workspaces"]:
        night = w["last_night"]
        last = "-"
        if night is not None:
            code = "" if night["exit_code"] is None else f", exit {night['exit_code']}"
            last = (
                f"{night['slot']} {night['outcome']}{code} ({night['host']}:{night['pid']}, attempt {night['attempt']})"
            )
        rows.append((w["workspace"], str(w["queued"]), str(w["running"]), str(w["failed"]), str(w["done"]), last))
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(5)]
    lines = ["  ".join([*(cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)), row[5]]).rstrip()
             for row in [head, *rows]]  # fmt: skip
    if status["keep_days"] is not None:
        days = status["keep_days"]
        lines.append(f"failed and done: the jobs of the last {days} days (older ones are pruned once a day)")
    budget = status["budget"]
    if budget is None:
        lines.append("global budget: none (each workspace keeps its own ledger)")
    else:
        spend, reserved = budget["window_spend_usd"], budget["reserved_usd"]
        lines.append(f"global budget: ${spend:.4f} of ${budget['cap_usd']:g} in the last "
                     f"{budget['window_minutes']:g} min (${reserved:.4f} of it held by calls in flight)")  # fmt: skip
    return "\n".join(lines)


def worker(
    fleet: FleetFileOption = None,
    heartbeat: Annotated[
        float, typer.Option("--heartbeat", min=0.1, help="Seconds between this worker's heartbeats.")
    ] = 10.0,
    stalled_after: Annotated[
        float,
        typer.Option(
            "--stalled-after", min=0.2, help="A worker silent this many seconds is dead: its night is retried."
        ),
    ] = 60.0,
    tick_seconds: Annotated[
        int, typer.Option("--tick-seconds", min=1, max=60, help="How often the tick runs (a divisor of 60).")
    ] = 60,
    once: Annotated[
        bool, typer.Option("--once", help="Run the nights queued now, one at a time, then exit (no tick).")
    ] = False,
    max_nights: Annotated[
        int | None,
        typer.Option("--max-nights", min=1, help="Exit after this many night jobs (busy or failed attempts count)."),
    ] = None,
) -> None:
    """Run the fleet's nights from the Postgres queue, one at a time, until SIGTERM (the running night finishes).

    Each night runs under the workspace's Postgres advisory lock, with its checkpoints in Postgres; the worker also
    runs the tick (queueing each workspace's nights on its cron, retrying the nights of dead workers). Start as many
    workers as the machines allow; they need only the database URL (--fleet's [fleet] database_url or
    DREAMING_DATABASE_URL) and the same workspace paths.
    """
    import asyncio

    from dreaming.fleet.postgres import WorkerSettings, run_worker

    url, _ = _fleet_database(fleet)
    with _fleet_errors():
        settings = WorkerSettings(
            heartbeat_seconds=heartbeat, stalled_after_seconds=stalled_after, tick_seconds=tick_seconds,
            tick=not once, once=once, max_nights=max_nights,
        )  # fmt: skip
    for name in ("dreaming.fleet", "procrastinate"):
        logging.getLogger(name).setLevel(logging.INFO)  # main() configured the root logger (WARNING)
    with _fleet_errors():
        nights = asyncio.run(run_worker(url, settings=settings))
    err_console.print(f"worker stopped after {nights} nights", highlight=False, markup=False)


def serve(
    fleet: Annotated[Path, typer.Option("--fleet", help="The fleet config (TOML): workspaces, crons, budget.")],
    health_port: Annotated[
        int,
        typer.Option("--health-port", min=0, max=65535, help="GET /healthz on 127.0.0.1 at this port (0: a free one)."),
    ] = DEFAULT_HEALTH_PORT,
) -> None:
    """Run the fleet on its schedules until SIGTERM or Ctrl-C, then wait for the running nights and exit 0.

    Each workspace's night starts when its cron fires in its timezone (the fleet config's cron and timezone, else the
    workspace's schedule cron and timezone), each in its own process under the fleet's global budget, at most the
    fleet's concurrency at once. A workspace whose lock is held is skipped for that slot, with a log line.
    """
    from dreaming.fleet import load_fleet, run_fleet
    from dreaming.serve import HealthServer, Scheduler, scheduled_workspace

    try:
        config = load_fleet(fleet)
        entries = [scheduled_workspace(m.path, cron=m.cron, timezone=m.timezone) for m in config.members]
        if config.budget is not None:
            config.budget.ledger_file().parent.mkdir(parents=True, exist_ok=True)
    except ConfigError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from exc
    budget, env = config.budget, dict(os.environ)
    logging.getLogger("dreaming.serve").setLevel(logging.INFO)  # main() configured the root logger (WARNING)
    scheduler = Scheduler(
        entries,
        night=lambda path: run_fleet([path], concurrency=1, budget=budget, env=env, new_session=True)[0],
        concurrency=config.concurrency,
    )
    try:
        health = HealthServer(scheduler, health_port).start()
    except OSError as exc:
        scheduler.close()
        err_console.print(f"[red]error:[/] cannot serve /healthz on 127.0.0.1:{health_port}: {exc}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from exc
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        logging.getLogger("dreaming.serve").info("%s: waiting for the running nights", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for entry in entries:
        at = scheduler.next_runs()[entry.path].isoformat()
        err_console.print(f"{entry.path}: {entry.cron} in {entry.timezone}, next {at}", highlight=False, markup=False)
    err_console.print(f"healthz: http://127.0.0.1:{health.port}/healthz", highlight=False, markup=False)
    try:
        scheduler.run_forever(stop)
    finally:
        health.stop()


def register(app: typer.Typer) -> None:
    """Add ``fleet`` (with ``fleet run``), ``serve`` and ``schedule`` to ``app``."""
    app.add_typer(fleet_app, name="fleet")
    app.command()(serve)
    app.command()(worker)

    @app.command()
    def schedule(
        workspace: WorkspaceOption = Path("."),
        install: Annotated[
            bool, typer.Option("--install", help="Write the systemd user units to ~/.config/systemd/user/.")
        ] = False,
        due: Annotated[
            bool, typer.Option("--due", help="Exit 0 when the schedule fires this minute, else 1 (cron's guard).")
        ] = False,
        json_out: JsonOption = False,
    ) -> None:
        """Print the nightly job's systemd user timer and crontab line (``[schedule] cron``, in its timezone).

        The crontab line sets no ``CRON_TZ`` (which would apply to every later line of the crontab): it wakes each
        quarter hour at the expression's minutes and runs only when ``--due`` says the expression matches now in
        the workspace's timezone. An invalid expression (``0 25 * * *``) exits 2.
        """
        from dreaming.fleet import cron_matches, crontab_line, systemd_units

        ws, config = open_workspace(workspace)
        at = parse_now(None)
        try:
            if due:
                raise typer.Exit(0 if cron_matches(config.schedule.cron, config.timezone, at) else EXIT_FAILED)
            units = systemd_units(ws, config, python=sys.executable)
            line = crontab_line(ws, config, python=sys.executable)
            upcoming = next_run(config.schedule.cron, config.timezone, at)
        except ConfigError as exc:
            err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(EXIT_USAGE) from exc
        written: list[str] = []
        if install:
            folder = Path.home() / ".config" / "systemd" / "user"
            folder.mkdir(parents=True, exist_ok=True)
            for name, text in units.items():
                (folder / name).write_text(text, encoding="utf-8")
                written.append(str(folder / name))
        timer = next(name for name in units if name.endswith(".timer"))
        enable = f"systemctl --user daemon-reload && systemctl --user enable --now {timer}"
        if json_out:
            print_json({
                "workspace": str(ws.root), "cron": config.schedule.cron, "timezone": config.timezone,
                "next_run": upcoming.isoformat(), "crontab": line, "systemd": units, "installed": written,
                "enable": enable,
            })  # fmt: skip
            return
        out = [
            f"# next run: {upcoming.isoformat()} ({config.schedule.cron} in {config.timezone})",
            "",
            "# crontab:",
            line,
        ]
        for name, text in units.items():
            out += ["", f"# ~/.config/systemd/user/{name}", text.rstrip()]
        out += ["", *(f"# wrote {path}" for path in written), f"# then: {enable}"]
        typer.echo("\n".join(out))
