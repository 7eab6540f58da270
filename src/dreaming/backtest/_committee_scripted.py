"""The scripted committee: verdicts for a workspace that has none, computed from prices up to each decision day.

It is the demo's committee (``examples/demo/make_committee.py``): it reads the trend from the close against its 50-day
average and that average's slope (the verdict path's own regime rule, :data:`~dreaming.memory.verdicts.SMA_DAYS` and
:data:`~dreaming.memory.verdicts.SLOPE_LOOKBACK`), is confident in uptrends, conservative in downtrends (there it
mostly HOLDs or TRIMs), skips about one trading day in ten, and flags the days of known market shocks
``macro_shock``. The choice table and the shock days are the demo's; the committee decides only once the regime is
known (:data:`~dreaming.memory.verdicts.MIN_REGIME_ROWS` rows of history).

No look-ahead: the decision on day ``d`` reads the regime of the row of ``d``, which the price loader computes from
closes up to that row only, and a random draw seeded by ``(SEED, asset, d)`` alone. So the verdicts up to ``d`` do
not change when any later price changes, nor with the ``start`` and ``end`` asked for (a replay asking period by
period gets the same verdicts as one asking for the whole history), nor between processes.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from dreaming.memory.verdicts import PriceSeries

__all__ = ["CHOICES", "SEED", "SHOCKS", "SKIP_RATE", "scripted_verdicts"]

SEED = 20260526
"""The demo committee's seed; each decision day draws from its own generator seeded with it, the asset and the day."""
SKIP_RATE = 0.1
"""The share of trading days the committee does not meet."""
CHOICES: dict[str, tuple[tuple[str, float], ...]] = {
    "downtrend": (("HOLD", 0.7), ("TRIM", 0.2), ("SELL", 0.1)),
    "uptrend": (("BUY", 0.45), ("ACCUMULATE", 0.3), ("HOLD", 0.25)),
    "range_bound": (("HOLD", 0.6), ("ACCUMULATE", 0.2), ("TRIM", 0.2)),
}
"""Regime -> (verdict, probability), the demo committee's table."""
SHOCKS: tuple[tuple[date, date], ...] = (
    (date(2001, 9, 17), date(2001, 9, 28)),
    (date(2008, 9, 15), date(2008, 10, 31)),
    (date(2010, 5, 6), date(2010, 5, 7)),
    (date(2018, 2, 5), date(2018, 2, 9)),
)
"""Days of known market shocks (inclusive), flagged ``macro_shock`` (the black-swan exemption), as in the demo."""


def _pick(regime: str, draw: float) -> str:
    acc = 0.0
    for verdict, weight in CHOICES[regime]:
        acc += weight
        if draw < acc:
            return verdict
    return CHOICES[regime][-1][0]


def scripted_verdicts(prices: dict[str, PriceSeries], start: date, end: date) -> list[dict[str, Any]]:
    """Return the scripted committee's verdicts on each asset's trading days in ``[start, end]``, as verdict lines.

    Each is a mapping as a line of ``verdicts.jsonl`` holds it (``id``, ``decision_date``, ``asset``, ``verdict``,
    ``macro_shock``), ordered by decision date, then asset. Deterministic; see the module's docstring for why no
    verdict depends on a price after its day.
    """
    out: list[dict[str, Any]] = []
    first, last = start.toordinal(), end.toordinal()
    for asset in sorted(prices):
        series = prices[asset]
        lo = series.index_on_or_after(first)
        if lo < 0:  # the prices end before ``start``
            continue
        for i in range(lo, len(series.ordinals)):
            ordinal = series.ordinals[i]
            if ordinal > last:
                break
            regime = series.regimes[i]
            day = date.fromordinal(ordinal)
            rng = random.Random(f"{SEED}:{asset}:{day.isoformat()}")
            if rng.random() < SKIP_RATE or regime not in CHOICES:  # a skipped day, or no history yet
                continue
            out.append(
                {
                    "id": f"scripted-{asset}-{day.isoformat()}",
                    "decision_date": day.isoformat(),
                    "asset": asset,
                    "verdict": _pick(regime, rng.random()),
                    "macro_shock": any(a <= day <= b for a, b in SHOCKS),
                }
            )
    out.sort(key=lambda v: (v["decision_date"], v["asset"]))
    return out
