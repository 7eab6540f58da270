"""``dreaming backtest``: the report's shape, its determinism, bad input, refused arguments, a workspace without prices."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from dreaming.backtest import render_table
from dreaming.cli import app
from dreaming.memory import Workspace

from ._markets import trending_market

runner = CliRunner()
MARKET = trending_market(5, phases=2)
FROM, TO = "2010-07-01", "2010-12-31"
DECISIONS = sum(1 for v in MARKET.verdicts if FROM < v["decision_date"] <= TO)
"""The verdicts dated after the first night, up to the last day: each is decided in the period after a night."""
TOP = {"version", "from", "to", "step_days", "policy", "committee", "nights", "decisions", "changed", "changed_by",
       "metrics", "differences", "series", "bad_input", "bad_input_count"}  # fmt: skip
METRIC_ROW = {"policy", "asset", "regime", "window", "n", "hit_rate", "missed_rally_rate", "avoided_drawdown_rate",
              "opportunity_cost_pct", "changed"}  # fmt: skip
DIFFERENCE_ROW = {"asset", "regime", "window", "metric", "baseline", "dreaming", "difference", "ci95", "significant"}
SERIES_ROW = {"date", "baseline_cum_opportunity_cost_pct", "dreaming_cum_opportunity_cost_pct"}


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _backtest(ws: Workspace, *extra: str) -> Any:
    return runner.invoke(app, ["backtest", "--workspace", str(ws.root), "--from", FROM, "--to", TO, *extra])


def test_the_report_has_its_shape_and_the_table_is_printed(tmp_path: Path) -> None:
    ws = MARKET.write(tmp_path / "ws")
    result = _backtest(ws)
    assert result.exit_code == 0, result.output
    report = json.loads((ws.state_dir / "backtest.json").read_text())
    assert set(report) == TOP
    assert (report["version"], report["from"], report["to"], report["step_days"], report["policy"]) == (
        1, FROM, TO, 7, "offline")  # fmt: skip
    assert report["committee"] == "recorded"
    assert report["nights"] == 27 and report["decisions"] == DECISIONS
    assert report["metrics"] and report["differences"] and len(report["series"]) == report["nights"]
    assert all(set(row) == METRIC_ROW for row in report["metrics"])
    assert all(set(row) == DIFFERENCE_ROW for row in report["differences"])
    assert all(set(row) == SERIES_ROW for row in report["series"])
    assert {row["policy"] for row in report["metrics"]} == {"baseline", "dreaming"}
    assert {row["metric"] for row in report["differences"]} == {
        "hit_rate", "missed_rally_rate", "avoided_drawdown_rate", "opportunity_cost_pct"}  # fmt: skip
    headline = [row for row in report["metrics"] if row["asset"] == "*" and row["regime"] == "*"]
    assert [(row["policy"], row["window"]) for row in headline] == [
        ("baseline", "7d"), ("dreaming", "7d"), ("baseline", "30d"), ("dreaming", "30d")]  # fmt: skip
    assert sum(report["changed_by"].values()) == report["changed"]
    for row in report["differences"]:
        lo, hi = row["ci95"]
        assert lo <= row["difference"] <= hi
        assert row["significant"] == (lo > 0 or hi < 0)
    assert report["series"][0]["date"] == FROM
    out = result.stdout
    assert f"backtest {FROM} .. {TO} every 7d: 27 nights, {DECISIONS} decisions (recorded committee)" in out
    assert "policy" in out and "difference" in out and "hit rate" in out and "95% paired bootstrap" in out
    assert {row["asset"] for row in report["metrics"]} == {"*", "SYN"}
    assert " SYN " not in out  # one asset: its rows are the "*" rows, printed once


def test_the_table_prints_each_asset_when_there_are_several() -> None:
    def row(policy: str, asset: str) -> dict[str, Any]:
        return {"policy": policy, "asset": asset, "regime": "*", "window": "7d", "n": 10, "hit_rate": 0.5,
                "missed_rally_rate": 0.1, "avoided_drawdown_rate": 0.2, "opportunity_cost_pct": 1.25, "changed": 0}  # fmt: skip

    metrics = [row(policy, asset) for asset in ("*", "A", "B") for policy in ("baseline", "dreaming")]
    hit = {"regime": "*", "window": "7d", "metric": "hit_rate", "baseline": 0.5, "dreaming": 0.52, "difference": 0.02}
    differences = [{**hit, "asset": asset, "ci95": [0.01, 0.03], "significant": True} for asset in ("*", "A", "B")]
    table = render_table({"metrics": metrics, "differences": differences}).splitlines()
    assert [line.split()[:2] for line in table if line.startswith(("baseline", "dreaming"))] == [
        [policy, asset] for asset in ("*", "A", "B") for policy in ("baseline", "dreaming")
    ]
    assert sum("+2.00pp [+1.00, +3.00]*" in line for line in table) == 3
    assert "50.0%" in table[4] and "1.250%" in table[4]  # the summary, a blank line, the header, its rule


def test_two_runs_write_the_same_bytes_and_json_prints_the_report(tmp_path: Path) -> None:
    ws = MARKET.write(tmp_path / "ws")
    assert _backtest(ws).exit_code == 0
    first = (ws.state_dir / "backtest.json").read_bytes()
    again = _backtest(ws, "--json")
    assert again.exit_code == 0
    assert (ws.state_dir / "backtest.json").read_bytes() == first
    assert json.loads(again.stdout) == json.loads(first)


def test_only_the_report_is_written_to_the_workspace(tmp_path: Path) -> None:
    ws = MARKET.write(tmp_path / "ws")
    before = _files(ws.root)
    assert _backtest(ws).exit_code == 0
    after = _files(ws.root)
    assert set(after) - set(before) == {"memory/.dreams/backtest.json"}
    assert {k: v for k, v in after.items() if k in before} == before


def test_bad_input_is_skipped_and_reported(tmp_path: Path) -> None:
    ws = MARKET.write(tmp_path / "ws")
    lines = ws.verdicts.read_text().splitlines()
    lines.insert(3, '{"decision_date": "2010-01-07", "asset": "SYN"')
    ws.verdicts.write_text("\n".join(lines) + "\n")
    rows = (ws.prices_dir / "SYN.csv").read_text().splitlines()
    rows.insert(10, "2010-01-15,1,1,not-a-close")
    (ws.prices_dir / "SYN.csv").write_text("\n".join(rows) + "\n")
    result = _backtest(ws)
    assert result.exit_code == 0, result.output
    report = json.loads((ws.state_dir / "backtest.json").read_text())
    assert report["bad_input_count"] == 2
    assert report["bad_input"] == [
        "prices/SYN.csv:11: close is missing, not a number or not positive",
        "memory/.dreams/verdicts.jsonl:4: not valid JSON",
    ]
    assert report["decisions"] == DECISIONS  # the good lines are all there
    assert "2 bad input line(s) skipped" in result.stderr


def test_a_workspace_without_prices_reports_decisions_it_cannot_score(tmp_path: Path) -> None:
    ws = MARKET.write(tmp_path / "ws")
    (ws.prices_dir / "SYN.csv").unlink()
    ws.prices_dir.rmdir()
    result = _backtest(ws)
    assert result.exit_code == 0, result.output
    report = json.loads((ws.state_dir / "backtest.json").read_text())
    assert (report["decisions"], report["changed"], report["metrics"], report["differences"]) == (DECISIONS, 0, [], [])
    assert len(report["series"]) == report["nights"] == 27
    assert {row["baseline_cum_opportunity_cost_pct"] for row in report["series"]} == {0.0}
    assert "no decision could be scored" in result.stdout


def test_refused_arguments_exit_2_and_write_nothing(tmp_path: Path) -> None:
    ws = MARKET.write(tmp_path / "ws")
    where = ["backtest", "--workspace", str(ws.root)]
    after_to = runner.invoke(app, [*where, "--from", "2011-01-01", "--to", "2010-01-01"])
    assert after_to.exit_code == 2
    assert "--from 2011-01-01 is after --to 2010-01-01" in after_to.stderr
    llm = runner.invoke(app, [*where, "--from", FROM, "--to", TO, "--policy", "llm"])
    assert llm.exit_code == 2 and "--policy llm needs a model, and none is configured" in llm.stderr
    for bad in (["--policy", "magic"], ["--step", "0d"], ["--step", "weekly"]):
        assert runner.invoke(app, [*where, "--from", FROM, "--to", TO, *bad]).exit_code == 2, bad
    assert runner.invoke(app, [*where, "--from", "2010-13-01", "--to", TO]).exit_code == 2
    assert not (ws.state_dir / "backtest.json").exists()


def test_the_step_takes_weeks(tmp_path: Path) -> None:
    ws = MARKET.write(tmp_path / "ws")
    assert _backtest(ws, "--step", "2w").exit_code == 0
    report = json.loads((ws.state_dir / "backtest.json").read_text())
    assert (report["step_days"], report["nights"], report["decisions"]) == (14, 14, DECISIONS)


def test_help_does_not_import_the_backtest() -> None:
    code = (
        "import sys\nfrom dreaming.cli import main\nsys.argv = ['dreaming', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nprint('dreaming.backtest' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"
    assert "backtest" in done.stdout
