"""Many workspaces dreamed together: on one machine (``_local``), or on Postgres with workers anywhere (``postgres``).

The embedded fleet (files, flock, a child process per night) needs nothing configured. The distributed fleet
(``[fleet] database_url`` or ``DREAMING_DATABASE_URL``) lives in :mod:`dreaming.fleet.postgres` and needs the
``fleet`` extra (psycopg, procrastinate, langgraph-checkpoint-postgres); importing this package never imports it.
"""

from __future__ import annotations

from dreaming.fleet._local import (
    EXIT_SEVERITY,
    FleetBudget,
    FleetConfig,
    FleetMember,
    NightResult,
    cron_matches,
    crontab_line,
    expand_workspaces,
    fleet_exit_code,
    ledger_spend,
    load_fleet,
    render_results,
    run_fleet,
    systemd_units,
)

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
