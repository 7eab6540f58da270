"""``dreaming schedule`` (systemd user timer, a crontab line without CRON_TZ, --install, --json, --due) and
``dreaming fleet run``'s usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.config import DreamingConfig, ScheduleConfig
from dreaming.fleet import crontab_line, systemd_units
from dreaming.memory import Workspace

runner = CliRunner()


def _workspace(root: Path, cron: str = "30 2 * * *", tz: str = "Europe/Paris") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "dreaming.toml").write_text(f'timezone = "{tz}"\n[schedule]\ncron = "{cron}"\n')
    return root


def test_schedule_json_holds_the_timer_the_crontab_line_and_the_next_run(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "agents" / "alice" / "workspace")
    result = runner.invoke(app, ["schedule", "--workspace", str(ws), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert (out["cron"], out["timezone"], out["installed"]) == ("30 2 * * *", "Europe/Paris", [])
    timer = next(text for name, text in out["systemd"].items() if name.endswith(".timer"))
    service = next(text for name, text in out["systemd"].items() if name.endswith(".service"))
    assert "OnCalendar=*-*-* 02:30:00 Europe/Paris\n" in timer and "Persistent=true" in timer
    assert f"-m dreaming run --workspace {ws.resolve()}" in service and "SuccessExitStatus=3 4" in service
    assert all(name.startswith("dreaming-alice-workspace-") for name in out["systemd"])
    assert "CRON_TZ" not in out["crontab"] and "\n" not in out["crontab"]
    assert out["crontab"].startswith("0,15,30,45 * * * * ")
    assert f"schedule --due --workspace {ws.resolve()} && " in out["crontab"]
    assert out["next_run"].endswith("+00:00")
    assert not (tmp_path / ".config").exists()  # printing writes nothing


def test_schedule_install_writes_the_units_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path / "ws")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    result = runner.invoke(app, ["schedule", "--workspace", str(ws), "--install"])
    assert result.exit_code == 0, result.output
    units = sorted((tmp_path / "home" / ".config" / "systemd" / "user").iterdir())
    assert [p.suffix for p in units] == [".service", ".timer"]
    assert "systemctl --user enable --now " + units[1].name in result.output


@pytest.mark.parametrize("cron", ["0 25 * * *", "61 3 * * *", "0 3 32 * *"])
def test_an_invalid_cron_is_a_usage_error(tmp_path: Path, cron: str) -> None:
    ws = _workspace(tmp_path / "ws", cron=cron)
    result = runner.invoke(app, ["schedule", "--workspace", str(ws)])
    assert result.exit_code == 2
    assert "not a valid cron" in result.output


def test_due_says_whether_the_schedule_fires_this_minute(tmp_path: Path) -> None:
    always = _workspace(tmp_path / "always", cron="* * * * *")
    never = _workspace(tmp_path / "never", cron="0 0 30 2 *")  # February 30th
    assert runner.invoke(app, ["schedule", "--due", "--workspace", str(always)]).exit_code == 0
    assert runner.invoke(app, ["schedule", "--due", "--workspace", str(never)]).exit_code == 1


def test_cron_becomes_systemd_calendars_and_a_quarter_hour_wake_up() -> None:
    ws = Workspace.at(Path("/srv/agents/bob"))

    def config(cron: str) -> DreamingConfig:
        return DreamingConfig(timezone="Asia/Kolkata", schedule=ScheduleConfig(cron=cron))

    def calendars(cron: str) -> list[str]:
        timer = next(t for n, t in systemd_units(ws, config(cron), python="/py").items() if n.endswith(".timer"))
        return [line.removeprefix("OnCalendar=") for line in timer.splitlines() if line.startswith("OnCalendar=")]

    assert calendars("*/20 1-3 * * 1-5") == ["Mon..Fri *-*-* 01..03:00,20,40:00 Asia/Kolkata"]
    assert calendars("0 3 1,15 * 0") == ["*-*-01,15 03:00:00 Asia/Kolkata", "Sun *-*-* 03:00:00 Asia/Kolkata"]
    assert calendars("5 4 * 1 7") == ["Sun *-01-* 04:05:00 Asia/Kolkata"]
    assert crontab_line(ws, config("50 2 * * *"), python="/py").startswith("5,20,35,50 * * * * /py -m dreaming ")
    assert crontab_line(ws, config("*/5 2 * * *"), python="/py").startswith("0,5,10,15,20,25,30,35,40,45,50,55 * ")
    assert crontab_line(ws, config("* 2 * * *"), python="/py").startswith("* * * * * ")


def test_fleet_run_needs_workspaces_and_refuses_a_bad_fleet_file(tmp_path: Path) -> None:
    assert runner.invoke(app, ["fleet", "run"]).exit_code == 2
    (tmp_path / "fleet.toml").write_text('[[workspaces]]\npath = "missing/*"\n')
    result = runner.invoke(app, ["fleet", "run", "--fleet", str(tmp_path / "fleet.toml")])
    assert result.exit_code == 2 and "matches no folder" in result.output
    assert runner.invoke(app, ["fleet", "run", "--workspaces", str(tmp_path / "none*")]).exit_code == 2


def test_run_with_workspaces_dreams_each_of_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests._workspaces import NIGHT, build_verdict_workspace

    for name in ("a", "b"):
        build_verdict_workspace(tmp_path / "agents" / name / "workspace")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run", "--workspaces", "agents/*/workspace", "-j", "2", "--now", NIGHT, "--json"])
    assert result.exit_code == 0, result.output
    nights = json.loads(result.output)["nights"]
    assert sorted(Path(n["workspace"]).parent.name for n in nights) == ["a", "b"]
    assert {n["outcome"] for n in nights} == {"done"}
    assert runner.invoke(app, ["run", "--workspaces", "none*"]).exit_code == 2
