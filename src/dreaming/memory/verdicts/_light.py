"""Light sleep of the verdict path: matured samples with their decision-day regime (``verdict-signals.jsonl``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from dreaming.memory._io import InputReport
from dreaming.memory._workspace import Workspace
from dreaming.memory.verdicts._prices import REGIMES, PriceBook
from dreaming.memory.verdicts._records import WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import AtomicLineWriter, format_number, is_number, read_objects

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
    ``prices/`` when the asset has a price file. Nothing is written when the review file is absent.
    """
    source = ws.verdict_review
    if not source.exists():
        return LightSummary()
    label = ws.relative(source)
    today = now.date()
    first_count = report.count
    price_report = InputReport()
    book = PriceBook(ws.prices_dir, price_report, label_prefix=ws.relative(ws.prices_dir) + "/")
    # Per (asset, decision date): (rendered asset, regime or None when prices do not decide, atr from prices).
    cache: dict[tuple[str, date], tuple[str, str | None, float | None]] = {}
    ingested = immature = skipped = from_prices = filled = 0
    with AtomicLineWriter(ws.verdict_signals) as out:
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
            rendered: list[str] = []
            matured = False
            problem = ""
            for key in _WINDOW_KEYS:
                value = _outcome(outcomes.get(key))
                if type(value) is str:
                    problem = f"outcomes[{key!r}] {value}"
                    break
                if value is None:
                    rendered.append(f'"{key}": null')
                else:
                    matured = True
                    rendered.append(f'"{key}": {{"change_pct": {format_number(value)}}}')  # type: ignore[arg-type]
            atr = obj.get("atr_pct")
            if not problem and atr is not None and not is_number(atr):
                problem = "'atr_pct' is not a number"
            if problem:
                report.skip(label, number, problem)
                continue
            if not matured:
                immature += 1
                continue
            key2 = (asset, day)
            try:
                asset_json, regime, price_atr = cache[key2]
            except KeyError:
                asset_json, regime, price_atr = cache[key2] = _decision_day(book, asset, day)
            if regime is None:
                line_regime = obj.get("regime")
                regime = line_regime if line_regime in REGIMES else "unknown"
            else:
                from_prices += 1
            if atr is None and price_atr is not None:
                atr = price_atr
                filled += 1
            out.write(
                f'{{"asset": {asset_json}, "atr_pct": {format_number(atr)}, "decision_date": "{day.isoformat()}", '
                f'"macro_shock": {"true" if shock else "false"}, "outcomes": {{{", ".join(rendered)}}}, '
                f'"regime": "{regime}", "verdict": "{verdict}"}}\n'
            )
            ingested += 1
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


def _decision_day(book: PriceBook, asset: str, day: date) -> tuple[str, str | None, float | None]:
    asset_json = json.dumps(asset, ensure_ascii=False)
    series = book.get(asset)
    if series is None:
        return asset_json, None, None
    t0 = series.index_on_or_before(day.toordinal())
    if t0 < 0:
        return asset_json, "unknown", None
    return asset_json, series.regimes[t0], series.atr_pct[t0]
