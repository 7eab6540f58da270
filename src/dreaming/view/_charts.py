"""Charts as inline SVG strings: no script, no library, every text escaped (the page's CSP allows no script at all).

Two drawings: :func:`hit_rate_chart` (one asset's buckets, hit rate by regime and verdict) and :func:`spend_chart`
(model spend over time against the cap, with the sliding window drawn). Both are pure functions of their inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from html import escape

from dreaming._svg import svg, svg_text

__all__ = ["Bar", "SpendPoint", "hit_rate_chart", "spend_chart"]

_VERDICT_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d", "#bab0ac")
_WIDTH = 640
_HEIGHT = 220
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 12, 14, 46


@dataclass(frozen=True, kw_only=True, slots=True)
class Bar:
    """One scored bucket of the verdict path."""

    regime: str
    """The x group."""
    verdict: str
    """The bar within the group (its colour)."""
    hit_rate: float
    """Height, in [0, 1]."""
    n: int
    """Samples behind it (shown in the tooltip)."""
    passes_gate: bool
    """Drawn solid when it passes the gate, hollow when not."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SpendPoint:
    """One recorded model call (or reservation) of the ledger."""

    at: datetime
    """When it was recorded."""
    cost_usd: float
    """Its cost (the estimate for a reservation)."""


def _svg(title: str, body: list[str], height: int = _HEIGHT) -> str:
    return svg(title, body, width=_WIDTH, height=height)


def hit_rate_chart(title: str, bars: Sequence[Bar], *, gate_label: str = "") -> str:
    """Draw grouped bars: one group per regime, one bar per verdict, height = hit rate; hollow = below the gate."""
    regimes = sorted({b.regime for b in bars})
    verdicts = sorted({b.verdict for b in bars})
    colour = {v: _VERDICT_COLOURS[i % len(_VERDICT_COLOURS)] for i, v in enumerate(verdicts)}
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    body = [f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#ccc"/>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _TOP + plot_h * (1 - tick)
        body.append(f'<line x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(svg_text(_LEFT - 4, y + 4, f"{tick:.0%}", anchor="end", size=10))
    group_w = plot_w / max(1, len(regimes))
    bar_w = min(28.0, (group_w - 12) / max(1, len(verdicts)))
    by_key = {(b.regime, b.verdict): b for b in bars}
    for g, regime in enumerate(regimes):
        x0 = _LEFT + g * group_w + (group_w - bar_w * len(verdicts)) / 2
        for i, verdict in enumerate(verdicts):
            bar = by_key.get((regime, verdict))
            if bar is None:
                continue
            h = plot_h * max(0.0, min(1.0, bar.hit_rate))
            x, y = x0 + i * bar_w, _TOP + plot_h - h
            fill = colour[verdict] if bar.passes_gate else "none"
            tip = f"{verdict} in {regime}: hit rate {bar.hit_rate:.1%}, n={bar.n}" + (
                "" if bar.passes_gate else " (below the gate)"
            )
            body.append(
                f'<rect class="bar" x="{x + 1:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}"'
                f' fill="{fill}" stroke="{colour[verdict]}" stroke-width="1.5"><title>{escape(tip)}</title></rect>'
            )
        body.append(svg_text(_LEFT + g * group_w + group_w / 2, _TOP + plot_h + 14, regime.replace("_", " ")))
    legend_x = _LEFT
    for verdict in verdicts:
        body.append(f'<rect x="{legend_x}" y="{_HEIGHT - 18}" width="10" height="10" fill="{colour[verdict]}"/>')
        body.append(svg_text(legend_x + 14, _HEIGHT - 9, verdict, anchor="start", size=10))
        legend_x += 24 + 7 * len(verdict)
    note = "hollow: below the gate" + (f" ({gate_label})" if gate_label else "")
    body.append(svg_text(_WIDTH - _RIGHT, _HEIGHT - 9, note, anchor="end", size=10))
    return _svg(title, body)


def _window_spend(points: Sequence[SpendPoint], window: timedelta) -> list[tuple[datetime, float]]:
    # The spend the ledger counts at each recorded call: the sum of the calls in (t - window, t].
    ordered = sorted(points, key=lambda p: p.at)
    out: list[tuple[datetime, float]] = []
    for point in ordered:
        total = sum(p.cost_usd for p in ordered if point.at - window < p.at <= point.at)
        out.append((point.at, total))
    return out


def spend_chart(
    points: Sequence[SpendPoint],
    *,
    cap_usd: float,
    window: timedelta,
    now: datetime,
    nights: Mapping[datetime, float] | None = None,
) -> str:
    """Draw the sliding window's spend at each recorded call against the cap, the current window shaded.

    ``nights`` (night start -> its spend) adds a tick per night, so a workspace whose ledger holds nothing (no model
    configured, or every call aged out of the window) still shows when nights ran and what they spent.
    """
    nights = dict(nights or {})
    times = [p.at for p in points] + list(nights) + [now, now - window]
    start, end = min(times), max(times)
    span = max((end - start).total_seconds(), 1.0)
    series = _window_spend(points, window)
    top = max([cap_usd * 1.15, *(v for _, v in series), *nights.values(), 1e-9])
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def x_of(at: datetime) -> float:
        return _LEFT + plot_w * (at - start).total_seconds() / span

    def y_of(usd: float) -> float:
        return _TOP + plot_h * (1 - usd / top)

    body = [f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#ccc"/>']
    wx = x_of(now - window)
    body.append(
        f'<rect class="window" x="{wx:.1f}" y="{_TOP}" width="{max(1.0, x_of(now) - wx):.1f}" height="{plot_h}"'
        f' fill="#fde9c8" opacity="0.6"><title>{escape(f"the current window: {window} up to now")}</title></rect>'
    )
    cap_y = y_of(cap_usd)
    body.append(
        f'<line class="cap" x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{cap_y:.1f}" y2="{cap_y:.1f}" stroke="#d62728"'
        f' stroke-dasharray="6 3"/>'
    )
    body.append(svg_text(_LEFT + plot_w - 2, cap_y - 4, f"cap ${cap_usd:.2f}", anchor="end", size=10))
    body.append(svg_text(_LEFT - 4, _TOP + plot_h + 4, "$0", anchor="end", size=10))
    for at, usd in sorted(nights.items()):
        x = x_of(at)
        body.append(
            f'<line class="night" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP + plot_h}" y2="{y_of(usd):.1f}" stroke="#888"'
            f' stroke-width="3"><title>{escape(f"night {at:%Y-%m-%d %H:%M}: ${usd:.4f}")}</title></line>'
        )
    if series:
        path = [f"M{x_of(series[0][0]):.1f},{y_of(0):.1f}"]
        for at, usd in series:
            path.append(f"L{x_of(at):.1f},{y_of(usd):.1f}")
        body.append(f'<path class="spend" d="{" ".join(path)}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
        for at, usd in series:
            body.append(
                f'<circle cx="{x_of(at):.1f}" cy="{y_of(usd):.1f}" r="2.5" fill="#1f77b4">'
                f"<title>{escape(f'{at:%Y-%m-%d %H:%M}: ${usd:.4f} in the window')}</title></circle>"
            )
    else:
        body.append(svg_text(_LEFT + plot_w / 2, _TOP + plot_h / 2, "no model spend in the ledger", size=12))
    body.append(svg_text(_LEFT, _HEIGHT - 24, f"{start:%Y-%m-%d %H:%M}", anchor="start", size=10))
    body.append(svg_text(_LEFT + plot_w, _HEIGHT - 24, f"{end:%Y-%m-%d %H:%M}", anchor="end", size=10))
    body.append(
        svg_text(
            _LEFT,
            _HEIGHT - 8,
            "blue: spend in the sliding window; grey: each night; shaded: the current window",
            anchor="start",
            size=10,
        )
    )
    return _svg("Model spend against the cap", body)
