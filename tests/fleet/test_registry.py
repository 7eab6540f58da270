"""``dreaming fleet init``: the tables, the workspace registry and the global budget row; running it twice is a no-op."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.errors import ConfigError
from dreaming.fleet import FleetBudget, load_fleet
from dreaming.fleet.postgres import DATABASE_URL_ENV, FleetInit, database_url, fleet_status
from dreaming.memory import Workspace, init_workspace
from tests.fleet._fleet import init, rows, write_fleet

T0 = datetime(2026, 9, 1, tzinfo=UTC)
T1 = datetime(2026, 9, 2, tzinfo=UTC)
FLEET = """
[budget]
max_cost_usd = 2.5
window_minutes = 30
[[workspaces]]
path = "a"
cron = "0 3 * * *"
timezone = "Europe/Paris"
[[workspaces]]
path = "b"
cron = "30 2 * * *"
timezone = "America/New_York"
[[workspaces]]
path = "c"
"""


def _workspaces(root: Path, *names: str) -> None:
    for name in names:
        init_workspace(Workspace.at(root / name))
    (root / "c" / "dreaming.toml").write_text('timezone = "Asia/Tokyo"\n[schedule]\ncron = "15 4 * * *"\n')


def _state(url: str) -> list[list[tuple[object, ...]]]:
    return [
        rows(url, "SELECT version, name, applied_at FROM dreaming_schema_version ORDER BY version"),
        rows(url, "SELECT * FROM dreaming_workspaces ORDER BY path"),
        rows(url, "SELECT * FROM dreaming_budget"),
        rows(url, "SELECT v FROM checkpoint_migrations ORDER BY v"),
        rows(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"),
        rows(url, "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname"),
    ]


def test_init_sets_everything_up_and_a_second_init_changes_nothing(pg_url: str, tmp_path: Path) -> None:
    _workspaces(tmp_path, "a", "b", "c")
    fleet = write_fleet(tmp_path, pg_url, FLEET)
    first = init(pg_url, fleet, T0)
    assert first.changed and first.queue_schema and first.migrations == [1, 2, 3] and first.budget == "set"
    assert first.registered == [str(tmp_path / n) for n in ("a", "b", "c")]
    before = _state(pg_url)
    tables = {r[0] for r in before[4]}
    assert {
        "dreaming_workspaces",
        "dreaming_slots",
        "dreaming_night_log",
        "procrastinate_jobs",
        "checkpoints",
    } <= tables
    assert before[1] == [
        (str(tmp_path / "a"), "0 3 * * *", "Europe/Paris", T0, T0),
        (str(tmp_path / "b"), "30 2 * * *", "America/New_York", T0, T0),
        (str(tmp_path / "c"), "15 4 * * *", "Asia/Tokyo", T0, T0),  # from its dreaming.toml
    ]
    assert before[2] == [(1, 2.5, 30.0)]
    second = init(pg_url, fleet, T1)
    assert not second.changed and second.budget == "unchanged"
    assert _state(pg_url) == before


def test_inits_started_together_do_the_work_once(pg_url: str, tmp_path: Path) -> None:
    _workspaces(tmp_path, "a", "b", "c")
    fleet = write_fleet(tmp_path, pg_url, FLEET)
    results: list[FleetInit] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            results.append(init(pg_url, fleet, T0))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(r.changed for r in results) == [False, False, True]


def test_the_registry_follows_the_fleet_file(pg_url: str, tmp_path: Path) -> None:
    _workspaces(tmp_path, "a", "b", "c", "d")
    fleet = write_fleet(tmp_path, pg_url, FLEET)
    init(pg_url, fleet, T0)
    edited = FLEET.replace('cron = "30 2 * * *"', 'cron = "45 2 * * *"').replace('path = "c"', 'path = "d"')
    edited = edited.replace("[budget]\nmax_cost_usd = 2.5\nwindow_minutes = 30\n", "")
    result = init(pg_url, write_fleet(tmp_path, pg_url, edited), T1)
    assert (result.registered, result.updated, result.unregistered, result.budget) == (
        [str(tmp_path / "d")], [str(tmp_path / "b")], [str(tmp_path / "c")], "removed",
    )  # fmt: skip
    assert rows(pg_url, "SELECT path, cron, registered_at, updated_at FROM dreaming_workspaces ORDER BY path") == [
        (str(tmp_path / "a"), "0 3 * * *", T0, T0),
        (str(tmp_path / "b"), "45 2 * * *", T0, T1),
        (str(tmp_path / "d"), "0 3 * * *", T1, T1),  # init_workspace's default schedule, in its timezone
    ]
    assert rows(pg_url, "SELECT * FROM dreaming_budget") == []  # each workspace keeps its own ledger again
    assert fleet_status(pg_url, now=T1)["budget"] is None


def test_init_refuses_an_invalid_schedule_and_registers_nothing(pg_url: str, tmp_path: Path) -> None:
    _workspaces(tmp_path, "a", "b", "c")
    fleet = write_fleet(tmp_path, pg_url, FLEET)
    init(pg_url, fleet, T0)
    (tmp_path / "c" / "dreaming.toml").write_text('[schedule]\ncron = "0 25 * * *"\n')
    with pytest.raises(ConfigError):
        init(pg_url, write_fleet(tmp_path, pg_url, FLEET.replace('path = "a"', 'path = "d"')), T1)
    assert len(rows(pg_url, "SELECT path FROM dreaming_workspaces")) == 3


def test_the_fleet_file_names_its_database_and_needs_no_ledger_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    body = '[budget]\nmax_cost_usd = 1.5\n[[workspaces]]\npath = "a"\n'
    distributed = write_fleet(tmp_path, "postgresql://db/fleet", body)
    config = load_fleet(distributed)
    assert config.database_url == "postgresql://db/fleet"
    assert config.budget == FleetBudget(ledger=None, max_cost_usd=1.5)
    assert database_url(config, {}) == "postgresql://db/fleet"
    assert database_url(config, {DATABASE_URL_ENV: "postgresql://other/db"}) == "postgresql://other/db"  # env wins
    with pytest.raises(ConfigError, match="no fleet database"):
        database_url(None, {})
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[fleet]\nurl = "postgresql://db/fleet"\n[[workspaces]]\npath = "a"\n')
    with pytest.raises(ConfigError, match=r"\[fleet\] takes database_url and keep_days"):
        load_fleet(wrong)
    plain = tmp_path / "plain.toml"
    plain.write_text(body)
    with pytest.raises(ConfigError, match="needs ledger"):
        load_fleet(plain)  # a fleet on one machine still names its ledger file
    assert load_fleet(plain, distributed=True).budget == FleetBudget(ledger=None, max_cost_usd=1.5)
    # Run on one machine, a distributed fleet's config without a ledger is refused before any night starts.
    result = CliRunner().invoke(app, ["fleet", "run", "--fleet", str(distributed)])
    assert result.exit_code == 2 and "needs ledger" in result.output


def test_cli_init_twice_then_status(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _workspaces(tmp_path, "a", "b", "c")
    fleet = write_fleet(tmp_path, "postgresql://nowhere.invalid/x", FLEET)
    monkeypatch.setenv(DATABASE_URL_ENV, pg_url)  # wins over the file's URL
    runner = CliRunner()
    first = runner.invoke(app, ["fleet", "init", "--fleet", str(fleet), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["changed"] is True
    second = runner.invoke(app, ["fleet", "init", "--fleet", str(fleet)])
    assert second.exit_code == 0 and "nothing changed" in second.output
    status = runner.invoke(app, ["fleet", "status", "--json"])
    assert status.exit_code == 0, status.output
    data = json.loads(status.output)
    assert [w["workspace"] for w in data["workspaces"]] == [str(tmp_path / n) for n in ("a", "b", "c")]
    assert all((w["queued"], w["running"], w["done"], w["last_night"]) == (0, 0, 0, None) for w in data["workspaces"])
    assert data["budget"] == {"cap_usd": 2.5, "window_minutes": 30.0, "window_spend_usd": 0.0, "reserved_usd": 0.0}


def test_cli_without_a_database_or_before_init_exits_2(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    result = CliRunner().invoke(app, ["fleet", "status"])
    assert result.exit_code == 2 and "no fleet database" in result.output
    monkeypatch.setenv(DATABASE_URL_ENV, pg_url)
    for command in (["fleet", "status"], ["fleet", "enqueue"], ["worker", "--once"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2 and "run `dreaming fleet init` first" in result.output, command
