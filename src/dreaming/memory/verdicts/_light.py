"""Light sleep of the verdict path: matured samples with their decision-day regime (``verdict-signals.jsonl``)."""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from dreaming.memory._io import InputReport
from dreaming.memory._workspace import Workspace
from dreaming.memory.verdicts._handoff import ReviewedLines, SignalLines, drop, drop_future, hand_off, take_over
from dreaming.memory.verdicts._prices import REGIMES, PriceBook
from dreaming.memory.verdicts._records import VERDICTS, WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import (
    _CHUNK_LINES,
    AtomicLineWriter,
    bulk_objects,
    format_number,
    is_number,
    read_objects,
)

__all__ = ["LightSummary", "light_sleep_verdicts"]

_WINDOW_KEYS = tuple(f"{w}d" for w in sorted(WINDOWS, key=lambda w: f"{w}d"))


@dataclass(frozen=True, kw_only=True, slots=True)
class LightSummary:
    """What light sleep did."""

    ingested: int = 0
    """Matured samples written to verdict-signals.jsonl."""
    immature: int = 0
    """Valid lines with no outcome in either window yet."""
    skipped: int = 0
    """Bad lines skipped and reported."""
    regime_from_prices: int = 0
    """Samples whose regime was computed from ``prices/`` (the rest used the line's ``regime`` or ``unknown``)."""
    atr_filled: int = 0
    """Samples whose missing ``atr_pct`` was computed from ``prices/``."""
    changed: bool = False
    """Whether verdict-signals.jsonl was rewritten."""


def _outcome(value: Any) -> float | str | None:
    # None: not matured; float: the change; str: why the value is unusable.
    if value is None:
        return None
    if type(value) is not dict:
        return "is not an object"
    change = value.get("change_pct")
    if not is_number(change):
        return "has no numeric change_pct"
    return float(change)


def light_sleep_verdicts(ws: Workspace, *, now: datetime, report: InputReport) -> LightSummary:
    """Read ``verdict_review.jsonl``, keep matured samples, attach the decision-day regime; write the signals file.

    The regime comes from the asset's closes up to the decision day only; with no price file, from the line's own
    ``regime`` field, else ``unknown``. Only the 7d and 30d windows are kept. A missing ``atr_pct`` is computed from
    ``prices/`` when the asset has a price file. Nothing is written when the review file is absent. The review file
    is taken from the in-memory hand-off when review has just written it (see ``_handoff``), else parsed; the lines
    written are handed off to REM sleep in turn.
    """
    with bulk_objects():
        return _light_sleep_verdicts(ws, now=now, report=report)


def _light_sleep_verdicts(ws: Workspace, *, now: datetime, report: InputReport) -> LightSummary:
    source = ws.verdict_review
    if not source.exists():
        drop()
        return LightSummary()
    label = ws.relative(source)
    today = now.date()
    first_count = report.count
    price_report = InputReport()
    book = PriceBook(ws.prices_dir, price_report, label_prefix=ws.relative(ws.prices_dir) + "/")
    held = take_over(source, ReviewedLines)
    lines = (
        read_reviewed_lines(source, report, label, today) if held is None else drop_future(held, today, report, label)
    )
    # Per (asset, decision date): (rendered asset, regime or None when prices do not decide, atr from prices).
    days: dict[tuple[str, date], tuple[str, str | None, float | None]] = {}
    # Per group of the review lines, built on first use: None while unseen, _IMMATURE, or a _Prepared.
    prepared: list[_Prepared | None] = [None] * len(lines.groups)
    signals = SignalLines(
        groups=[], group=array("I"), verdict=bytearray(), shock=bytearray(), regime=bytearray(), numbers=array("I")
    )
    group_col, verdict_col, shock_col, regime_col = signals.group, signals.verdict, signals.shock, signals.regime
    immature = from_prices = filled = 0
    buffer: list[str] = []
    shock_text = ("false", "true")
    with AtomicLineWriter(ws.verdict_signals) as out:
        for g, v, s, r in zip(lines.group, lines.verdict, lines.shock, lines.regime, strict=True):
            prep = prepared[g]
            if prep is None:
                prep = prepared[g] = _prepare(lines.groups[g], book, days, signals.groups)
            if prep is _IMMATURE:
                immature += 1
                continue
            head, tails, regimes, signal_group, atr_filled, regime_from_prices = prep
            # tails and regimes are indexed by the line's own regime: the same entry four times when prices decide.
            buffer.append(f'{head}{shock_text[s]}{tails[r]}{VERDICTS[v]}"}}\n')
            group_col.append(signal_group)
            verdict_col.append(v)
            shock_col.append(s)
            regime_col.append(regimes[r])
            filled += atr_filled
            from_prices += regime_from_prices
            if len(buffer) >= _CHUNK_LINES:
                out.write_lines(buffer)
                buffer.clear()
        out.write_lines(buffer)
    ingested = len(group_col)
    signals.numbers.extend(range(1, ingested + 1))
    hand_off(ws.verdict_signals, signals)
    skipped = report.count - first_count
    report.merge(price_report)
    return LightSummary(
        ingested=ingested,
        immature=immature,
        skipped=skipped,
        regime_from_prices=from_prices,
        atr_filled=filled,
        changed=out.changed,
    )


_Prepared = tuple[str, tuple[str, ...], tuple[int, ...], int, int, int]
"""A matured review group as light sleep writes it: the line's head up to ``"macro_shock": ``, the tail from
``, "outcomes"`` up to the verdict's opening quote and the regime index written (both per the line's own regime),
its index in the signal groups, and whether its atr was filled and its regime came from prices (0 or 1)."""
_IMMATURE: _Prepared = ("", (), (), -1, 0, 0)


def _prepare(
    group: tuple[date, str, str | None, tuple[str | None, ...]],
    book: PriceBook,
    days: dict[tuple[str, date], tuple[str, str | None, float | None]],
    signal_groups: list[tuple[date, str, float | None, tuple[float | None, ...]]],
) -> _Prepared:
    day, asset, atr, changes = group
    if all(c is None for c in changes):
        return _IMMATURE
    try:
        asset_json, regime, price_atr = days[asset, day]
    except KeyError:
        asset_json, regime, price_atr = days[asset, day] = _decision_day(book, asset, day)
    atr_filled = atr is None and price_atr is not None
    if atr_filled:
        atr = format_number(price_atr)
    outcomes = ", ".join(
        f'"{key}": null' if c is None else f'"{key}": {{"change_pct": {c}}}'
        for key, c in zip(_WINDOW_KEYS, changes, strict=True)
    )
    head = f'{{"asset": {asset_json}, "atr_pct": {atr or "null"}, "decision_date": "{day.isoformat()}", "macro_shock": '
    written = tuple(regime or line for line in REGIMES)
    tails = tuple(f', "outcomes": {{{outcomes}}}, "regime": "{name}", "verdict": "' for name in written)
    # What REM would parse back from the line: format_number's text read as a float.
    by_window = dict(zip(_WINDOW_KEYS, changes, strict=True))
    values = tuple(None if (c := by_window[f"{w}d"]) is None else float(c) for w in WINDOWS)
    signal_groups.append((day, asset, None if atr is None else float(atr), values))
    return head, tails, tuple(REGIMES.index(n) for n in written), len(signal_groups) - 1, atr_filled, regime is not None


def read_reviewed_lines(source: Path, report: InputReport, label: str, today: date) -> ReviewedLines:
    """Parse ``verdict_review.jsonl`` (from the committee's system, or a previous process); report bad lines."""
    lines = ReviewedLines(
        groups=[], group=array("I"), verdict=bytearray(), shock=bytearray(), regime=bytearray(), numbers=array("I")
    )
    index: dict[tuple[date, str, str | None, tuple[str | None, ...]], int] = {}
    unknown = REGIMES.index("unknown")
    for number, obj in read_objects(source, report, label):
        checked = check_verdict_line(obj, today)
        if isinstance(checked, str):
            report.skip(label, number, checked)
            continue
        day, asset, verdict, shock = checked
        outcomes = obj.get("outcomes")
        if type(outcomes) is not dict:
            report.skip(
                label, number, "missing field 'outcomes'" if outcomes is None else "'outcomes' is not an object"
            )
            continue
        texts: list[str | None] = []
        problem = ""
        for key in _WINDOW_KEYS:
            value = _outcome(outcomes.get(key))
            if type(value) is str:
                problem = f"outcomes[{key!r}] {value}"
                break
            texts.append(None if value is None else format_number(value))  # type: ignore[arg-type]
        atr = obj.get("atr_pct")
        if not problem and atr is not None and not is_number(atr):
            problem = "'atr_pct' is not a number"
        if problem:
            report.skip(label, number, problem)
            continue
        # Grouped by the rendered texts (not the values: 0.0 == -0.0, yet they are written differently).
        key2 = (day, asset, None if atr is None else format_number(atr), tuple(texts))
        g = index.get(key2)
        if g is None:
            g = index[key2] = len(lines.groups)
            lines.groups.append(key2)
        line_regime = obj.get("regime")
        lines.group.append(g)
        lines.verdict.append(VERDICTS.index(verdict))
        lines.shock.append(shock)
        lines.regime.append(REGIMES.index(line_regime) if line_regime in REGIMES else unknown)
        lines.numbers.append(number)
    return lines


def _decision_day(book: PriceBook, asset: str, day: date) -> tuple[str, str | None, float | None]:
    asset_json = json.dumps(asset, ensure_ascii=False)
    series = book.get(asset)
    if series is None:
        return asset_json, None, None
    t0 = series.index_on_or_before(day.toordinal())
    if t0 < 0:
        return asset_json, "unknown", None
    return asset_json, series.regimes[t0], series.atr_pct[t0]
