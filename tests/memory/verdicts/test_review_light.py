from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

import pytest

from dreaming.memory import InputReport, Workspace
from dreaming.memory.verdicts import _light, light_sleep_verdicts, review_verdicts

from ._helpers import read_jsonl, weekdays, write_jsonl, write_prices

DAYS = weekdays(date(2024, 1, 1), 70)  # Jan 1 2024 (Mon, row 0) .. Apr 5 2024 (Fri, row 69)
CLOSES = [100.0 + i for i in range(70)]


def _setup(ws: Workspace, verdicts: list[Any]) -> None:
    write_prices(ws, "NDQ", DAYS, CLOSES)
    write_jsonl(ws.verdicts, verdicts)


def test_review_hand_computed(workspace: Workspace, now: datetime) -> None:
    _setup(
        workspace,
        [
            # Saturday: t0 = Fri Jan 5 (row 4, close 104). 7d -> first date >= Jan 13 = Mon Jan 15 (row 10, 110);
            # 30d -> first date >= Feb 5 (row 25, close 125). Only 5 rows up to t0: no ATR.
            {"decision_date": "2024-01-06", "asset": "NDQ", "verdict": "hold", "role": "cio", "note": "x"},
            # Mar 20 (row 57, close 157): 7d -> Mar 27 (row 62, close 162); 30d (Apr 19) beyond the end.
            {"decision_date": "3/20/2024", "asset": "NDQ", "verdict": "BUY", "macro_shock": True},
            {"decision_date": "2023-12-29", "asset": "NDQ", "verdict": "BUY"},  # before the first price
            {"decision_date": "2024-01-10", "asset": "GOLD", "verdict": "BUY"},  # no price file
        ],
    )
    report = InputReport()
    summary = review_verdicts(workspace, now=now, report=report)
    assert (summary.source, summary.reviewed, summary.unreviewable) == ("verdicts", 2, 2)
    assert summary.missing_prices == ("GOLD",)
    first, second = read_jsonl(workspace.verdict_review)
    assert first == {
        "decision_date": "2024-01-06",
        "asset": "NDQ",
        "verdict": "HOLD",
        "macro_shock": False,
        "role": "cio",
        "note": "x",
        "base_close": 104.0,
        "atr_pct": None,
        "outcomes": {"7d": {"change_pct": 5.7692}, "30d": {"change_pct": 20.1923}},  # 110/104, 125/104
    }
    assert second["decision_date"] == "2024-03-20"
    assert second["macro_shock"] is True
    assert second["base_close"] == 157.0
    assert second["outcomes"] == {"7d": {"change_pct": round((162 / 157 - 1) * 100, 4)}, "30d": None}
    assert second["atr_pct"] == round(1 / 157 * 100, 4)  # every close-to-close move is 1
    # The fast rendering is exactly json.dumps with sorted keys.
    lines = workspace.verdict_review.read_text().splitlines()
    assert lines[0] == json.dumps(first, sort_keys=True, ensure_ascii=False)
    assert lines[1] == json.dumps(second, sort_keys=True, ensure_ascii=False)


def test_review_bad_lines_reported_and_processing_continues(workspace: Workspace, now: datetime) -> None:
    good: dict[str, Any] = {"decision_date": "2024-01-08", "asset": "NDQ", "verdict": "SELL"}
    _setup(
        workspace,
        [
            "{not json",
            {"decision_date": "2024-01-08", "asset": "NDQ", "verdict": "MAYBE"},
            {"asset": "NDQ", "verdict": "BUY"},
            '{"decision_date": "2024-01-08", "asset": "NDQ", "verdict": "BUY", "x": NaN}',
            {"decision_date": "2026-05-01", "asset": "NDQ", "verdict": "BUY"},
            {"decision_date": "2024-01-08", "asset": "NDQ", "verdict": "BUY", "macro_shock": "yes"},
            "",
            good,
        ],
    )
    report = InputReport()
    summary = review_verdicts(workspace, now=now, report=report)
    assert (summary.reviewed, summary.skipped, summary.future) == (1, 6, 1)
    assert [b.describe() for b in report.bad] == [
        "memory/.dreams/verdicts.jsonl:1: not valid JSON",
        "memory/.dreams/verdicts.jsonl:2: unknown verdict 'MAYBE' (expected one of BUY, ACCUMULATE, HOLD, TRIM, SELL)",
        "memory/.dreams/verdicts.jsonl:3: missing field 'decision_date'",
        "memory/.dreams/verdicts.jsonl:4: NaN is not a number",
        "memory/.dreams/verdicts.jsonl:5: decision_date 2026-05-01 is after now (2026-04-15)",
        "memory/.dreams/verdicts.jsonl:6: 'macro_shock' is not true or false",
    ]
    assert [r["verdict"] for r in read_jsonl(workspace.verdict_review)] == ["SELL"]


def test_review_is_idempotent(workspace: Workspace, now: datetime) -> None:
    _setup(workspace, [{"decision_date": "2024-01-08", "asset": "NDQ", "verdict": "SELL"}])
    assert review_verdicts(workspace, now=now, report=InputReport()).changed
    before = workspace.verdict_review.stat().st_mtime_ns
    assert not review_verdicts(workspace, now=now, report=InputReport()).changed
    assert workspace.verdict_review.stat().st_mtime_ns == before


def test_supplied_review_is_left_alone_and_light_fills_atr(workspace: Workspace, now: datetime) -> None:
    write_prices(workspace, "NDQ", DAYS, CLOSES)
    supplied: list[Any] = [
        # atr missing: filled from prices (row 20, close 120: every move 1 -> 1/120 %). The 1d window is ignored.
        {
            "decision_date": "2024-01-29",
            "asset": "NDQ",
            "verdict": "HOLD",
            "outcomes": {"1d": {"change_pct": 0.1}, "7d": {"change_pct": 2.5}},
        },
        # No price file: the line's regime is used, its atr kept.
        {
            "decision_date": "2024-01-29",
            "asset": "GOLD",
            "verdict": "TRIM",
            "atr_pct": 0.9,
            "regime": "range_bound",
            "outcomes": {"7d": None, "30d": {"change_pct": -1, "hit": True}},
        },
        # Only a 1d outcome: not matured.
        {"decision_date": "2024-01-29", "asset": "NDQ", "verdict": "HOLD", "outcomes": {"1d": {"change_pct": 0.1}}},
        {"decision_date": "2024-01-29", "asset": "NDQ", "verdict": "HOLD", "outcomes": {"7d": {"change_pct": "x"}}},
        {"decision_date": "2024-01-29", "asset": "NDQ", "verdict": "HOLD"},
    ]
    write_jsonl(workspace.verdict_review, supplied)
    before = workspace.verdict_review.read_bytes()
    report = InputReport()
    assert review_verdicts(workspace, now=now, report=report).source == "supplied"
    assert workspace.verdict_review.read_bytes() == before
    light = light_sleep_verdicts(workspace, now=now, report=report)
    assert (light.ingested, light.immature, light.skipped, light.atr_filled) == (2, 1, 2, 1)
    assert [b.describe() for b in report.bad] == [
        "memory/.dreams/verdict_review.jsonl:4: outcomes['7d'] has no numeric change_pct",
        "memory/.dreams/verdict_review.jsonl:5: missing field 'outcomes'",
    ]
    ndq, gold = read_jsonl(workspace.verdict_signals)
    assert ndq == {
        "asset": "NDQ",
        "atr_pct": round(1 / 120 * 100, 4),
        "decision_date": "2024-01-29",
        "macro_shock": False,
        "outcomes": {"30d": None, "7d": {"change_pct": 2.5}},
        "regime": "unknown",  # 21 rows up to t0
        "verdict": "HOLD",
    }
    assert gold["regime"] == "range_bound" and gold["atr_pct"] == 0.9
    assert gold["outcomes"] == {"30d": {"change_pct": -1.0}, "7d": None}
    lines = workspace.verdict_signals.read_text().splitlines()
    assert lines[0] == json.dumps(ndq, sort_keys=True)


def test_light_regime_from_prices_only_up_to_decision_day(workspace: Workspace, now: datetime) -> None:
    _setup(workspace, [{"decision_date": "2024-03-25", "asset": "NDQ", "verdict": "BUY"}])
    review_verdicts(workspace, now=now, report=InputReport())
    light_sleep_verdicts(workspace, now=now, report=InputReport())
    (signal,) = read_jsonl(workspace.verdict_signals)
    assert signal["regime"] == "uptrend"  # row 60 of a rising series
    # Rewrite every price after the decision day: regime and ATR of the sample do not move.
    write_prices(workspace, "NDQ", DAYS, CLOSES[:61] + [1.0] * 9)
    review_verdicts(workspace, now=now, report=InputReport())
    light_sleep_verdicts(workspace, now=now, report=InputReport())
    (again,) = read_jsonl(workspace.verdict_signals)
    assert (again["regime"], again["atr_pct"]) == (signal["regime"], signal["atr_pct"])
    assert again["outcomes"] != signal["outcomes"]


def test_light_line_is_json_dumps_of_the_sample_whatever_the_span(
    workspace: Workspace, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Light sleep writes each line from per-group texts (by macro_shock and the line's own regime): check every
    # combination against json.dumps, with spans so short that they cut groups and immature lines apart.
    monkeypatch.setattr(_light, "_SPAN_LINES", 3)
    write_prices(workspace, "NDQ", DAYS, CLOSES)
    outcomes = {"7d": {"change_pct": -0.0}, "30d": {"change_pct": 12}}
    supplied: list[dict[str, Any]] = []
    expected: list[dict[str, Any]] = []
    filled: list[int] = []
    for i in range(48):
        asset, day = ("NDQ", "GOLD")[i % 2], ("2024-03-25", "2024-01-29")[i // 2 % 2]
        line: dict[str, Any] = {
            "decision_date": day,
            "asset": asset,
            "verdict": ("buy", "HOLD", "Sell")[i % 3],
            "macro_shock": i % 5 == 0,
            "outcomes": {"7d": None} if i % 7 == 3 else outcomes,
        }
        if i % 4:
            line["regime"] = ("uptrend", "downtrend", "range_bound", "sideways")[i % 4]
        if i % 6 == 1:
            line["atr_pct"] = 1.25
        supplied.append(line)
        if i % 7 == 3:
            continue  # not matured
        from_prices = {"2024-03-25": "uptrend", "2024-01-29": "unknown"}[day]  # rows 60 and 20 of a rising series
        atr = line.get("atr_pct")
        if asset == "NDQ" and atr is None:  # filled from prices: every close-to-close move is 1
            atr = round(1 / (100 + (60 if day == "2024-03-25" else 20)) * 100, 4)
            filled.append(i)
        expected.append(
            {
                "asset": asset,
                "atr_pct": atr,
                "decision_date": day,
                "macro_shock": line["macro_shock"],
                "outcomes": {"30d": {"change_pct": 12.0}, "7d": {"change_pct": -0.0}},
                "regime": from_prices
                if asset == "NDQ"
                else line.get("regime", "unknown").replace("sideways", "unknown"),
                "verdict": line["verdict"].upper(),
            }
        )
    write_jsonl(workspace.verdict_review, supplied)
    light = light_sleep_verdicts(workspace, now=now, report=InputReport())
    assert (light.ingested, light.immature) == (len(expected), 48 - len(expected))
    assert light.regime_from_prices == sum(e["asset"] == "NDQ" for e in expected)
    assert light.atr_filled == len(filled)
    written = workspace.verdict_signals.read_text(encoding="utf-8").splitlines()
    assert written == [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in expected]


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"role": "cio"},
        {"regime": "uptrend"},
        {"regime": "sideways"},
        {"regime": ["uptrend"]},
        {"p": 1.5e300},
        {'s"{x}': [1, {"b": 2, "a": None}]},
        {"role": "caf\u00e9 \u2028 {0}"},
        {"zeta": True},
        {"note": "x"},
        {"role": "cio", "zeta": "z"},
        {"regime": "downtrend", "role": "risk"},
        {"regime": {"a": 1}, "role": "risk"},
    ],
)
def test_review_line_is_json_dumps_whatever_the_extra_fields(
    workspace: Workspace, now: datetime, extra: dict[str, Any]
) -> None:
    # Review writes the common key shapes (no extra field, or one between "outcomes" and "verdict") on a fast path
    # and the rest from a template: every shape must give exactly json.dumps with sorted keys.
    rows: list[dict[str, Any]] = [
        {"decision_date": "2024-01-29", "asset": "NDQ", "verdict": v, "macro_shock": s, **extra}
        for v in ("buy", " Hold ", "SELL")
        for s in (True, False)
    ]
    _setup(workspace, [dict(reversed(row.items())) for row in rows])  # the order of the keys on a line is irrelevant
    review_verdicts(workspace, now=now, report=InputReport())
    written = workspace.verdict_review.read_text(encoding="utf-8").split("\n")[:-1]  # not splitlines: U+2028
    assert written == [json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False) for line in written]
    assert [json.loads(line)["verdict"] for line in written] == ["BUY", "BUY", "HOLD", "HOLD", "SELL", "SELL"]
    assert [json.loads(line)["macro_shock"] for line in written] == [True, False] * 3
    assert all({k: json.loads(line)[k] for k in extra} == extra for line in written)
