"""A workspace with prices and no verdicts: the scripted committee decides, and the nights learn from its verdicts.

The committee itself (``_committee_scripted``) is tested where it lives; here a stand-in with the same signature shows
how the walk uses it.
"""

from __future__ import annotations

import json
import sys
import types
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from dreaming.backtest import Night, run_backtest
from dreaming.config import DreamingConfig
from dreaming.memory import Workspace
from dreaming.memory.verdicts import PriceSeries

from ._markets import trending_market


def test_the_scripted_committee_decides_when_there_is_no_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[list[str], date, date]] = []

    def scripted_verdicts(prices: dict[str, PriceSeries], start: date, end: date) -> list[dict[str, Any]]:
        calls.append((sorted(prices), start, end))
        days = [date.fromordinal(o) for o in prices["SYN"].ordinals if start <= date.fromordinal(o) <= end]
        return [{"decision_date": d, "asset": "SYN", "verdict": "HOLD"} for d in days]

    module = types.ModuleType("dreaming.backtest._committee_scripted")
    module.scripted_verdicts = scripted_verdicts  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dreaming.backtest._committee_scripted", module)
    market = trending_market(5, phases=2)
    ws = market.write(tmp_path / "ws")
    ws.verdicts.unlink()
    first, last = market.rows[0][0] + timedelta(days=180), market.rows[0][0] + timedelta(days=300)
    newest: dict[date, str] = {}

    def look(night: Night, scratch: Workspace) -> None:
        lines = [json.loads(line) for line in scratch.verdicts.read_text().splitlines()]
        newest[night.date] = max(line["decision_date"] for line in lines)

    result = run_backtest(ws, DreamingConfig(), start=first, end=last, on_night=look)
    assert calls == [(["SYN"], market.rows[0][0], last)]
    assert result.report["committee"] == "scripted"
    assert result.report["decisions"] == sum(1 for d, _ in market.rows if first < d <= last)
    assert {d.baseline for d in result.decisions} == {"HOLD"}
    assert result.report["changed"] > 0  # HOLD through the rallies: the nights learned it from the scripted verdicts
    assert all(newest[night] <= night.isoformat() for night in newest)
    assert not ws.verdicts.exists()
