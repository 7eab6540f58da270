"""The in-memory hand-off between steps is an optimisation only: the files are the same bytes without it."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from dreaming.config import VerdictsConfig
from dreaming.memory import InputReport, Workspace
from dreaming.memory.verdicts import (
    deep_sleep_verdicts,
    light_sleep_verdicts,
    rem_sleep_verdicts,
    review_verdicts,
)
from dreaming.memory.verdicts._handoff import ReviewedLines, drop, take_over

from ._helpers import snapshot, weekdays, write_prices

ODD_LINES = [
    "{not json",
    "",
    '{"decision_date": "2024-05-08", "asset": "AAA", "verdict": "MAYBE"}',
    '{"asset": "AAA", "verdict": "BUY"}',
    '{"decision_date": "2024-05-08", "asset": "AAA", "verdict": "BUY", "x": NaN}',
    '{"decision_date": "2030-01-01", "asset": "AAA", "verdict": "buy"}',
    "[1, 2]",
    '{"decision_date": "2024-05-08", "asset": "AAA", "verdict": "BUY", "macro_shock": "yes"}',
    '{"decision_date": "5/8/2024", "asset": "BBB", "verdict": " hold ", "macro_shock": null, "note": "caf\u00e9 %s {x}",'
    ' "id": 7, "z": [1, {"b": 2, "a": 1}], "regime": "uptrend"}',
    '{"decision_date": "2024-05-08", "asset": "NOPE", "verdict": "BUY", "regime": "downtrend"}',
    '{"decision_date": "1990-01-08", "asset": "AAA", "verdict": "BUY"}',
    '{"decision_date": "2024-06-03", "asset": "AAA", "verdict": "SELL", "base_close": 5, "outcomes": 3}',
    '{"decision_date": "2024-06-03", "asset": "a%s", "verdict": "Trim", "a": "\\"q\\"", "zz": 1.5e300}',
    '{"decision_date": "2024-02-30", "asset": "AAA", "verdict": "BUY"}',
    '{"decision_date": 5, "asset": "AAA", "verdict": "BUY"}',
    '{"decision_date": "2024-05-08", "asset": " ", "verdict": "BUY"}',
    '{"decision_date": "2024-05-08", "asset": "AAA", "verdict": 3}',
    '{"decision_date": "2024-05-08", "asset": "AAA", "verdict": "BUY", "macro_shock": true, "role": "x%"}',
]


def _workspace(root: Path) -> Workspace:
    ws = Workspace.at(root)
    rnd = random.Random(7)
    days = weekdays(date(2024, 1, 1), 140)
    for asset in ("AAA", "BBB", "a%s"):
        closes = [100.0]
        for _ in days[1:]:
            closes.append(round(closes[-1] * (1 + rnd.gauss(0.001, 0.02)), 4))
        high_low = [(round(c * 1.01, 4), round(c * 0.99, 4)) for c in closes]
        write_prices(ws, asset, days, closes, high_low=high_low if asset != "BBB" else None)
    lines = []
    for i in range(600):
        day = days[rnd.randrange(len(days))] + timedelta(days=rnd.randrange(2))
        row = {
            "decision_date": day.isoformat(),
            "asset": rnd.choice(("AAA", "BBB", "a%s")),
            "verdict": rnd.choice(("BUY", "ACCUMULATE", "HOLD", "TRIM", "SELL")),
            "macro_shock": i % 13 == 0,
        }
        if i % 3:
            row["role"] = rnd.choice(("quant", "cio"))
        lines.append(json.dumps(row))
    for odd in ODD_LINES:
        lines.insert(rnd.randrange(len(lines)), odd)
    ws.verdicts.parent.mkdir(parents=True, exist_ok=True)
    ws.verdicts.write_text("\n".join(lines) + "\n")
    return ws


def _cycle(ws: Workspace, now: datetime, between: Callable[[], None]) -> list[str]:
    config, report = VerdictsConfig(), InputReport()
    out = [repr(review_verdicts(ws, now=now, report=report))]
    between()
    out.append(repr(light_sleep_verdicts(ws, now=now, report=report)))
    between()
    out.append(repr(rem_sleep_verdicts(ws, config, now=now, report=report)))
    between()
    out.append(repr(deep_sleep_verdicts(ws, config, now=now)))
    return out + [b.describe() for b in report.bad]


@pytest.mark.parametrize("later", [datetime(2024, 7, 1), datetime(2024, 5, 20)])
def test_every_step_gives_the_same_bytes_without_the_handoff(tmp_path: Path, later: datetime) -> None:
    with_handoff = _workspace(tmp_path / "a")
    shutil.copytree(with_handoff.root, tmp_path / "b")
    fresh = Workspace.at(tmp_path / "b")
    assert _cycle(with_handoff, later, lambda: None) == _cycle(fresh, later, drop)
    # Only a chain that ran in one process stores its tallies (see _tallies); every other file is the same.
    assert snapshot(with_handoff.root).keys() - snapshot(fresh.root).keys() == {"memory/.dreams/verdict-tallies.json"}
    assert {k: v for k, v in snapshot(with_handoff.root).items() if "tallies" not in k} == snapshot(fresh.root)


def test_handoff_checked_against_the_file_and_read_once(tmp_path: Path, now: datetime) -> None:
    ws = _workspace(tmp_path / "a")
    review_verdicts(ws, now=now, report=InputReport())
    assert take_over(ws.verdict_review, ReviewedLines) is not None
    assert take_over(ws.verdict_review, ReviewedLines) is None  # one use only
    review_verdicts(ws, now=now, report=InputReport())
    with ws.verdict_review.open("a") as handle:  # changed behind its back: parsed again
        handle.write('{"decision_date": "2024-05-08", "asset": "AAA", "verdict": "BUY", "outcomes": {}}\n')
    assert take_over(ws.verdict_review, ReviewedLines) is None


def test_earlier_now_in_a_later_step_reports_future_lines_as_parsing_does(tmp_path: Path) -> None:
    # Review runs with a later clock than light and REM: lines valid for review are in the future for the others.
    results = []
    steps: list[tuple[str, Callable[[], None]]] = [("a", lambda: None), ("b", drop)]
    for name, between in steps:
        ws = _workspace(tmp_path / name)
        config, report = VerdictsConfig(), InputReport()
        review_verdicts(ws, now=datetime(2024, 7, 1), report=report)
        between()
        light = light_sleep_verdicts(ws, now=datetime(2024, 6, 1), report=report)
        between()
        rem = rem_sleep_verdicts(ws, config, now=datetime(2024, 5, 1), report=report)
        results.append((light, rem, [b.describe() for b in report.bad], report.count, snapshot(ws.root)))
    assert results[0] == results[1]
    assert results[0][0].skipped > 0 and results[0][1].skipped > 0
