"""``make backtest``'s table, printed from hand-made reports (the runs themselves are ``make backtest``'s)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _run_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_backtest_run", ROOT / "examples" / "backtest" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _metric(policy: str, window: str, n: int, hit: float, missed: float, cost: float, **where: Any) -> dict[str, Any]:
    return {
        "policy": policy, "asset": "*", "regime": "*", "window": window, "n": n, "hit_rate": hit,
        "missed_rally_rate": missed, "avoided_drawdown_rate": 0.1, "opportunity_cost_pct": cost, **where,
    }  # fmt: skip


REPORT: dict[str, Any] = {
    "version": 1, "from": "1999-01-04", "to": "2018-12-31", "step_days": 7, "policy": "offline", "nights": 1043,
    "decisions": 4512, "changed": 311,
    "metrics": [
        _metric("baseline", "7d", 4400, 0.52, 0.31, 1.234, asset="NASDAQ"),  # not the overall row: ignored
        _metric("baseline", "7d", 4400, 0.5, 0.3, 1.2),
        _metric("dreaming", "7d", 4400, 0.55, 0.2, 0.95, changed=300),
        _metric("baseline", "30d", 4300, 0.6, 0.4, 2.5),
        _metric("dreaming", "30d", 4300, 0.58, 0.35, 2.55),
    ],
    "differences": [
        {"asset": "*", "regime": "*", "window": "7d", "metric": "opportunity_cost_pct", "baseline": 1.2,
         "dreaming": 0.95, "difference": -0.25, "ci95": [-0.4, -0.1], "significant": True},
        {"asset": "*", "regime": "*", "window": "30d", "metric": "opportunity_cost_pct", "baseline": 2.5,
         "dreaming": 2.55, "difference": 0.05, "ci95": [-0.2, 0.3], "significant": False},
        {"asset": "*", "regime": "*", "window": "30d", "metric": "hit_rate", "difference": -0.02, "ci95": [-0.1, 0.1]},
    ],
    "series": [],
}  # fmt: skip


def test_the_table_quotes_each_window_of_the_report() -> None:
    run = _run_script()
    rows = run.table_rows("NASDAQ", REPORT)
    assert rows == [
        ["NASDAQ", "7d", "4400", "50.0%", "55.0%", "30.0%", "20.0%", "1.20%", "0.95%", "-0.25 [-0.40, -0.10] *", "300"],
        ["NASDAQ", "30d", "4300", "60.0%", "58.0%", "40.0%", "35.0%", "2.50%", "2.55%", "+0.05 [-0.20, +0.30]", "311"],
    ]
    table = run.render_table(rows + run.table_rows("WTI crude", {"version": 1}))
    lines = table.splitlines()
    assert lines[0].startswith("| dataset") and "opp. cost difference [95% CI]" in lines[0]
    assert set(lines[1]) <= {"|", "-", ":"}
    assert len({len(line) for line in lines}) == 1  # aligned
    assert lines[4].split("|")[1].strip() == "WTI crude" and lines[4].count(" - ") >= 9  # an empty report: dashes


def test_the_period_is_read_from_the_shipped_prices() -> None:
    run = _run_script()
    periods = {d.name: run.price_period(d.workspace) for d in run.DATASETS}
    assert periods == {
        "nasdaq": ("1999-01-04", "2018-12-31"),
        "sp500": ("1999-01-04", "2018-12-31"),
        "wti": ("1986-01-02", "2019-01-03"),
    }
