"""Synthetic markets: dreaming helps where there is a lesson to learn, and finds no edge where there is none."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from dreaming.backtest import run_backtest
from dreaming.config import DreamingConfig

from ._markets import Market, random_market, trending_market


def _headline(market: Market, root: Path) -> tuple[dict[str, Any], dict[tuple[str, str], dict[str, Any]]]:
    """Run the backtest from three months in to the end; return the report and its all-asset, all-regime rows."""
    ws = market.write(root)
    result = run_backtest(ws, DreamingConfig(), start=market.rows[0][0] + timedelta(days=90), end=market.rows[-1][0])
    rows = {
        (d["window"], d["metric"]): d for d in result.report["differences"] if d["asset"] == "*" and d["regime"] == "*"
    }
    return result.report, rows


def test_a_committee_that_always_misses_the_rally_improves_by_dreaming(tmp_path: Path) -> None:
    """HOLD in every uptrend misses every rally; the caution insight turns it into BUY, and every measure improves."""
    report, rows = _headline(trending_market(7, phases=4), tmp_path / "ws")
    assert report["changed"] > 0
    assert any(insight.startswith("caution-hold-syn-uptrend-") for insight in report["changed_by"])
    for window in ("7d", "30d"):
        hit, missed, cost = (rows[window, m] for m in ("hit_rate", "missed_rally_rate", "opportunity_cost_pct"))
        assert hit["difference"] > 0 and hit["ci95"][0] > 0 and hit["significant"]
        assert missed["difference"] < 0 and missed["ci95"][1] < 0 and missed["significant"]
        assert cost["difference"] < 0 and cost["ci95"][1] < 0 and cost["significant"]
        assert cost["dreaming"] < cost["baseline"]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_market_with_no_pattern_gives_dreaming_no_edge(tmp_path: Path, seed: int) -> None:
    """A random walk with no drift, and a committee that decides at random: no insight can carry value.

    Insights still pass the gate by chance (a bucket of a few samples that happened to go the wrong way), and the
    dreaming committee acts on them. The opportunity cost is the measure of value, and with no pattern its expected
    difference is zero whatever either committee decides; its interval must not exclude zero in either window.
    (A 95% interval excludes zero by chance in about one patternless market in twenty, so these are five fixed
    markets, and the one-by-one check is that all five hold. That look-ahead is absent is test_lookahead's proof.)

    The hit rate is not asserted: it moves whenever a decision changes kind, edge or not. In a random walk a HOLD
    stays in its flat band about two times in three while a BUY rises one time in two, so a caution that turns BUY
    into HOLD raises the hit rate with no skill at all; the README says so.
    """
    report, rows = _headline(random_market(seed, count=700), tmp_path / "ws")
    assert report["changed"] > 0, "the committee never acted: the test would prove nothing"
    for window in ("7d", "30d"):
        cost = rows[window, "opportunity_cost_pct"]
        lo, hi = cost["ci95"]
        assert lo <= cost["difference"] <= hi
        assert lo < 0 < hi and not cost["significant"], (window, cost)
