"""``dreaming now``, ``status`` and ``insights``, and the usage errors of the command line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.memory import readable_markdown
from tests._workspaces import NIGHT, build_verdict_workspace

runner = CliRunner()


def test_now_runs_a_night_marked_as_on_demand(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    result = runner.invoke(app, ["now", "--workspace", str(ws), "--now", NIGHT, "--json"])
    assert result.exit_code == 0, result.output
    assert "-now-" in json.loads(result.output)["run_id"]
    assert "(now, 03:00 UTC)" in (ws / "DREAMS.md").read_text()


def test_the_entry_printed_is_the_entry_the_diary_holds(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    result = runner.invoke(app, ["now", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    printed = result.output.split("\nMEMORY.md: ")[0].strip()
    assert printed.startswith("## ") and "(now, 03:00 UTC)" in printed.splitlines()[0]  # it said "run" before
    assert printed in readable_markdown((ws / "DREAMS.md").read_text())  # the same, less its run marker
    assert "<!--" not in result.output


def test_status_shows_last_run_lock_and_state_sizes(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    assert runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT]).exit_code == 0
    result = runner.invoke(app, ["status", "--workspace", str(ws), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["last_run"]["type"] == "run.finished"
    assert info["lock"] == "free"
    assert info["state_files"]["candidates.json"] > 0
    assert info["insights"] >= 1
    assert info["budget"]["next_run_tripped"] is False and info["open_gaps"] == []
    assert runner.invoke(app, ["gap", "add", "what is K_FLAT", "--workspace", str(ws)]).exit_code == 0
    info = json.loads(runner.invoke(app, ["status", "--workspace", str(ws), "--json"]).output)
    assert [g["query"] for g in info["open_gaps"]] == ["what is K_FLAT"]
    text = runner.invoke(app, ["status", "--workspace", str(ws)]).output
    assert "Budget breaker: closed" in text and "1 open" in text
    assert info["next_run"] is not None and f"next run:  {info['next_run']} (UTC)" in text


def test_insights_filters_by_asset_and_regime(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    assert runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT]).exit_code == 0
    shown = runner.invoke(app, ["insights", "--workspace", str(ws)])
    assert shown.exit_code == 0 and "Reliable" in shown.output
    other = runner.invoke(app, ["insights", "--workspace", str(ws), "--asset", "GOLD", "--json"])
    assert other.exit_code == 0
    assert json.loads(other.output)["insights"] == []
    up = runner.invoke(app, ["insights", "--workspace", str(ws), "--regime", "uptrend", "--json"])
    ids = [i["id"] for i in json.loads(up.output)["insights"]]
    assert "reliable-buy-test-uptrend-7d" in ids


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["run", "--workspace", str(tmp_path / "missing")]).exit_code == 2
    assert runner.invoke(app, ["run", "--workspace", str(tmp_path), "--now", "yesterday"]).exit_code == 2
    (tmp_path / "dreaming.toml").write_text("[deep\n")
    result = runner.invoke(app, ["run", "--workspace", str(tmp_path)])
    assert result.exit_code == 2 and "not valid TOML" in result.output


def test_empty_workspace_runs_and_writes_a_diary(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", "--workspace", str(tmp_path)]).exit_code == 0
    result = runner.invoke(app, ["run", "--workspace", str(tmp_path), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "DREAMS.md").read_text().startswith("# Dream Diary\n")


def test_schedule_prints_a_crontab_line_in_the_workspace_timezone(tmp_path: Path) -> None:
    (tmp_path / "dreaming.toml").write_text('timezone = "Europe/Paris"\n[schedule]\ncron = "30 2 * * *"\n')
    result = runner.invoke(app, ["schedule", "--workspace", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "CRON_TZ" not in result.output  # it would apply to every later line of the crontab (tests/cli/test_fleet.py)
    line = next(line for line in result.output.splitlines() if line.startswith("0,15,30,45 * * * * "))
    assert f"-m dreaming run --workspace {tmp_path.resolve()}" in line
    assert "OnCalendar=*-*-* 02:30:00 Europe/Paris" in result.output
