"""Synthetic markets and committees for the backtest's tests: generated prices, verdicts, and perturbations."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from dreaming.memory import Workspace
from dreaming.memory.verdicts import VERDICTS
from tests._workspaces import trading_days

START = date(2010, 1, 4)


@dataclass
class Market:
    """One asset's daily rows and a committee's verdicts, written into a workspace by :meth:`write`."""

    asset: str = "SYN"
    rows: list[tuple[date, float]] = field(default_factory=list)
    """(date, close), in date order."""
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    def write(self, root: Path) -> Workspace:
        """Write ``prices/<asset>.csv`` (date, high, low, close) and ``verdicts.jsonl``; return the workspace."""
        ws = Workspace.at(root)
        ws.prices_dir.mkdir(parents=True, exist_ok=True)
        ws.state_dir.mkdir(parents=True, exist_ok=True)
        lines = ["date,high,low,close"]
        lines += [f"{d.isoformat()},{c * 1.002:.4f},{c * 0.998:.4f},{c:.4f}" for d, c in self.rows]
        (ws.prices_dir / f"{self.asset}.csv").write_text("\n".join(lines) + "\n")
        ws.verdicts.write_text("".join(json.dumps(v) + "\n" for v in self.verdicts))
        return ws


def regimes_of(closes: list[float]) -> list[str]:
    """Return the regime of each row as light sleep computes it (from closes up to that row only)."""
    out = []
    for i in range(len(closes)):
        if i < 59:
            out.append("unknown")
            continue
        sma = sum(closes[i - 49 : i + 1]) / 50
        before = sum(closes[i - 59 : i - 9]) / 50
        if closes[i] > sma and sma > before:
            out.append("uptrend")
        elif closes[i] < sma and sma < before:
            out.append("downtrend")
        else:
            out.append("range_bound")
    return out


def trending_market(seed: int = 7, *, phases: int = 8) -> Market:
    """Steady uptrend phases (+0.5% a day, small noise) between falls and flat stretches.

    The committee HOLDs every day the market is in an uptrend (regime from prices up to that day), so it always
    misses the rally; on the other days it picks a verdict at random.
    """
    rng = random.Random(seed)
    closes: list[float] = []
    close = 100.0
    for _ in range(phases):
        for drift, length in ((0.005, 150), (-0.003, 25), (0.0, 30)):
            for _ in range(length):
                close *= 1 + drift + rng.gauss(0, 0.003)
                closes.append(close)
    days = trading_days(START, len(closes))
    regimes = regimes_of(closes)
    verdicts = []
    for day, regime in zip(days, regimes, strict=True):
        verdict = "HOLD" if regime == "uptrend" else rng.choice(VERDICTS)
        verdicts.append({"decision_date": day.isoformat(), "asset": "SYN", "verdict": verdict})
    return Market(rows=list(zip(days, closes, strict=True)), verdicts=verdicts)


def random_market(seed: int, *, count: int = 1200) -> Market:
    """A random walk with no drift (1% daily moves) and a committee that picks each day's verdict at random."""
    rng = random.Random(seed)
    closes: list[float] = []
    close = 100.0
    for _ in range(count):
        close *= 1 + rng.gauss(0, 0.01)
        closes.append(close)
    days = trading_days(START, count)
    verdicts = [{"decision_date": d.isoformat(), "asset": "SYN", "verdict": rng.choice(VERDICTS)} for d in days]
    return Market(rows=list(zip(days, closes, strict=True)), verdicts=verdicts)


def perturbed_after(market: Market, limit: date, seed: int) -> Market:
    """Return the market with everything dated after ``limit`` changed: prices, verdicts, and extra verdicts.

    Every close after ``limit`` is multiplied by a random factor in [0.7, 1.4]; every verdict after it is replaced by
    another one at random; and one extra verdict is added for each trading day after it. Nothing on or before
    ``limit`` changes.
    """
    rng = random.Random(seed)
    rows = [(d, c if d <= limit else c * rng.uniform(0.7, 1.4)) for d, c in market.rows]
    flip: Callable[[str], str] = lambda v: rng.choice([o for o in VERDICTS if o != v])  # noqa: E731
    verdicts = [
        v if date.fromisoformat(v["decision_date"]) <= limit else {**v, "verdict": flip(v["verdict"])}
        for v in market.verdicts
    ]
    verdicts += [
        {"decision_date": d.isoformat(), "asset": market.asset, "verdict": rng.choice(VERDICTS), "note": "extra"}
        for d, _ in market.rows
        if d > limit
    ]
    return Market(asset=market.asset, rows=rows, verdicts=verdicts)
