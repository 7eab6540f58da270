"""The Backtest page: the last report's tables and plot, "no backtest yet" without one, damage named, text escaped."""

from __future__ import annotations

import json
from typing import Any

from dreaming.config import load_config
from dreaming.memory import Workspace
from dreaming.view import Site
from dreaming.view._read import backtest_page
from tests.view.conftest import IMG, SCRIPT


def _metrics(policy: str, asset: str, regime: str, window: str, n: int, hit: float, cost: float) -> dict[str, Any]:
    return {
        "policy": policy, "asset": asset, "regime": regime, "window": window, "n": n, "hit_rate": hit,
        "missed_rally_rate": 0.25, "avoided_drawdown_rate": 0.125, "opportunity_cost_pct": cost,
    }  # fmt: skip


def _report(asset: str = "NASDAQ") -> dict[str, Any]:
    metrics = []
    for a, r in (("*", "*"), (asset, "range_bound"), (asset, "*"), (asset, "uptrend")):
        for window in ("30d", "7d"):
            metrics += [
                _metrics("baseline", a, r, window, 120, 0.5, 1.5),
                _metrics("dreaming", a, r, window, 120, 0.6, 1.0),
            ]
    return {
        "version": 1, "from": "2005-01-07", "to": "2006-12-29", "step_days": 7, "policy": "offline", "nights": 104,
        "decisions": 480, "changed": 37, "committee": "recorded", "bad_input_count": 3, "metrics": metrics,
        "differences": [
            {"asset": "*", "regime": "*", "window": "30d", "metric": "opportunity_cost_pct", "baseline": 1.5,
             "dreaming": 1.0, "difference": -0.5, "ci95": [-0.75, -0.25], "significant": True},
            {"asset": "*", "regime": "*", "window": "7d", "metric": "hit_rate", "baseline": 0.5, "dreaming": 0.6,
             "difference": 0.1, "ci95": [-0.02, 0.21], "significant": False},
            {"asset": asset, "regime": "uptrend", "window": "30d", "metric": "opportunity_cost_pct", "baseline": 1.5,
             "dreaming": 1.0, "difference": -0.5, "ci95": [-0.9, -0.1], "significant": True},
        ],
        "series": [
            {"date": "2005-01-14", "baseline_cum_opportunity_cost_pct": 1.0, "dreaming_cum_opportunity_cost_pct": 1.0},
            {"date": "2006-12-29", "baseline_cum_opportunity_cost_pct": 9.0, "dreaming_cum_opportunity_cost_pct": 6.0},
        ],
    }  # fmt: skip


def _render(ws: Workspace) -> str:
    return Site(workspace=ws, config=load_config(ws.config_file), read_line=lambda path, line: None).render(
        "backtest.html"
    )


def _write(ws: Workspace, content: str) -> None:
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    (ws.state_dir / "backtest.json").write_text(content)


def test_without_a_report_the_page_says_so(workspace: Workspace) -> None:
    html = _render(workspace)
    assert "No backtest yet" in html and "<svg" not in html
    assert backtest_page(workspace) == {"report": None, "problems": []}


def test_the_page_shows_the_reports_table_and_plot(workspace: Workspace) -> None:
    _write(workspace, json.dumps(_report()))
    page = backtest_page(workspace)
    [seven, thirty] = page["overall"]  # 7d before 30d, whatever the report's order
    assert (seven["window"], thirty["window"], thirty["n"]) == ("7d", "30d", 120)
    assert thirty["metrics"]["opportunity_cost_pct"] == {
        "baseline": "1.50%", "dreaming": "1.00%", "difference": "-0.50 pp", "ci95": "[-0.75 pp, -0.25 pp]",
        "significant": True,
    }  # fmt: skip
    assert (
        seven["metrics"]["hit_rate"]["difference"] == "+10.0 pp" and seven["metrics"]["hit_rate"]["dreaming"] == "60.0%"
    )
    assert seven["metrics"]["hit_rate"]["ci95"] == "[-2.0 pp, +21.0 pp]"
    # "*" first, then regimes in the order of REGIMES (not by name), 7d before 30d
    assert [(r["asset"], r["regime"], r["window"]) for r in page["buckets"]] == [
        ("NASDAQ", "*", "7d"), ("NASDAQ", "*", "30d"), ("NASDAQ", "uptrend", "7d"), ("NASDAQ", "uptrend", "30d"),
        ("NASDAQ", "range_bound", "7d"), ("NASDAQ", "range_bound", "30d"),
    ]  # fmt: skip
    html = _render(workspace)
    assert "No backtest yet" not in html
    assert "2005-01-07 to 2006-12-29, every 7 days" in html and "37 changed by an insight" in html
    assert "480 decisions (recorded committee)" in html and "3 input lines skipped" in html
    assert "[-0.75 pp, -0.25 pp]" in html and "<strong>yes</strong>" in html
    assert "1.50% → 1.00%" in html and "-0.50 pp [-0.90 pp, -0.10 pp] <strong>significant</strong>" in html
    assert html.count("<svg") == 1 and 'class="baseline"' in html and 'class="dreaming"' in html


def test_untrusted_text_in_the_report_stays_text(workspace: Workspace) -> None:
    report = _report(asset=SCRIPT + IMG)
    report["policy"] = SCRIPT
    report["from"] = IMG
    _write(workspace, json.dumps(report))
    html = _render(workspace)
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img" in html


def test_a_damaged_report_is_named_not_fatal(workspace: Workspace) -> None:
    for content, named in (
        ("{not json", "backtest.json is unreadable (JSONDecodeError)"),
        ("[1, 2]", "backtest.json holds no report"),
        ('{"version": 99}', "backtest.json is of version &#39;99&#39;; this viewer reads version 1"),
    ):
        _write(workspace, content)
        html = _render(workspace)
        assert named in html and "No backtest yet" in html, content
    hostile = {
        "version": 1, "metrics": [1, "x", {"policy": "baseline", "asset": "*", "regime": "*", "window": "7d",
        "n": "many", "hit_rate": "NaN", "opportunity_cost_pct": float("inf")}],
        "differences": {"not": "a list"}, "series": [{"date": 5}],
    }  # fmt: skip
    _write(workspace, json.dumps(hostile))
    page = backtest_page(workspace)
    [row] = page["overall"]
    assert row["n"] is None and row["metrics"]["hit_rate"] == {"baseline": "-"}
    assert "no decisions to plot" in _render(workspace)
