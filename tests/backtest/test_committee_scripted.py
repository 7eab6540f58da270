"""The scripted committee: deterministic, blind to every price after its decision day, and the demo's verdict mix."""

from __future__ import annotations

import random
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pytest

from dreaming.backtest._committee_scripted import CHOICES, SKIP_RATE, scripted_verdicts
from dreaming.memory import InputReport
from dreaming.memory.verdicts import PriceSeries, load_prices

ROOT = Path(__file__).resolve().parents[2]
SP500 = ROOT / "examples" / "backtest" / "sp500" / "prices" / "SP500.csv"


def _series(path: Path, rows: list[tuple[date, float]]) -> PriceSeries:
    path.write_text("date,close\n" + "".join(f"{d.isoformat()},{c!r}\n" for d, c in rows))
    series = load_prices(path, InputReport())
    assert series is not None
    return series


def _walk(days: int, seed: int) -> list[tuple[date, float]]:
    """A random walk with trends in both directions, on weekdays from 2001-01-01."""
    rng, close, day = random.Random(seed), 100.0, date(2001, 1, 1)
    rows: list[tuple[date, float]] = []
    while len(rows) < days:
        if day.weekday() < 5:
            drift = 0.004 if (len(rows) // 150) % 2 == 0 else -0.004
            close *= 1 + drift + rng.gauss(0, 0.01)
            rows.append((day, round(close, 4)))
        day += timedelta(days=1)
    return rows


def test_the_same_prices_give_the_same_verdicts_in_every_call(tmp_path: Path) -> None:
    prices = {"X": _series(tmp_path / "X.csv", _walk(600, 1)), "Y": _series(tmp_path / "Y.csv", _walk(600, 2))}
    start, end = date(2001, 1, 1), date(2003, 12, 31)
    first = scripted_verdicts(prices, start, end)
    assert first == scripted_verdicts(prices, start, end) and len(first) > 500
    assert {v["asset"] for v in first} == {"X", "Y"}
    assert first == sorted(first, key=lambda v: (v["decision_date"], v["asset"]))
    assert all(start.isoformat() <= v["decision_date"] <= end.isoformat() for v in first)
    assert set(first[0]) == {"id", "decision_date", "asset", "verdict", "macro_shock"}
    assert len({v["id"] for v in first}) == len(first)


def test_a_period_asked_alone_gets_the_verdicts_of_the_whole_history(tmp_path: Path) -> None:
    prices = {"X": _series(tmp_path / "X.csv", _walk(600, 3))}
    whole = scripted_verdicts(prices, date(2001, 1, 1), date(2003, 12, 31))
    lo, hi = date(2002, 3, 1), date(2002, 3, 31)
    part = [v for v in whole if lo.isoformat() <= v["decision_date"] <= hi.isoformat()]
    assert scripted_verdicts(prices, lo, hi) == part and part
    assert scripted_verdicts(prices, date(2010, 1, 1), date(2011, 1, 1)) == []  # after the prices end
    assert scripted_verdicts(prices, hi, lo) == []


@pytest.mark.parametrize("cut", [date(2001, 4, 2), date(2001, 11, 15), date(2002, 6, 28), date(2003, 1, 6)])
def test_no_verdict_depends_on_a_later_price(tmp_path: Path, cut: date) -> None:
    rows = _walk(600, 4)
    rng = random.Random(cut.toordinal())
    perturbed = [(d, c if d <= cut else round(c * rng.uniform(0.5, 1.5), 4)) for d, c in rows]
    truncated = [(d, c) for d, c in rows if d <= cut]
    start, end = date(2001, 1, 1), date(2003, 12, 31)
    real = scripted_verdicts({"X": _series(tmp_path / "X.csv", rows)}, start, end)
    other = scripted_verdicts({"X": _series(tmp_path / "P.csv", perturbed)}, start, end)
    short = scripted_verdicts({"X": _series(tmp_path / "T.csv", truncated)}, start, end)
    upto = [v for v in real if v["decision_date"] <= cut.isoformat()]
    assert upto and [v for v in other if v["decision_date"] <= cut.isoformat()] == upto
    assert short == upto
    assert other != real  # the perturbation did reach the decisions after the cut (the check above can fail)


def test_the_verdict_mix_follows_the_demo_committee_on_the_sp500() -> None:
    series = load_prices(SP500, InputReport())
    assert series is not None
    verdicts = scripted_verdicts({"SP500": series}, date(1999, 1, 1), date(2018, 12, 31))
    regime_of = {date.fromordinal(o).isoformat(): r for o, r in zip(series.ordinals, series.regimes, strict=True)}
    known = sum(1 for r in series.regimes if r != "unknown")
    assert abs(len(verdicts) / known - (1 - SKIP_RATE)) < 0.02
    by_regime: dict[str, Counter[str]] = {}
    for v in verdicts:
        by_regime.setdefault(regime_of[v["decision_date"]], Counter())[v["verdict"]] += 1
    assert set(by_regime) == set(CHOICES)  # never "unknown": no verdict before the regime is known
    for regime, counts in by_regime.items():
        total = sum(counts.values())
        assert set(counts) == {name for name, _ in CHOICES[regime]}, regime
        for name, weight in CHOICES[regime]:
            assert abs(counts[name] / total - weight) < 0.05, (regime, name)
    assert not any(
        v["verdict"] in ("BUY", "ACCUMULATE") for v in verdicts if regime_of[v["decision_date"]] == "downtrend"
    )
    shocks = [v["decision_date"] for v in verdicts if v["macro_shock"]]
    assert shocks and all(d[:7] in ("2001-09", "2008-09", "2008-10", "2010-05", "2018-02") for d in shocks)
