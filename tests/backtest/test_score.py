"""The pieces: the policy table, the scores of one decision, the bootstrap, the nights and their time."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from dreaming.backtest import (
    POLICY_OFFLINE,
    ActiveInsight,
    Decision,
    History,
    Scored,
    VerdictRecord,
    blocks_of,
    decide,
    night_dates,
    night_time,
    paired_bootstrap,
)
from dreaming.backtest._score import measure
from dreaming.config import DreamingConfig, ScheduleConfig


def _insight(kind: str, verdict: str, regime: str = "uptrend", window: str = "30d") -> ActiveInsight:
    return ActiveInsight(id=f"{kind}-{verdict}-{regime}-{window}".lower(), kind=kind, asset="A", verdict=verdict,
                         regime=regime, window=window, score=0.9, n=12)  # fmt: skip


def _record(verdict: str, regime: str = "uptrend") -> VerdictRecord:
    return VerdictRecord(day=date(2020, 1, 7), asset="A", verdict=verdict, macro_shock=False, line_regime=regime,
                         line="{}\n")  # fmt: skip


NO_PRICES = History(verdicts=[], prices={}, committee="recorded")
"""Without prices, a decision's regime is its line's own (as light sleep reads it)."""


def test_the_offline_policy_is_one_fixed_table() -> None:
    assert dict(POLICY_OFFLINE) == {"BUY": "HOLD", "ACCUMULATE": "HOLD", "HOLD": "BUY", "TRIM": "HOLD", "SELL": "HOLD"}


@pytest.mark.parametrize(
    ("insights", "verdict", "regime", "expected"),
    [
        ([_insight("caution", "HOLD")], "HOLD", "uptrend", "BUY"),
        ([_insight("caution", "BUY", window="7d")], "BUY", "uptrend", "HOLD"),
        ([_insight("caution", "SELL")], "SELL", "uptrend", "HOLD"),
        ([_insight("caution", "HOLD")], "HOLD", "downtrend", "HOLD"),  # another regime: nothing speaks for it
        ([_insight("caution", "HOLD")], "TRIM", "uptrend", "TRIM"),  # another verdict
        ([_insight("reliable", "HOLD")], "HOLD", "uptrend", "HOLD"),  # a reliable insight confirms
        ([_insight("caution", "HOLD", window="7d"), _insight("reliable", "HOLD")], "HOLD", "uptrend", "HOLD"),
        ([], "ACCUMULATE", "uptrend", "ACCUMULATE"),
    ],
)
def test_the_dreaming_committee_changes_a_verdict_only_on_an_unopposed_caution(
    insights: list[ActiveInsight], verdict: str, regime: str, expected: str
) -> None:
    [decision] = decide([_record(verdict, regime)], insights, NO_PRICES, night=date(2020, 1, 6))
    assert (decision.baseline, decision.dreaming, decision.regime) == (verdict, expected, regime)
    assert decision.changed == (expected != verdict)
    assert (decision.insight is not None) == decision.changed


def test_a_decision_is_scored_as_the_review_classifies_it() -> None:
    flat = min(1.0 * math.sqrt(7), 8.0)  # atr 1% over 7 days
    assert measure("HOLD", 10.0, 1.0, 7) == (0.0, 1.0, 0.0, 10.0 - 0.5 * 10.0)  # missed the rally
    assert measure("HOLD", 1.0, 1.0, 7) == (1.0, 0.0, 0.0, 0.5)  # inside the flat band: a hit
    assert measure("SELL", -flat, 1.0, 7) == (1.0, 0.0, 1.0, 0.0)  # sold before the fall
    assert measure("BUY", -3.0, 1.0, 7) == (0.0, 0.0, 0.0, 3.0)  # bought before the fall: costs the fall
    assert measure("TRIM", 5.0, 1.0, 7) == (0.0, 1.0, 0.0, 5.0 - 0.25 * 5.0)
    assert measure("ACCUMULATE", 2.0, 1.0, 30) == (1.0, 0.0, 0.0, 2.0 - 0.75 * 2.0)


def _scored(day: date, diff: float) -> Scored:
    decision = Decision(day=day, asset="A", regime="uptrend", night=day, baseline="HOLD", dreaming="BUY")
    return Scored(decision=decision, window="7d", change_pct=0.0, baseline=(0.0, 0.0, 0.0, 1.0),
                  dreaming=(diff, 0.0, 0.0, 1.0 + diff))  # fmt: skip


def test_pairs_are_resampled_in_30_day_blocks() -> None:
    first = date(2020, 1, 1)
    group = [_scored(first + timedelta(days=d), 1.0 if d % 2 else 0.0) for d in (1, 2, 3, 29, 30, 31, 65)]
    assert blocks_of(group, first) == [(4, (3.0, 0.0, 0.0, 3.0)), (2, (1.0, 0.0, 0.0, 1.0)), (1, (1.0, 0.0, 0.0, 1.0))]
    one_block = group[:3]  # nothing to resample blocks from: each pair is its own block
    assert blocks_of(one_block, first) == [(1, (d, 0.0, 0.0, d)) for d in (1.0, 0.0, 1.0)]


def test_the_bootstrap_is_deterministic_and_centred_on_the_difference() -> None:
    rng = random.Random(3)
    blocks = [(n, (sum(rng.gauss(0.2, 1) for _ in range(n)),)) for n in (rng.randint(5, 25) for _ in range(120))]
    interval = paired_bootstrap(blocks, seed=42)
    assert interval == paired_bootstrap(blocks, seed=42)
    assert interval != paired_bootstrap(blocks, seed=43)
    [(lo, hi)] = interval
    mean = sum(s[0] for _, s in blocks) / sum(n for n, _ in blocks)
    assert lo < mean < hi
    assert 0.05 < hi - lo < 0.5


def test_no_change_gives_a_zero_interval_and_a_constant_change_a_point() -> None:
    assert paired_bootstrap([(3, (0.0, 0.0)), (4, (0.0, 0.0))], seed=1) == [(0.0, 0.0), (0.0, 0.0)]
    assert paired_bootstrap([(3, (1.5,)), (4, (2.0,))], seed=1) == [(0.5, 0.5)]
    assert paired_bootstrap([], seed=1) == [(0.0, 0.0)] * 4


def test_nights_run_from_the_first_to_the_last_day_every_step() -> None:
    assert night_dates(date(2020, 1, 1), date(2020, 1, 15), 7) == [
        date(2020, 1, 1),
        date(2020, 1, 8),
        date(2020, 1, 15),
    ]
    assert night_dates(date(2020, 1, 1), date(2020, 1, 14), 7) == [date(2020, 1, 1), date(2020, 1, 8)]
    assert night_dates(date(2020, 1, 2), date(2020, 1, 1), 7) == []


def test_a_night_runs_at_the_schedules_daily_time_in_the_workspace_timezone() -> None:
    day = date(2020, 3, 2)
    config = replace(DreamingConfig(), timezone="Europe/Paris", schedule=ScheduleConfig(cron="30 4 * * *"))
    assert night_time(day, config) == datetime(2020, 3, 2, 4, 30, tzinfo=ZoneInfo("Europe/Paris"))
    assert night_time(day, DreamingConfig()) == datetime(2020, 3, 2, 3, 0, tzinfo=UTC)  # the default cron, 0 3 * * *
    weekdays = replace(config, schedule=ScheduleConfig(cron="0 3 * * 1-5"))
    assert night_time(day, weekdays) == datetime(2020, 3, 2, 0, 0, tzinfo=UTC)
