"""Light sleep of the verdict path: matured samples with their decision-day regime (``verdict-signals.jsonl``)."""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, replace
from datetime import date, datetime
from itertools import chain, compress
from operator import add, getitem
from pathlib import Path
from typing import Any

from dreaming.memory.files import InputReport
from dreaming.memory.verdicts._handoff import (
    ReviewedLines,
    SignalLines,
    drop,
    drop_future,
    hand_off,
    no_lines,
    take_over,
)
from dreaming.memory.verdicts._prices import REGIMES, PriceBook, PriceSeries
from dreaming.memory.verdicts._records import VERDICTS, WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import (
    AppendingLineWriter,
    AtomicLineWriter,
    bulk_objects,
    format_number,
    is_number,
    read_objects,
)
from dreaming.memory.verdicts._tallies import LightTally, Reported, file_stamp
from dreaming.memory.workspace import Workspace

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
    """Whether verdict-signals.jsonl was rewritten (or lines appended to it)."""


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
    held = take_over(source, ReviewedLines)
    carry = None if held is None else held.carry
    base = None if carry is None or carry.base is None else carry.base.light
    names = InputReport(keep=report.keep)  # price file names that are not UTF-8, reported every night
    price_rows = InputReport(keep=report.keep)  # bad rows of the price files looked up for the first time
    book = PriceBook(
        ws.prices_dir,
        names,
        label_prefix=ws.relative(ws.prices_dir) + "/",
        loads=price_rows,
        reported=base.looked_up if base else (),
    )
    lines = (
        read_reviewed_lines(source, report, label, today) if held is None else drop_future(held, today, report, label)
    )
    plan = _plan_groups(lines, book)
    signals = no_lines(SignalLines, plan.signal_groups)
    filled = from_prices = 0
    # Every line of a group is one of its eight texts (by macro_shock and the line's own regime) and the verdict: the
    # columns are turned into text with map/zip/compress over the per-group tables, span by span, because a Python
    # step per line (a loop, an f-string, four appends) is what a million lines cannot afford.
    texts, written, flags = plan.texts, plan.written, plan.flags
    # Lines that continue stored tallies are appended to the signals of the earlier nights.
    writer = AppendingLineWriter(ws.verdict_signals) if base else AtomicLineWriter(ws.verdict_signals)
    with writer as out:
        for start in range(0, len(lines.group), _SPAN_LINES):
            end = start + _SPAN_LINES
            group, verdict = lines.group[start:end], lines.verdict[start:end]
            shock, regime = lines.shock[start:end], lines.regime[start:end]
            line_flags = bytes(map(flags.__getitem__, group))
            keep = line_flags.translate(_MATURE)
            if keep.count(0):  # immature samples are left out (most spans have none: skip the copies)
                group = array("I", compress(group, keep))
                verdict, shock, regime = (bytearray(compress(col, keep)) for col in (verdict, shock, regime))
            text_index = bytes(map(add, shock.translate(_TIMES_4), regime))  # macro_shock * 4 + the line's regime
            text = "".join(
                chain.from_iterable(
                    zip(
                        map(getitem, map(texts.__getitem__, group), text_index),
                        map(_VERDICT_ENDS.__getitem__, verdict),
                        strict=True,
                    )
                )
            )
            out.write_text(text, len(group))
            signals.group.extend(map(plan.signal_index.__getitem__, group))
            signals.verdict.extend(verdict)
            signals.shock.extend(shock)
            signals.regime.extend(map(getitem, map(written.__getitem__, group), regime))
            filled += line_flags.translate(_ATR_FILLED).count(1)
            from_prices += line_flags.translate(_REGIME_FROM_PRICES).count(1)
    ingested = len(signals.group)
    first_number = base.ingested + 1 if base else 1
    signals.numbers.extend(range(first_number, first_number + ingested))
    skipped = report.count - first_count
    tonight = LightTally(
        ingested=ingested,
        immature=len(lines.group) - ingested,
        regime_from_prices=from_prices,
        atr_filled=filled,
        looked_up=tuple(book.looked_up),
        price_rows=Reported.of(price_rows),
    )
    tally = base.then(tonight, report.keep) if base else tonight
    report.merge(names)
    tally.price_rows.replay(report, today)
    if carry is not None and not skipped:  # lines skipped here would be missing from the tallies: none are stored
        signals = replace(signals, carry=replace(carry, light=tally, signals_file=file_stamp(ws.verdict_signals)))
    hand_off(ws.verdict_signals, signals)
    return LightSummary(
        ingested=tally.ingested,
        immature=tally.immature,
        skipped=skipped,
        regime_from_prices=tally.regime_from_prices,
        atr_filled=tally.atr_filled,
        changed=writer.changed,
    )


_SPAN_LINES = 16_384
"""Lines turned into text per span: enough for the C-level passes to dominate, few enough to stay a few MiB."""
_VERDICT_ENDS = tuple(f'{v}"}}\n' for v in VERDICTS)
_TIMES_4 = bytes([0, 4]) + bytes(254)
"""A ``bytes.translate`` table: macro_shock (0 or 1) -> its offset among a group's eight texts."""
_WINDOW_OF_KEY = tuple(_WINDOW_KEYS.index(f"{w}d") for w in WINDOWS)
"""For each window in ``WINDOWS`` order, its position in ``_WINDOW_KEYS`` (the order the lines write them in)."""
_OUTCOME_NULL = tuple(f'"{key}": null' for key in _WINDOW_KEYS)
_OUTCOME_OPEN = tuple(f'"{key}": {{"change_pct": ' for key in _WINDOW_KEYS)
_UNKNOWN = "unknown"
_PRICES_DECIDE = {name: bytes([r] * len(REGIMES)) for r, name in enumerate(REGIMES)}
"""The regime index written when prices decide, whatever the line's own regime."""
_LINE_DECIDES = bytes(range(len(REGIMES)))
"""The regime index written when the asset has no prices: the line's own."""
_IS_MATURE, _IS_ATR_FILLED, _IS_REGIME_FROM_PRICES = 1, 2, 4
"""The bits of a group's flags."""
_MATURE, _ATR_FILLED, _REGIME_FROM_PRICES = (bytes(int(bool(b & bit)) for b in range(256)) for bit in (1, 2, 4))
"""``bytes.translate`` tables: a group's flags -> 1 when the bit is set, else 0."""


@dataclass(frozen=True, slots=True)
class _GroupPlan:
    """Light sleep's tables per review group (indexed like ``ReviewedLines.groups``)."""

    flags: bytearray
    """Per group: ``_IS_MATURE`` when it is used by a line and has an outcome in some window (only those have any
    other flag), ``_IS_ATR_FILLED`` when its missing ``atr_pct`` came from prices, ``_IS_REGIME_FROM_PRICES``."""
    texts: list[tuple[str, ...]]
    """Per group: its line up to the verdict's opening quote, by ``macro_shock * 4 + the line's own regime index``."""
    written: list[bytes]
    """Per group: the regime index written, by the line's own regime index (the same four times when prices decide)."""
    signal_index: array[int]
    """Per group: its index in ``signal_groups`` (0 when not mature)."""
    signal_groups: list[tuple[date, str, float | None, tuple[float | None, ...]]]
    """The mature groups as REM reads them, in the order of their first line."""


def _plan_groups(lines: ReviewedLines, book: PriceBook) -> _GroupPlan:
    """Work out each review group used by a line once, in the order of its first line (the signal groups' order)."""
    n = len(lines.groups)
    groups = lines.groups
    flags = bytearray(n)
    texts: list[tuple[str, ...]] = [()] * n
    written = [b""] * n
    signal_index = array("I", bytes(4 * n))
    signal_groups: list[tuple[date, str, float | None, tuple[float | None, ...]]] = []
    on_file: dict[str, tuple[str, PriceSeries | None]] = {}
    immature = (None,) * len(_WINDOW_KEYS)
    for g in dict.fromkeys(lines.group):  # first-use order, at C speed
        day, asset, atr, changes = groups[g]
        if changes == immature:
            continue
        try:
            asset_json, series = on_file[asset]
        except KeyError:
            asset_json, series = on_file[asset] = (json.dumps(asset, ensure_ascii=False), book.get(asset))
        flag = _IS_MATURE
        outcomes = ", ".join(
            [_OUTCOME_NULL[k] if c is None else f"{_OUTCOME_OPEN[k]}{c}}}" for k, c in enumerate(changes)]
        )
        if series is None:  # no prices: the line's own regime is written
            tails = [f', "outcomes": {{{outcomes}}}, "regime": "{name}", "verdict": "' for name in REGIMES]
            written[g] = _LINE_DECIDES
        else:
            t0 = series.index_on_or_before(day.toordinal())
            regime = _UNKNOWN if t0 < 0 else series.regimes[t0]
            tails = [f', "outcomes": {{{outcomes}}}, "regime": "{regime}", "verdict": "'] * len(REGIMES)
            written[g] = _PRICES_DECIDE[regime]
            flag |= _IS_REGIME_FROM_PRICES
            if atr is None and t0 >= 0 and (price_atr := series.atr_pct[t0]) is not None:
                atr = format_number(price_atr)
                flag |= _IS_ATR_FILLED
        head = f'{{"asset": {asset_json}, "atr_pct": {atr or "null"}, "decision_date": "{day.isoformat()}", '
        calm, shock = head + '"macro_shock": false', head + '"macro_shock": true'
        if series is None:
            texts[g] = (*(calm + tail for tail in tails), *(shock + tail for tail in tails))
        else:  # one text per macro_shock, shared by the line regimes
            texts[g] = (calm + tails[0],) * len(REGIMES) + (shock + tails[0],) * len(REGIMES)
        # What REM would parse back from the line: format_number's text read as a float.
        values = tuple([None if (c := changes[k]) is None else float(c) for k in _WINDOW_OF_KEY])
        flags[g] = flag
        signal_index[g] = len(signal_groups)
        signal_groups.append((day, asset, None if atr is None else float(atr), values))
    return _GroupPlan(flags, texts, written, signal_index, signal_groups)


def read_reviewed_lines(source: Path, report: InputReport, label: str, today: date) -> ReviewedLines:
    """Parse ``verdict_review.jsonl`` (from the committee's system, or a previous process); report bad lines."""
    lines = no_lines(ReviewedLines)
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
