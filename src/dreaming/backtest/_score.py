"""Scoring the decisions with the full prices, the metrics per group, and the paired bootstrap interval.

Scoring is the one place the future is read, and only to score: each decision's change over 7 and 30 days is
computed as the review computes it (the last trading date on or before the decision, the first one on or after
``decision + window``), with the flat band of :func:`~dreaming.memory.verdicts.flat_threshold`.
"""

from __future__ import annotations

import math
import random
import zlib
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from dreaming.backtest._history import History
from dreaming.backtest._policy import Decision
from dreaming.memory.verdicts import REGIMES, WINDOWS, classify, flat_threshold

__all__ = [
    "BLOCK_DAYS",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "EXPOSURE",
    "METRICS",
    "Block",
    "Scored",
    "blocks_of",
    "differences",
    "metrics",
    "paired_bootstrap",
    "score_decisions",
]

EXPOSURE = {"BUY": 1.0, "ACCUMULATE": 0.75, "HOLD": 0.5, "TRIM": 0.25, "SELL": 0.0}
"""The share of a full position each verdict holds, for the opportunity cost."""
METRICS = ("hit_rate", "missed_rally_rate", "avoided_drawdown_rate", "opportunity_cost_pct")
"""Every metric is a mean over the same decisions for both committees, so each difference is a mean of pairs."""
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20260516
"""Each group's resamples are drawn from this seed and the group's name: the same inputs give the same interval."""
BLOCK_DAYS = max(WINDOWS)
"""The bootstrap resamples the decision pairs in blocks of this many days (:func:`blocks_of`)."""
_STAY_OUT = frozenset({"HOLD", "TRIM", "SELL"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Scored:
    """One decision scored in one window, for both committees: the values of :data:`METRICS`, in order."""

    decision: Decision
    window: str
    change_pct: float
    baseline: tuple[float, float, float, float]
    dreaming: tuple[float, float, float, float]


def measure(verdict: str, change_pct: float, atr_pct: float, window_days: int) -> tuple[float, float, float, float]:
    """Return a verdict's hit, missed rally, avoided drawdown (each 0 or 1) and opportunity cost in percent.

    A missed rally is HOLD, TRIM or SELL before a rise of at least the flat band; an avoided drawdown is the same
    verdicts before a fall of at least the flat band; the opportunity cost is ``max(change, 0) - exposure * change``.
    """
    flat = flat_threshold(atr_pct, window_days)
    out = verdict in _STAY_OUT
    hit = classify(verdict, change_pct, atr_pct=atr_pct, window_days=window_days) == "hit"
    return (
        float(hit),
        float(out and change_pct >= flat),
        float(out and change_pct <= -flat),
        max(change_pct, 0.0) - EXPOSURE[verdict] * change_pct,
    )


def score_decisions(decisions: Iterable[Decision], history: History) -> list[Scored]:
    """Score every decision in each window where it can be: prices on or before it, an ATR, and a matured target."""
    out = []
    for d in decisions:
        series = history.series(d.asset)
        if series is None:
            continue
        ordinal = d.day.toordinal()
        t0 = series.index_on_or_before(ordinal)
        atr = series.atr_pct[t0] if t0 >= 0 else None
        if atr is None:
            continue
        for window in WINDOWS:
            target = bisect_left(series.ordinals, ordinal + window, t0)
            if target == len(series.ordinals):
                continue
            change = round((series.closes[target] / series.closes[t0] - 1) * 100, 4)
            base = measure(d.baseline, change, atr, window)
            out.append(
                Scored(
                    decision=d,
                    window=f"{window}d",
                    change_pct=change,
                    baseline=base,
                    dreaming=base if not d.changed else measure(d.dreaming, change, atr, window),
                )
            )
    return out


def _groups(scored: Sequence[Scored]) -> list[tuple[tuple[str, str, str], list[Scored]]]:
    """Group by (asset, regime, window), with ``*`` for all assets and all regimes, in report order."""
    found: dict[tuple[str, str, str], list[Scored]] = {}
    for s in scored:
        d = s.decision
        for asset in ("*", d.asset):
            for regime in ("*", d.regime):
                found.setdefault((asset, regime, s.window), []).append(s)
    windows = [f"{w}d" for w in WINDOWS]
    regimes = ["*", *REGIMES]

    def order(key: tuple[str, str, str]) -> tuple[bool, str, int, int]:
        asset, regime, window = key
        return (asset != "*", asset, regimes.index(regime), windows.index(window))

    return [(key, found[key]) for key in sorted(found, key=order)]


def _mean(values: Iterable[float], n: int) -> float:
    return round(math.fsum(values) / n, 4)


def metrics(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """Return the report's metric rows: per committee, asset, regime and window."""
    rows = []
    for (asset, regime, window), group in _groups(scored):
        n = len(group)
        changed = sum(1 for s in group if s.decision.changed)
        for policy in ("baseline", "dreaming"):
            values = [s.baseline if policy == "baseline" else s.dreaming for s in group]
            row: dict[str, Any] = {"policy": policy, "asset": asset, "regime": regime, "window": window, "n": n}
            row.update({name: _mean((v[i] for v in values), n) for i, name in enumerate(METRICS)})
            row["changed"] = changed if policy == "dreaming" else 0
            rows.append(row)
    return rows


def differences(scored: Sequence[Scored], *, resamples: int = BOOTSTRAP_RESAMPLES) -> list[dict[str, Any]]:
    """Return, per group and metric, dreaming - baseline with its paired bootstrap 95% interval (:func:`blocks_of`)."""
    rows = []
    first = min((s.decision.day for s in scored), default=date.min)
    for (asset, regime, window), group in _groups(scored):
        n = len(group)
        seed = BOOTSTRAP_SEED ^ zlib.crc32(f"{asset}\0{regime}\0{window}".encode())
        intervals = paired_bootstrap(blocks_of(group, first), seed=seed, resamples=resamples)
        for i, name in enumerate(METRICS):
            base = _mean((s.baseline[i] for s in group), n)
            dream = _mean((s.dreaming[i] for s in group), n)
            lo, hi = intervals[i]
            rows.append(
                {
                    "asset": asset,
                    "regime": regime,
                    "window": window,
                    "metric": name,
                    "baseline": base,
                    "dreaming": dream,
                    "difference": _mean((s.dreaming[i] - s.baseline[i] for s in group), n),
                    "ci95": [lo, hi],
                    "significant": lo > 0 or hi < 0,
                }
            )
    return rows


Block = tuple[int, tuple[float, ...]]
"""A block of decision pairs: how many, and the sum of their differences (dreaming - baseline) per metric."""


def blocks_of(group: Sequence[Scored], first: date) -> list[Block]:
    """Return the group's pairs in blocks of :data:`BLOCK_DAYS`: the decisions dated in one stretch go together.

    Two decisions a few days apart are scored over windows that mostly overlap, so their outcomes are not
    independent; resampling them one by one would make the interval too narrow (in patternless markets an interval
    on single pairs excluded zero several times as often as a 95% interval should). Blocks of the longest window keep
    such neighbours together. When the group spans a single block, there is nothing to resample blocks from, and
    each pair is its own block.
    """
    found: dict[int, tuple[int, list[float]]] = {}
    for s in group:
        key = (s.decision.day - first).days // BLOCK_DAYS
        count, sums = found.get(key) or (0, [0.0] * len(METRICS))
        found[key] = (count + 1, [a + (y - x) for a, x, y in zip(sums, s.baseline, s.dreaming, strict=True)])
    if len(found) < 2:
        return [(1, tuple(y - x for x, y in zip(s.baseline, s.dreaming, strict=True))) for s in group]
    return [(count, tuple(sums)) for _, (count, sums) in sorted(found.items())]


def paired_bootstrap(
    blocks: Sequence[Block], *, seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> list[tuple[float, float]]:
    """Return the 95% percentile interval of the mean paired difference, per metric, rounded to 4 decimals.

    Each resample draws as many blocks as there are, with replacement; its mean is the sum of the drawn blocks'
    differences over the number of pairs they hold. Deterministic for a given ``seed``.
    """
    width = len(blocks[0][1]) if blocks else len(METRICS)
    if not blocks:
        return [(0.0, 0.0)] * width
    rng = random.Random(seed)
    draw = rng.random
    nb = len(blocks)
    counts = [count for count, _ in blocks]
    columns = list(zip(*(sums for _, sums in blocks), strict=True))
    means: list[list[float]] = [[] for _ in range(width)]
    for _ in range(resamples):
        picks = [int(draw() * nb) for _ in range(nb)]
        pairs = sum(map(counts.__getitem__, picks))
        for i, column in enumerate(columns):
            means[i].append(math.fsum(map(column.__getitem__, picks)) / pairs)
    out = []
    for values in means:
        values.sort()
        out.append((round(_quantile(values, 0.025), 4), round(_quantile(values, 0.975), 4)))
    return out


def _quantile(ordered: list[float], q: float) -> float:
    """Return the ``q`` quantile of sorted values, linearly interpolated (numpy's default)."""
    at = q * (len(ordered) - 1)
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)
