from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

import pytest

from dreaming.config import VerdictsConfig
from dreaming.memory import InputReport, Workspace
from dreaming.memory.verdicts import classify, flat_threshold, rem_sleep_verdicts, score_bucket
from dreaming.memory.verdicts._rem import _classes

from ._helpers import write_jsonl


def test_flat_threshold_and_cap() -> None:
    assert flat_threshold(1.0, 7) == math.sqrt(7)  # 2.6458
    assert flat_threshold(1.0, 30) == math.sqrt(30)  # 5.4772
    assert flat_threshold(2.0, 30) == 8.0  # 10.954 capped at 8


@pytest.mark.parametrize(
    ("verdict", "change", "atr", "window", "expected"),
    [
        ("HOLD", 1.0, 1.0, 7, "hit"),
        ("HOLD", -2.6, 1.0, 7, "hit"),
        ("HOLD", 2.6458, 1.0, 7, "missed_up"),  # >= sqrt(7) = 2.64575
        ("HOLD", 3.0, 1.0, 7, "missed_up"),
        ("HOLD", -2.6458, 1.0, 7, "avoided_down"),
        ("HOLD", 7.9, 2.0, 30, "hit"),  # band capped at 8
        ("HOLD", 8.0, 2.0, 30, "missed_up"),
        ("HOLD", 1.0, None, 7, None),
        ("BUY", 0.1, None, 7, "hit"),
        ("ACCUMULATE", 0.0, None, 30, "wrong_way"),
        ("TRIM", -0.1, None, 7, "hit"),
        ("SELL", 0.0, None, 7, "wrong_way"),
    ],
)
def test_classify(verdict: str, change: float, atr: float | None, window: int, expected: str | None) -> None:
    assert classify(verdict, change, atr_pct=atr, window_days=window) == expected


def test_rem_counts_by_the_rules_of_classify() -> None:
    # REM does not call classify: it classifies whole columns at once (_classes). Hold the two to one rule, band
    # edges included, so that test_classify also speaks for what REM actually counts.
    codes = {0: "hit", 1: "missed_up", 2: "avoided_down", 3: "wrong_way", -2: None}
    changes = (-9.0, -8.0, -2.6458, -2.6, -0.1, 0.0, 0.1, 1.0, 2.6, 2.6458, 3.0, 7.9, 8.0, 9.0)
    atrs = (None, 0.5, 1.0, 2.0)
    grid = [(change, atr) for change in changes for atr in atrs]
    for verdict in ("BUY", "ACCUMULATE", "HOLD", "TRIM", "SELL"):
        for window in (7, 30):
            got = _classes(verdict, window, tuple(c for c, _ in grid), [a for _, a in grid])
            want = [classify(verdict, c, atr_pct=a, window_days=window) for c, a in grid]
            assert [codes[code] for code in got] == want, (verdict, window)
    assert _classes("HOLD", 7, (None,), [1.0]) == _classes("BUY", 7, (None,), [None]) == [-1]  # not matured


def test_score() -> None:
    assert score_bucket(kind="reliable", hits=3, adverse=0, n=3) == 0.79  # 0.7 + 0.3 * 0.3
    assert score_bucket(kind="caution", hits=0, adverse=11, n=11) == 1.0
    assert score_bucket(kind="reliable", hits=10, adverse=4, n=14) == 0.8  # 0.7 * 10/14 + 0.3 = 0.8 exactly


def _signal(asset: str, verdict: str, regime: str, day: str, **kw: Any) -> dict[str, Any]:
    outcomes = {w: (None if kw.get(w) is None else {"change_pct": kw[w]}) for w in ("7d", "30d")}
    return {
        "decision_date": day,
        "asset": asset,
        "verdict": verdict,
        "regime": regime,
        "atr_pct": kw.get("atr"),
        "macro_shock": kw.get("shock", False),
        "outcomes": outcomes,
    }


def test_rem_buckets_hand_computed(workspace: Workspace, now: datetime) -> None:
    rows: list[Any] = [
        # HOLD/downtrend/7d, atr 1 -> flat sqrt(7): hit, missed, missed, avoided.
        _signal("NDQ", "HOLD", "downtrend", "2026-01-01", atr=1.0, **{"7d": 1.0}),
        _signal("NDQ", "HOLD", "downtrend", "2026-01-03", atr=1.0, **{"7d": 3.0}),
        _signal("NDQ", "HOLD", "downtrend", "2026-01-02", atr=1.0, **{"7d": 4.0}),
        _signal("NDQ", "HOLD", "downtrend", "2025-12-30", atr=1.0, **{"7d": -3.0}),
        _signal("NDQ", "HOLD", "downtrend", "2026-02-01", atr=None, **{"7d": 9.0}),  # unclassifiable
        _signal("NDQ", "HOLD", "downtrend", "2026-03-01", atr=1.0, shock=True, **{"7d": 9.0}),  # exempted
        _signal("NDQ", "HOLD", "unknown", "2026-03-01", atr=1.0, **{"7d": 9.0}),  # unknown regime
        # BUY/uptrend/30d: 2, 1 hit; -1, 0 wrong way -> reliable (2 is not > 2).
        *(_signal("GLD", "BUY", "uptrend", "2026-01-05", **{"30d": c}) for c in (2.0, 1.0, -1.0, 0.0)),
        # TRIM/range_bound/7d: 1, 2 wrong way; -1 hit -> caution.
        *(_signal("GLD", "TRIM", "range_bound", "2026-01-06", **{"7d": c}) for c in (1.0, 2.0, -1.0)),
        '{"decision_date": "2026-01-06", "asset": "GLD", "verdict": "TRIM", "regime": "sideways", "outcomes": {}}',
    ]
    write_jsonl(workspace.verdict_signals, rows)
    report = InputReport()
    summary = rem_sleep_verdicts(workspace, VerdictsConfig(), now=now, report=report)
    assert (summary.samples, summary.exempted, summary.unknown_regime, summary.unclassifiable) == (14, 1, 1, 1)
    assert summary.skipped == 1
    assert report.bad[0].describe() == "memory/.dreams/verdict-signals.jsonl:15: unknown regime 'sideways'"
    data = json.loads(workspace.candidates.read_text())
    assert data["version"] == 1 and data["generated_at"] == now.isoformat()
    by_id = {c["id"]: c for c in data["candidates"]}
    assert by_id["caution-hold-ndq-downtrend-7d"] == {
        "id": "caution-hold-ndq-downtrend-7d",
        "asset": "NDQ",
        "verdict": "HOLD",
        "regime": "downtrend",
        "window": "7d",
        "kind": "caution",
        "n": 4,
        "hits": 1,
        "hit_rate": 0.25,
        "avg_change_pct": 1.25,  # (1 + 3 + 4 - 3) / 4
        "missed_up_rate": 0.5,
        "avoided_down_rate": 0.25,
        "score": 0.47,  # 0.7 * 0.5 + 0.3 * 0.4
        "passes_gate": False,
        "last_seen": "2026-01-03",
    }
    buy = by_id["reliable-buy-gld-uptrend-30d"]
    assert (buy["n"], buy["hits"], buy["wrong_way_rate"], buy["avg_change_pct"], buy["score"]) == (4, 2, 0.5, 0.5, 0.47)
    trim = by_id["caution-trim-gld-range-bound-7d"]
    assert (trim["kind"], trim["wrong_way_rate"], trim["score"]) == ("caution", 0.6667, 0.5567)  # 0.7*2/3 + 0.09
    assert [c["id"] for c in data["candidates"]] == [
        "caution-trim-gld-range-bound-7d",
        "caution-hold-ndq-downtrend-7d",
        "reliable-buy-gld-uptrend-30d",
    ]  # score descending, then id
    assert not rem_sleep_verdicts(workspace, VerdictsConfig(), now=now, report=InputReport()).changed


@pytest.mark.parametrize(
    ("n", "hits", "min_score", "passes"),
    [
        (14, 10, 0.8, True),  # score exactly 0.8
        (14, 9, 0.8, False),  # 0.75
        (3, 3, 0.5, True),  # n = 3 passes the count gate
        (2, 2, 0.5, False),  # n = 2 fails it (score 0.76)
    ],
)
def test_gate_boundaries(
    workspace: Workspace, now: datetime, n: int, hits: int, min_score: float, passes: bool
) -> None:
    changes = [1.0] * hits + [-1.0] * (n - hits)
    write_jsonl(workspace.verdict_signals, [_signal("A", "BUY", "uptrend", "2026-04-01", **{"7d": c}) for c in changes])
    summary = rem_sleep_verdicts(workspace, VerdictsConfig(gate_min_score=min_score), now=now, report=InputReport())
    (only,) = summary.candidates
    assert only.passes_gate is passes
