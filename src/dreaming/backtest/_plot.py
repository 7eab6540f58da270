"""The backtest's picture: the cumulative opportunity cost of both committees over time, as an inline SVG string.

In the style of the viewer's charts (``dreaming.view._charts``: the same size, margins, grid and palette; no script,
every text escaped; ``dreaming._svg``), drawn here because the backtest sits below the viewer and imports nothing
above ``memory``. The viewer's Backtest page draws it from the report. A report read
back from a file may be damaged: a row without a readable date or number is left out, never an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date
from html import escape
from typing import Any

from dreaming._svg import svg, svg_text

__all__ = ["plot_svg"]

_WIDTH = 640
_HEIGHT = 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 12, 14, 50
_LINES = (
    ("baseline", "baseline_cum_opportunity_cost_pct", "#4c78a8", "baseline committee", "5 3"),
    ("dreaming", "dreaming_cum_opportunity_cost_pct", "#f58518", "dreaming committee", ""),
)
"""(class, series key, colour, legend, dashes) of each line; the dreaming line is drawn first, the baseline dashed over
it, so that where no insight changed anything (the two lines the same) both still show."""


def _svg(title: str, body: list[str]) -> str:
    return svg(title, body, width=_WIDTH, height=_HEIGHT)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _day(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _points(report: Mapping[str, Any]) -> list[tuple[date, float, float]]:
    rows = report.get("series")
    out = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, Mapping):
            continue
        day = _day(row.get("date"))
        base, dream = (_number(row.get(line[1])) for line in _LINES)
        if day is not None and base is not None and dream is not None:
            out.append((day, base, dream))
    return sorted(out)


def _ticks(lo: float, hi: float) -> tuple[list[float], int]:
    """Return round values spanning ``[lo, hi]`` (about five) and the decimals to print them with."""
    raw = (hi - lo) / 4 or 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(lo / step) * step
    ticks = [first + i * step for i in range(math.ceil((hi - first) / step - 1e-9) + 1)]
    return ticks, max(0, -math.floor(math.log10(step)) + (1 if step / magnitude == 2.5 else 0))


def _year_ticks(start: date, end: date) -> list[date]:
    years = list(range(start.year + 1, end.year + 1))
    every = max(1, math.ceil(len(years) / 8))
    return [date(y, 1, 1) for y in years if (y - years[0]) % every == 0] if years else []


def _path(xs: Sequence[float], ys: Sequence[float]) -> str:
    return " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(zip(xs, ys, strict=True)))


def plot_svg(report: Mapping[str, Any]) -> str:
    """Draw the cumulative opportunity cost of the baseline and the dreaming committee at each date of the report.

    Reads ``report["series"]`` (``date``, ``baseline_cum_opportunity_cost_pct``, ``dreaming_cum_opportunity_cost_pct``)
    and, for the title, ``from`` and ``to``. Lower is better: the line that ends lower gave up less of the rises.
    """
    period = " to ".join(str(report.get(k)) for k in ("from", "to") if isinstance(report.get(k), str))
    title = "Cumulative opportunity cost, baseline and dreaming committees" + (f" ({period})" if period else "")
    points = _points(report)
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    body = [f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#ccc"/>']
    if not points:
        body.append(svg_text(_LEFT + plot_w / 2, _TOP + plot_h / 2, "no decisions to plot", size=12))
        return _svg(title, body)
    start, end = points[0][0], points[-1][0]
    values = [v for _, base, dream in points for v in (base, dream)]
    ticks, decimals = _ticks(min(0.0, *values), max(0.0, *values))
    lo, hi = ticks[0], ticks[-1] if ticks[-1] > ticks[0] else ticks[0] + 1.0
    span = max(end.toordinal() - start.toordinal(), 1)

    def x_of(day: date) -> float:
        return _LEFT + plot_w * (day.toordinal() - start.toordinal()) / span

    def y_of(value: float) -> float:
        return _TOP + plot_h * (1 - (value - lo) / (hi - lo))

    for tick in ticks:
        y = y_of(tick)
        stroke = "#bbb" if tick == 0 else "#eee"
        body.append(f'<line x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="{stroke}"/>')
        body.append(svg_text(_LEFT - 4, y + 4, f"{tick:.{decimals}f}%", anchor="end", size=10))
    for day in _year_ticks(start, end):
        x = x_of(day)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{_TOP + plot_h}" stroke="#f4f4f4"/>')
        body.append(svg_text(x, _TOP + plot_h + 13, str(day.year), size=10))
    xs = [x_of(day) for day, _, _ in points]
    lines = [[base for _, base, _ in points], [dream for _, _, dream in points]]
    legend_x = float(_LEFT)
    paths = []
    for (cls, _, colour, legend, dashes), values_of_line in zip(_LINES, lines, strict=True):
        last = values_of_line[-1]
        tip = f"{legend}: {last:.2f}% cumulative opportunity cost by {end.isoformat()} ({len(points)} dates)"
        dash = f' stroke-dasharray="{dashes}"' if dashes else ""
        paths.append(
            f'<path class="{cls}" d="{_path(xs, [y_of(v) for v in values_of_line])}" fill="none" stroke="{colour}"'
            f' stroke-width="1.8"{dash}><title>{escape(tip)}</title></path>'
        )
        label = f"{legend}: {last:.2f}%"
        body.append(f'<rect x="{legend_x:.1f}" y="{_HEIGHT - 18}" width="10" height="10" fill="{colour}"/>')
        body.append(svg_text(legend_x + 14, _HEIGHT - 9, label, anchor="start", size=10))
        legend_x += 30 + 6 * len(label)
    body += reversed(paths)
    body.append(svg_text(_LEFT, _HEIGHT - 24, start.isoformat(), anchor="start", size=10))
    body.append(svg_text(_LEFT + plot_w, _HEIGHT - 24, end.isoformat(), anchor="end", size=10))
    body.append(svg_text(_WIDTH - _RIGHT, _HEIGHT - 9, "lower is better", anchor="end", size=10))
    return _svg(title, body)
