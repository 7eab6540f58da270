"""Many workspaces, one budget, on a schedule: the fleet config, the fleet run, and the schedule's cron and timers.

A fleet is a list of workspaces (a glob, or ``[[workspaces]]`` in a fleet config) dreamed together, each night in a
process of its own (``python -m dreaming run --workspace W --json``, at most ``concurrency`` at once), so a crash, a
corrupt file or a held lock in one never stops the others. With a ``[budget]`` table naming a ``ledger``, every
night of the fleet reserves and settles in that one file (``DREAMING_BUDGET_LEDGER`` and its cap and window are set
in each child's environment; the ledger locks each read-modify-write, see ``llm/ledger.py``), so the fleet's spend
stays under one cap. The fleet config::

    concurrency = 4                        # optional; --concurrency wins
    [fleet]                                # optional: the distributed fleet (``dreaming.fleet.postgres``)
    database_url = "postgresql://fleet@db.internal/dreaming"   # DREAMING_DATABASE_URL wins
    keep_days = 30                         # optional: finished jobs, night log rows and slots kept this long
    [budget]                               # optional: without it each workspace keeps its own ledger and cap
    ledger = "state/fleet-budget.json"     # relative to the fleet file's folder (not needed by a distributed fleet)
    max_cost_usd = 5.0
    window_minutes = 60
    [[workspaces]]
    path = "agents/*/workspace"            # a folder or a glob, relative to the fleet file's folder
    cron = "0 3 * * *"                     # optional, read in `timezone` (default: the workspace's own schedule)
    timezone = "Europe/Paris"

Each night's outcome, by severity (the fleet's exit code is the worst): ``done`` (exit 0) < ``done`` with its model
work refused by the budget (4) < ``busy``, another run holds the lock (3) < ``failed`` (1: any other code, a usage
error such as an invalid dreaming.toml (2) or a crash included; the table shows the night's own code).

The schedule: cron expressions are validated with croniter (five fields; ``0 25 * * *`` is an error). A systemd
user timer reads the expression in the workspace's timezone (``OnCalendar=... Europe/Paris``). A crontab cannot
scope ``CRON_TZ`` to one line (it applies to every line after it), so the crontab line instead wakes every quarter
hour at the expression's minutes (every real timezone's offset is a multiple of 15 minutes) and runs the night only
when ``dreaming schedule --due`` says the expression matches this minute in the workspace's timezone.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from croniter import croniter

from dreaming._config_reader import TableReader
from dreaming.config import BudgetConfig, DreamingConfig, next_run, validate_cron, zone_info
from dreaming.errors import ConfigError
from dreaming.llm.ledger import SHARED_CAP_ENV, SHARED_LEDGER_ENV, SHARED_WINDOW_ENV, BudgetLedger
from dreaming.memory import Workspace

__all__ = [
    "EXIT_SEVERITY",
    "FleetBudget",
    "FleetConfig",
    "FleetMember",
    "NightResult",
    "cron_matches",
    "crontab_line",
    "expand_workspaces",
    "fleet_exit_code",
    "ledger_spend",
    "load_fleet",
    "render_results",
    "run_fleet",
    "systemd_units",
]

EXIT_SEVERITY = (0, 4, 3, 1)
"""A fleet's exit codes, least severe first: done, budget refused a night's model work, busy, failed."""
DEFAULT_CONCURRENCY = 4
DEFAULT_KEEP_DAYS = 30
"""Days a distributed fleet keeps its finished jobs, night log rows and night slots (``[fleet] keep_days``)."""
MIN_KEEP_DAYS = 2
"""The shortest retention: a day of margin over the once-a-day prune, so yesterday's nights always stay listed."""
_DEFAULT_BUDGET = BudgetConfig()
Outcome = Literal["done", "busy", "failed"]


def cron_matches(expression: str, timezone: str, at: datetime) -> bool:
    """Return True when ``expression``, read in ``timezone``, fires in the minute holding ``at``."""
    minute = at.astimezone(zone_info(timezone)).replace(second=0, microsecond=0)
    return next_run(expression, timezone, minute - timedelta(seconds=1)) == minute.astimezone(UTC)


# The fleet config


@dataclass(frozen=True, kw_only=True, slots=True)
class FleetMember:
    """One workspace of a fleet."""

    path: Path
    """The workspace folder (absolute)."""
    cron: str | None = None
    """When its night runs (validated), read in ``timezone``; None: the workspace's own ``[schedule] cron``."""
    timezone: str | None = None
    """IANA timezone of ``cron``; None: the workspace's own ``timezone``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FleetBudget:
    """The fleet's global budget: one ledger shared by every night of the fleet, one cap."""

    ledger: Path | None
    """The shared ledger file (absolute); the fleet writes it and its ``.lock`` sidecar, nothing else outside.
    None only in a distributed fleet's config (its ledger is in Postgres)."""
    max_cost_usd: float = _DEFAULT_BUDGET.max_cost_usd
    """The cap of the fleet's spend in the window."""
    window_minutes: float = 60.0
    """Length of the sliding window."""

    def ledger_file(self) -> Path:
        """Return :attr:`ledger`, the file a fleet run on one machine shares.

        Raises:
            ConfigError: the budget names no ledger file (a distributed fleet's config).
        """
        if self.ledger is None:
            raise ConfigError('the fleet\'s [budget] needs ledger = "path/to/fleet-budget.json" to run on one machine')
        return self.ledger

    def child_env(self) -> dict[str, str]:
        """Return the environment variables that send a night's spend to this ledger, under this cap.

        Raises:
            ConfigError: the budget names no ledger file (a distributed fleet's).
        """
        return {
            SHARED_LEDGER_ENV: str(self.ledger_file()),
            SHARED_CAP_ENV: repr(self.max_cost_usd),
            SHARED_WINDOW_ENV: repr(self.window_minutes),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class FleetConfig:
    """A fleet config file, read and validated."""

    members: tuple[FleetMember, ...]
    """The workspaces, in file order (globs expanded, duplicates dropped)."""
    budget: FleetBudget | None = None
    """The global budget, or None: each workspace keeps its own ledger."""
    concurrency: int = DEFAULT_CONCURRENCY
    """How many nights run at once."""
    database_url: str | None = None
    """``[fleet] database_url``: the distributed fleet's Postgres (``DREAMING_DATABASE_URL`` wins), or None."""
    keep_days: int = DEFAULT_KEEP_DAYS
    """``[fleet] keep_days``: how many days a distributed fleet keeps its finished jobs, night log and slots
    (``dreaming fleet init`` stores it where the workers' tick reads it)."""
    warnings: tuple[str, ...] = ()
    """Values that were not usable and fell back to their default (``keep_days``), one sentence each."""


def _positive(table: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{where} {key} = {value!r} is not a positive number")
    return float(value)


def expand_workspaces(patterns: Iterable[str], *, base: Path) -> list[Path]:
    """Return the folders ``patterns`` name (globs relative to ``base``), sorted per pattern, without duplicates.

    Raises:
        ConfigError: a pattern matches no folder.
    """
    found: dict[Path, None] = {}
    for pattern in patterns:
        matches = sorted(glob.glob(os.path.expanduser(pattern), root_dir=base))
        folders = [(base / m).resolve() for m in matches if (base / m).is_dir()]
        if not folders:
            raise ConfigError(f"{pattern!r} matches no folder (relative to {base})")
        found |= dict.fromkeys(folders)
    return list(found)


def load_fleet(path: Path, *, distributed: bool = False) -> FleetConfig:
    """Read a fleet config (TOML, see the module docstring); relative paths are read from the file's folder.

    ``[budget] ledger`` is required unless the fleet is distributed (``distributed``, or ``[fleet] database_url`` in
    the file): a distributed fleet's ledger is in Postgres. A ``[fleet] keep_days`` that is not a whole number of at
    least 2 days falls back to 30, with a warning in ``warnings``.

    Raises:
        ConfigError: the file is missing, not TOML, or holds an invalid value (named with its key).
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"fleet config {path}: {exc}") from exc
    base = path.resolve().parent
    unknown = set(data) - {"concurrency", "budget", "workspaces", "fleet"}
    if unknown:
        raise ConfigError(f"fleet config {path}: unknown keys {sorted(unknown)}")
    fleet_table = data.get("fleet", {})
    if not isinstance(fleet_table, dict) or set(fleet_table) - {"database_url", "keep_days"}:
        raise ConfigError(f"fleet config {path}: [fleet] takes database_url and keep_days")
    warnings: list[str] = []
    # Lenient like dreaming.toml: a bad retention must not stop a fleet, and the default keeps more, never less.
    keep_days = TableReader(fleet_table, "fleet", warnings).number(
        "keep_days", DEFAULT_KEEP_DAYS, minimum=MIN_KEEP_DAYS, integer=True
    )
    database_url = fleet_table.get("database_url")
    if database_url is not None and (not isinstance(database_url, str) or not database_url.strip()):
        raise ConfigError(f"fleet config {path}: [fleet] database_url = {database_url!r} is not a URL")
    distributed = distributed or database_url is not None
    concurrency = data.get("concurrency", DEFAULT_CONCURRENCY)
    if type(concurrency) is not int or concurrency < 1:
        raise ConfigError(f"fleet config {path}: concurrency = {concurrency!r} is not a positive integer")
    rows = data.get("workspaces")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise ConfigError(f"fleet config {path}: needs at least one [[workspaces]] entry with a path")
    members: dict[Path, FleetMember] = {}
    for i, row in enumerate(rows, 1):
        where = f"fleet config {path}: [[workspaces]] #{i}"
        if set(row) - {"path", "cron", "timezone"} or not isinstance(row.get("path"), str):
            raise ConfigError(f"{where}: takes path (required), cron and timezone; got {sorted(row)}")
        cron, tz = row.get("cron"), row.get("timezone")
        if not isinstance(cron, str | None) or not isinstance(tz, str | None):
            raise ConfigError(f"{where}: cron and timezone are strings")
        try:
            cron = validate_cron(cron) if cron is not None else None
            if tz is not None:
                zone_info(tz)
            folders = expand_workspaces([row["path"]], base=base)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from exc
        for folder in folders:
            members.setdefault(folder, FleetMember(path=folder, cron=cron, timezone=tz))
    budget = None
    if "budget" in data:
        table = data["budget"]
        where = f"fleet config {path}: [budget]"
        if not isinstance(table, dict):
            raise ConfigError(f'{where} needs ledger = "path/to/fleet-budget.json"')
        ledger = table.get("ledger")
        if (ledger is not None or not distributed) and (not isinstance(ledger, str) or not ledger.strip()):
            raise ConfigError(f'{where} needs ledger = "path/to/fleet-budget.json"')
        if set(table) - {"ledger", "max_cost_usd", "window_minutes"}:
            raise ConfigError(f"{where} takes ledger, max_cost_usd and window_minutes; got {sorted(table)}")
        budget = FleetBudget(
            ledger=(base / Path(ledger).expanduser()).absolute() if isinstance(ledger, str) else None,
            max_cost_usd=_positive(table, "max_cost_usd", _DEFAULT_BUDGET.max_cost_usd, where),
            window_minutes=_positive(table, "window_minutes", 60.0, where),
        )
    return FleetConfig(
        members=tuple(members.values()), budget=budget, concurrency=concurrency, database_url=database_url,
        keep_days=keep_days, warnings=tuple(warnings),
    )  # fmt: skip


# The fleet run


@dataclass(frozen=True, kw_only=True, slots=True)
class NightResult:
    """How one workspace's night of a fleet run ended."""

    workspace: Path
    """The workspace."""
    outcome: Outcome
    """``done`` (exit 0, or 4: the budget refused its model work), ``busy`` (3: lock held) or ``failed``."""
    exit_code: int
    """The night's own exit code (negative: killed by that signal)."""
    run_id: str | None = None
    """The run that finished, when it did."""
    spend_usd: float = 0.0
    """What the night's model calls cost (settled, or their estimate)."""
    detail: str = ""
    """Why it did not finish (the night's last line on stderr), or a note."""

    def to_json(self) -> dict[str, Any]:
        """Return the row of ``dreaming fleet run --json``."""
        return {
            "workspace": str(self.workspace), "outcome": self.outcome, "exit_code": self.exit_code,
            "run_id": self.run_id, "spend_usd": self.spend_usd, "detail": self.detail,
        }  # fmt: skip


def _result(workspace: Path, code: int, stdout: str, stderr: str) -> NightResult:
    report: dict[str, Any] = {}
    try:
        parsed = json.loads(stdout) if stdout.strip() else {}
        report = parsed if isinstance(parsed, dict) else {}
    except ValueError:
        pass
    budget = (report.get("summaries") or {}).get("budget") or {}
    spend = budget.get("run_spend_usd", 0.0)
    spend = float(spend) if isinstance(spend, (int, float)) and not isinstance(spend, bool) else 0.0
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    detail = lines[-1][:300] if lines else ""
    outcome: Outcome = "failed"
    if code in (0, 4):
        outcome = "done"
        detail = "the budget refused the night's model work" if code == 4 else ""
    elif code == 3:
        outcome = "busy"
    elif code < 0:
        detail = f"killed by signal {-code}"
    return NightResult(
        workspace=workspace, outcome=outcome, exit_code=code, run_id=report.get("run_id"), spend_usd=spend,
        detail=detail,
    )  # fmt: skip


def run_fleet(
    workspaces: Sequence[Path],
    *,
    concurrency: int,
    budget: FleetBudget | None,
    env: Mapping[str, str],
    now: str | None = None,
    python: str = sys.executable,
    on_result: Callable[[NightResult], None] | None = None,
    new_session: bool = False,
) -> list[NightResult]:
    """Dream one night on each workspace, each in its own process, at most ``concurrency`` at once.

    One night's failure, lock or crash never stops the others. Writes nothing itself: each night writes its
    workspace, and with ``budget`` the shared ledger.

    Args:
        workspaces: the workspace folders.
        concurrency: how many nights run at once (at least 1).
        budget: the fleet's global budget, or None (each workspace keeps its own ledger).
        env: the environment each night inherits (the ledger's variables are added).
        now: ``--now`` for every night (replays), or None for the clock.
        python: the interpreter that runs ``-m dreaming``.
        on_result: called with each result as its night ends (from a worker thread).
        new_session: start each night in a session of its own, so a Ctrl-C or a signal to this process group
            never reaches a night mid-way (``dreaming serve`` lets its nights finish when it stops).

    Returns:
        One result per workspace, in the order given.
    """
    child_env = dict(env) | (budget.child_env() if budget is not None else {})
    extra = ["--now", now] if now is not None else []

    def one(workspace: Path) -> NightResult:
        command = [python, "-m", "dreaming", "run", "--workspace", str(workspace), "--json", *extra]
        try:
            done = subprocess.run(
                command, env=child_env, capture_output=True, text=True, errors="replace", start_new_session=new_session
            )
        except OSError as exc:
            result = NightResult(workspace=workspace, outcome="failed", exit_code=1, detail=f"cannot start: {exc}")
        else:
            result = _result(workspace, done.returncode, done.stdout, done.stderr)
        if on_result is not None:
            on_result(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="dreaming-fleet") as pool:
        return list(pool.map(one, workspaces))


def fleet_exit_code(results: Iterable[NightResult]) -> int:
    """Return the worst exit code of the fleet, by :data:`EXIT_SEVERITY` (any failure, whatever its code, is 1)."""
    worst = 0
    for result in results:
        code = {"done": 4 if result.exit_code == 4 else 0, "busy": 3, "failed": 1}[result.outcome]
        worst = max(worst, code, key=EXIT_SEVERITY.index)
    return worst


def ledger_spend(budget: FleetBudget, now: datetime) -> float:
    """Return the spend in the shared ledger's window (read only; an unusable file, or none, reads as nothing)."""
    if budget.ledger is None:
        return 0.0
    config = BudgetConfig(max_cost_usd=budget.max_cost_usd, window_minutes=budget.window_minutes)
    return BudgetLedger.peek(budget.ledger, config, now=now).spend_in_window(now)


def render_results(results: Sequence[NightResult]) -> str:
    """Return the summary table: workspace, outcome, run id, spend, exit code, detail; and a totals line."""
    head = ("workspace", "outcome", "run id", "spend", "exit", "detail")
    rows = [
        (str(r.workspace), r.outcome, r.run_id or "-", f"${r.spend_usd:.4f}", str(r.exit_code), r.detail)
        for r in results
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(5)]
    lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row[:5], widths, strict=True)), row[5]]).rstrip()
             for row in [head, *rows]]  # fmt: skip
    counts = {o: sum(r.outcome == o for r in results) for o in ("done", "busy", "failed")}
    spend = math.fsum(r.spend_usd for r in results)
    lines.append(f"{counts['done']} done, {counts['busy']} busy, {counts['failed']} failed; spend ${spend:.4f}")
    return "\n".join(lines)


# The schedule


def _unit_name(ws: Workspace) -> str:
    words = ws.root.parts[-2:] if ws.root.name == "workspace" else ws.root.parts[-1:]  # agents/<name>/workspace
    slug = re.sub(r"[^A-Za-z0-9]+", "-", "-".join(words)).strip("-").lower() or "workspace"
    return f"dreaming-{slug}-{hashlib.sha256(str(ws.root).encode()).hexdigest()[:8]}"


def _systemd_quote(word: str) -> str:
    word = word.replace("%", "%%")  # systemd specifiers
    if re.fullmatch(r"[A-Za-z0-9_./:=@+,-]+", word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _calendar_field(values: list[Any], names: Sequence[str] | None = None, width: int = 2) -> str:
    if values == ["*"]:
        return "*"
    if not all(isinstance(v, int) for v in values):
        raise ConfigError(f"cron field {values!r} cannot be written as a systemd calendar (L, W and # are not)")
    ints = sorted({v % 7 if names else v for v in values})
    runs: list[list[int]] = []
    for v in ints:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])

    def show(v: int) -> str:
        return names[v] if names else str(v).zfill(width)

    return ",".join(show(r[0]) if len(r) == 1 else f"{show(r[0])}..{show(r[-1])}" for r in runs)


def _on_calendar(expression: str, timezone: str) -> list[str]:
    minute, hour, day, month, weekday = croniter(validate_cron(expression)).expanded
    days = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
    time = f"{_calendar_field(hour)}:{_calendar_field(minute)}:00"
    month_text, day_text = _calendar_field(month), _calendar_field(day)
    by_date = f"*-{month_text}-{day_text} {time} {timezone}"
    if weekday == ["*"]:
        return [by_date]
    by_weekday = f"{_calendar_field(weekday, days)} *-{month_text}-* {time} {timezone}"
    if day == ["*"]:
        return [by_weekday]
    return [by_date, by_weekday]  # cron fires when either the day or the weekday matches; timers OR their lines


def systemd_units(ws: Workspace, config: DreamingConfig, *, python: str) -> dict[str, str]:
    """Return a systemd user service and timer (file name -> text) running the workspace's nightly job.

    Raises:
        ConfigError: ``[schedule] cron`` is invalid or uses croniter's extensions (L, W, #).
    """
    name = _unit_name(ws)
    command = " ".join(_systemd_quote(w) for w in (python, "-m", "dreaming", "run", "--workspace", str(ws.root)))
    calendars = "\n".join(f"OnCalendar={c}" for c in _on_calendar(config.schedule.cron, config.timezone))
    service = (
        f"[Unit]\nDescription=dreaming: one night of {ws.root}\n\n"
        f"[Service]\nType=oneshot\nExecStart={command}\n"
        "# exit 3: another run holds the workspace; 4: the budget refused the night's model work\n"
        "SuccessExitStatus=3 4\n"
    )
    timer = (
        f"[Unit]\nDescription=dreaming: the nightly job of {ws.root} ({config.schedule.cron} in {config.timezone})\n\n"
        f"[Timer]\n{calendars}\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n"
    )
    return {f"{name}.service": service, f"{name}.timer": timer}


def crontab_line(ws: Workspace, config: DreamingConfig, *, python: str) -> str:
    """Return one crontab line for the nightly job that sets no ``CRON_TZ`` (see the module docstring).

    It wakes at the expression's minutes shifted by every quarter hour, and runs the night only when
    ``dreaming schedule --due`` finds that the expression matches the current minute in the workspace's timezone.

    Raises:
        ConfigError: ``[schedule] cron`` is invalid.
    """
    minutes = croniter(validate_cron(config.schedule.cron)).expanded[0]
    values = range(60) if minutes == ["*"] else minutes
    wake = ",".join(str(m) for m in sorted({(int(m) + 15 * k) % 60 for m in values for k in range(4)}))
    wake = "*" if wake == ",".join(str(m) for m in range(60)) else wake
    log = ws.state_dir / "nightly.log"
    dreaming = f"{shlex.quote(python)} -m dreaming"
    root = shlex.quote(str(ws.root))
    return (
        f"{wake} * * * * {dreaming} schedule --due --workspace {root} && "
        f"{dreaming} run --workspace {root} >> {shlex.quote(str(log))} 2>&1"
    ).replace("%", "\\%")  # cron turns a bare % into a newline
