"""The report as a plain-text table: per group, a baseline row, a dreaming row, and their difference with its CI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["render_table"]

_HEADER = ("policy", "asset", "regime", "window", "n", "changed", "hit rate", "missed rally", "avoided drawdown",
           "opp. cost")  # fmt: skip
_RATES = ("hit_rate", "missed_rally_rate", "avoided_drawdown_rate")
_LEFT = 4
"""The first four columns are names, left-aligned; the rest are numbers."""


def _rate(value: float) -> str:
    return f"{value * 100:.1f}%"


def _cost(value: float) -> str:
    return f"{value:.3f}%"


def _difference(row: Mapping[str, Any]) -> str:
    """Return ``+1.23pp [+0.40, +2.05]*`` for a rate, ``-0.012 [-0.020, -0.004]*`` for the cost (in percent)."""
    scale, unit, places = (100, "pp", 2) if row["metric"] in _RATES else (1, "", 3)
    lo, hi = row["ci95"]
    mark = "*" if row["significant"] else ""
    return f"{row['difference'] * scale:+.{places}f}{unit} [{lo * scale:+.{places}f}, {hi * scale:+.{places}f}]{mark}"


def render_table(report: Mapping[str, Any]) -> str:
    """Return the report as aligned plain text: a summary line, the table, and what the marks mean.

    With a single asset, its rows equal the all-asset (``*``) rows and only those are printed (the report has both).
    """
    diffs: dict[tuple[str, str, str], dict[str, Mapping[str, Any]]] = {}
    for d in report.get("differences", []):
        diffs.setdefault((d["asset"], d["regime"], d["window"]), {})[d["metric"]] = d
    rows: list[tuple[str, ...]] = [_HEADER]
    metrics = report.get("metrics", [])
    if len({m["asset"] for m in metrics} - {"*"}) == 1:  # one asset: its rows are the "*" rows again
        metrics = [m for m in metrics if m["asset"] == "*"]
    for m in metrics:
        key = (m["asset"], m["regime"], m["window"])
        rates = [_rate(m[r]) for r in _RATES]
        cost = _cost(m["opportunity_cost_pct"])
        rows.append((m["policy"], *key, str(m["n"]), str(m.get("changed", "")), *rates, cost))
        if m["policy"] == "dreaming" and key in diffs:
            found = diffs[key]
            cells = [_difference(found[name]) if name in found else "" for name in (*_RATES, "opportunity_cost_pct")]
            rows.append(("difference", "", "", "", "", "", *cells))
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    lines = [
        "  ".join(
            cell.ljust(w) if i < _LEFT else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    summary = (
        f"backtest {report.get('from')} .. {report.get('to')} every {report.get('step_days')}d: "
        f"{report.get('nights')} nights, {report.get('decisions')} decisions ({report.get('committee')} committee), "
        f"{report.get('changed')} changed by an insight (policy {report.get('policy')})"
    )
    legend = (
        "difference: dreaming - baseline [95% paired bootstrap interval]; rates in percentage points (pp), "
        "opportunity cost in percent; * the interval excludes zero."
    )
    if len(rows) == 1:
        return f"{summary}\nno decision could be scored (no prices, or no outcome matured)\n"
    return "\n".join([summary, "", *lines, "", legend]) + "\n"
