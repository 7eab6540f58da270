"""The history read once, and its as-of views: what the night at ``t`` is given holds nothing dated after ``t``."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from dreaming.backtest import load_history
from dreaming.backtest._history import cut_series
from dreaming.memory import InputReport, Workspace
from dreaming.memory.verdicts import load_prices

from ._markets import trending_market

MESSY_PRICES = """\ufeffDate,Open,High,Low,Close,Volume
2010-01-08,1,2.5,0.5,2.0,7
2010-01-04,1,1.5,0.5,1.0,7
01/05/2010,1,1.8,0.9,1.5,7
2010-01-06,1,1.9,1.0,1.7,7
2010-01-06,1,1.9,1.0,1.75,7
2010-01-07,1,2.2,1.5,nope,7
not a date,1,1,1,1,1
"2010-01-11","1","2.4","1.9","2.2",7
2010-01-12,1,2.6,2.0,2.5
2010-01-13,1,2.9,2.4,2.8,7,extra
"""
"""Rows out of order, a US date, a duplicated date (the last row wins), a bad close, an unreadable date, quoted cells,
a short row and a long one."""


def _long_market_file(path: Path) -> None:
    market = trending_market(3, phases=1)
    rows = ["date,high,low,close"] + [f"{d.isoformat()},{c * 1.01},{c * 0.99},{c}" for d, c in market.rows]
    rows[40], rows[41] = rows[41], rows[40]  # one pair out of order
    path.write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize("kind", ["messy", "long"])
def test_a_view_parses_to_the_full_series_cut_at_its_night(tmp_path: Path, kind: str) -> None:
    """The cut series handed to the night equals what parsing the cut file gives, for every night."""
    ws = Workspace.at(tmp_path / "ws")
    ws.prices_dir.mkdir(parents=True)
    ws.state_dir.mkdir(parents=True)
    ws.verdicts.write_text('{"decision_date": "2010-01-06", "asset": "ASSET", "verdict": "HOLD"}\n')  # recorded
    source = ws.prices_dir / "ASSET.csv"
    if kind == "messy":
        source.write_text(MESSY_PRICES)
    else:
        _long_market_file(source)
    history = load_history(ws, InputReport(), end=date(2030, 1, 1))
    price_file = history.prices["ASSET"]
    assert price_file.series is not None
    days = sorted({date.fromordinal(o) for o in price_file.ordinals})
    nights = [days[0], *days[:: max(1, len(days) // 25)], days[-1], date(2009, 12, 31), date(2030, 1, 1)]
    for i, night in enumerate(nights):
        fresh = tmp_path / f"view-{i}" / "ASSET.csv"  # a path never parsed before: a real parse
        fresh.parent.mkdir()
        fresh.write_bytes(price_file.view(night))
        parsed = load_prices(fresh, InputReport())
        assert parsed is not None
        assert parsed == cut_series(price_file.series, night.toordinal()), night


def test_the_verdicts_view_holds_the_lines_dated_on_or_before_the_night(tmp_path: Path) -> None:
    ws = trending_market(3, phases=1).write(tmp_path / "ws")
    lines = ws.verdicts.read_text().splitlines()
    lines.insert(5, json.dumps({"decision_date": "2010-02-01", "asset": "SYN", "verdict": "sell", "role": "cio"}))
    ws.verdicts.write_text("\n".join(lines) + "\n")
    history = load_history(ws, InputReport(), end=date(2030, 1, 1))
    scratch = Workspace.at(tmp_path / "scratch")
    scratch.state_dir.mkdir(parents=True)
    night = date(2010, 2, 1)
    history.write_view(scratch, night)
    written = [json.loads(line) for line in scratch.verdicts.read_text().splitlines()]
    expected = [json.loads(line) for line in lines if json.loads(line)["decision_date"] <= night.isoformat()]
    assert written == expected
    assert {"decision_date": "2010-02-01", "asset": "SYN", "verdict": "sell", "role": "cio"} in written
    prices = (scratch.prices_dir / "SYN.csv").read_text().splitlines()
    assert prices[0] == "date,high,low,close"
    assert max(row.split(",")[0] for row in prices[1:]) == "2010-02-01"


def test_bad_lines_and_rows_are_reported_once_when_the_history_is_read(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path / "ws")
    ws.prices_dir.mkdir(parents=True)
    ws.state_dir.mkdir(parents=True)
    (ws.prices_dir / "ASSET.csv").write_text(MESSY_PRICES)
    ws.verdicts.write_text(
        '{"decision_date": "2010-01-06", "asset": "ASSET", "verdict": "HOLD"}\n'
        "not json\n"
        '{"decision_date": "2010-01-07", "asset": "ASSET", "verdict": "MAYBE"}\n'
    )
    report = InputReport()
    history = load_history(ws, report, end=date(2030, 1, 1))
    assert [r.verdict for r in history.verdicts] == ["HOLD"]
    assert history.committee == "recorded"
    described = [b.describe() for b in report.bad]
    assert "memory/.dreams/verdicts.jsonl:2: not valid JSON" in described
    assert any(d.startswith("memory/.dreams/verdicts.jsonl:3: unknown verdict 'MAYBE'") for d in described)
    assert "prices/ASSET.csv:7: close is missing, not a number or not positive" in described
    assert "prices/ASSET.csv:8: unreadable date" in described
