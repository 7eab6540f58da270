"""The review step: each committee verdict with what the market did next (``verdict_review.jsonl``)."""

from __future__ import annotations

import functools
import json
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from dreaming.memory._io import InputReport
from dreaming.memory._workspace import Workspace
from dreaming.memory.verdicts._handoff import ReviewedLines, hand_off
from dreaming.memory.verdicts._prices import REGIMES, PriceBook, PriceSeries
from dreaming.memory.verdicts._records import VERDICTS, WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import _CHUNK_LINES, AtomicLineWriter, bulk_objects, format_number, read_objects

__all__ = ["ReviewSummary", "review_verdicts"]

_COMPUTED = frozenset({"asset", "atr_pct", "base_close", "decision_date", "macro_shock", "outcomes", "verdict"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ReviewSummary:
    """What the review step did."""

    source: str
    """``verdicts`` (reviewed), ``supplied`` (verdict_review.jsonl given, step skipped) or ``none``."""
    reviewed: int = 0
    """Verdict lines written to verdict_review.jsonl."""
    unreviewable: int = 0
    """Valid verdicts with no price file or no trading date on or before the decision date."""
    skipped: int = 0
    """Bad lines skipped (each reported with its line number), including future-dated ones."""
    future: int = 0
    """Of the skipped lines, those dated after now."""
    missing_prices: tuple[str, ...] = ()
    """Assets with verdicts but no usable price file, sorted."""
    changed: bool = False
    """Whether verdict_review.jsonl was rewritten."""


_WINDOW_ORDER = tuple(sorted(WINDOWS, key=lambda w: f"{w}d"))
"""The windows in the order json.dumps(sort_keys=True) writes their keys ("30d" before "7d")."""


def _window_changes(series: PriceSeries, ordinal: int, base: float) -> tuple[str | None, ...]:
    # The rendered change of each window, in _WINDOW_ORDER.
    out: list[str | None] = []
    closes, ordinals = series.closes, series.ordinals
    for window in _WINDOW_ORDER:
        target = bisect_left(ordinals, ordinal + window)  # the first trading date >= d + window days
        out.append(None if target == len(ordinals) else format_number((closes[target] / base - 1) * 100))
    return tuple(out)


_Group = tuple[int, str, str]
"""A reviewable (asset, decision date): its index in the hand-off groups, the line's head up to ``"macro_shock": ``
and its middle from ``, "outcomes"`` up to the verdict's opening quote (the common line with no extra field)."""
_Problem = str
_SHAPE_LIMIT = 10_000
_TEMPLATE_LIMIT = 200_000


def review_verdicts(ws: Workspace, *, now: datetime, report: InputReport) -> ReviewSummary:
    """Review every verdict in ``verdicts.jsonl`` against ``prices/`` and write ``verdict_review.jsonl`` atomically.

    When ``verdicts.jsonl`` is absent but ``verdict_review.jsonl`` exists, the file was supplied by the committee's
    own system: the step is skipped and the file left untouched (light sleep fills any missing ``atr_pct`` from
    ``prices/``). Bad lines and verdicts dated after ``now`` are skipped and reported in ``report``. The lines written
    are also handed off in memory to light sleep (see ``_handoff``).
    """
    with bulk_objects():
        return _review_verdicts(ws, now=now, report=report)


def _review_verdicts(ws: Workspace, *, now: datetime, report: InputReport) -> ReviewSummary:
    if not ws.verdicts.exists():
        return ReviewSummary(source="supplied" if ws.verdict_review.exists() else "none")
    label = ws.relative(ws.verdicts)
    today = now.date()
    first_count = report.count
    price_report = InputReport()
    book = PriceBook(ws.prices_dir, price_report, label_prefix=ws.relative(ws.prices_dir) + "/")
    reviewed = unreviewable = future = 0
    missing: set[str] = set()
    # Hot-loop caches, each keyed by raw values seen on the lines (a million lines repeat a few thousand values):
    # (decision_date, asset) -> the group, None (valid but unreviewable) or why the pair is refused;
    # raw verdict -> its index in VERDICTS, or why it is refused; the tuple of a line's keys -> its extra keys, sorted.
    pairs: dict[tuple[str, str], _Group | _Problem | None] = {}
    verdict_codes: dict[str, int | _Problem] = {}
    shapes: dict[tuple[str, ...], tuple[str, ...]] = {}
    templates: dict[tuple[int, tuple[str, ...]], tuple[str, int, int]] = {}
    rendered: dict[str, str] = {}  # extra string values repeat (roles, notes): render each once
    parts: list[list[str]] = []  # per group: the rendered fixed fields, for lines with extra fields
    lines = ReviewedLines(
        groups=[], group=array("I"), verdict=bytearray(), shock=bytearray(), regime=bytearray(), numbers=array("I")
    )
    groups, group_col, verdict_col, shock_col, regime_col = (
        lines.groups,
        lines.group,
        lines.verdict,
        lines.shock,
        lines.regime,
    )
    unknown_regime = REGIMES.index("unknown")
    dumps = json.dumps
    skip = report.skip
    buffer: list[str] = []
    with AtomicLineWriter(ws.verdict_review) as out:
        for number, obj in read_objects(ws.verdicts, report, label):
            # The common case of check_verdict_line, inlined and cached per distinct raw value; anything unusual
            # (wrong types, a missing field) goes through check_verdict_line itself for the exact message.
            # Typed Any: the type() checks just below are what make them str (and bool).
            raw_date: Any = obj.get("decision_date")
            asset: Any = obj.get("asset")
            raw_verdict: Any = obj.get("verdict")
            shock: Any = obj.get("macro_shock", False)
            if (
                type(raw_date) is not str
                or type(asset) is not str
                or type(raw_verdict) is not str
                or (shock is not True and shock is not False)
            ):
                checked = check_verdict_line(obj, today)
                if isinstance(checked, str):
                    skip(label, number, checked)
                    future += "is after now" in checked
                    continue
                shock = checked[3]
            try:
                pair = pairs[raw_date, asset]
            except KeyError:
                pair = pairs[raw_date, asset] = _check_pair(raw_date, asset, today, book, missing, groups, parts)
            if isinstance(pair, str):
                skip(label, number, pair)
                future += "is after now" in pair
                continue
            try:
                code = verdict_codes[raw_verdict]
            except KeyError:
                code = verdict_codes[raw_verdict] = _verdict_code(raw_verdict)
            if isinstance(code, str):
                skip(label, number, code)
                continue
            if pair is None:
                unreviewable += 1
                continue
            index, head, mid = pair
            verdict = VERDICTS[code]
            keys = tuple(obj)
            extras = shapes.get(keys)
            if extras is None:
                extras = tuple(sorted(obj.keys() - _COMPUTED))
                if len(shapes) < _SHAPE_LIMIT:
                    shapes[keys] = extras
            if not extras:
                buffer.append(f'{head}{"true" if shock else "false"}{mid}{verdict}"}}\n')
                regime = unknown_regime
            else:
                template = templates.get((index, extras))
                if template is None:
                    template = _template(parts[index], extras)
                    if len(templates) < _TEMPLATE_LIMIT:
                        templates[index, extras] = template
                text, at_shock, at_verdict = template
                values = []
                for k in extras:
                    value = obj[k]
                    if type(value) is str:
                        value_text = rendered.get(value)
                        if value_text is None:
                            value_text = dumps(value, ensure_ascii=False)
                            if len(rendered) < 100_000:
                                rendered[value] = value_text
                    else:
                        value_text = dumps(value, ensure_ascii=False, sort_keys=True)
                    values.append(value_text)
                values.insert(at_shock, "true" if shock else "false")
                values.insert(at_verdict, verdict)
                buffer.append(text % tuple(values))
                line_regime = obj.get("regime")
                regime = REGIMES.index(line_regime) if line_regime in REGIMES else unknown_regime
            group_col.append(index)
            verdict_col.append(code)
            shock_col.append(shock)
            regime_col.append(regime)
            if len(buffer) >= _CHUNK_LINES:
                out.write_lines(buffer)
                buffer.clear()
        out.write_lines(buffer)
    reviewed = len(group_col)
    lines.numbers.extend(range(1, reviewed + 1))
    hand_off(ws.verdict_review, lines)
    skipped = report.count - first_count  # bad lines, whether refused while parsing or while checking
    report.merge(price_report)
    return ReviewSummary(
        source="verdicts",
        reviewed=reviewed,
        unreviewable=unreviewable,
        skipped=skipped,
        future=future,
        missing_prices=tuple(sorted(missing)),
        changed=out.changed,
    )


def _check_pair(
    raw_date: str,
    asset: str,
    today: date,
    book: PriceBook,
    missing: set[str],
    groups: list[tuple[date, str, str | None, tuple[str | None, ...]]],
    parts: list[list[str]],
) -> _Group | _Problem | None:
    # check_verdict_line's date and asset checks (in its order), then the pair's price lookup and rendering.
    checked = check_verdict_line({"decision_date": raw_date, "asset": asset, "verdict": VERDICTS[0]}, today)
    if isinstance(checked, str):
        return checked
    day = checked[0]
    series = book.get(asset)
    if series is None:
        missing.add(asset)
        return None
    t0 = series.index_on_or_before(day.toordinal())
    if t0 < 0:
        return None
    base = series.closes[t0]
    atr = format_number(series.atr_pct[t0])
    changes = _window_changes(series, day.toordinal(), base)
    outcomes = ", ".join(
        f'"{w}d": null' if c is None else f'"{w}d": {{"change_pct": {c}}}'
        for w, c in zip(_WINDOW_ORDER, changes, strict=True)
    )
    fields = [
        f'"asset": {json.dumps(asset, ensure_ascii=False)}',
        f'"atr_pct": {atr}',
        f'"base_close": {base!r}',
        f'"decision_date": "{day.isoformat()}"',
        f'"outcomes": {{{outcomes}}}',
    ]
    index = len(groups)
    groups.append((day, asset, None if atr == "null" else atr, changes))
    parts.append(fields)
    head = "{" + ", ".join(fields[:4]) + ', "macro_shock": '
    mid = f", {fields[4]}, " + '"verdict": "'
    return index, head, mid


def _verdict_code(raw: str) -> int | _Problem:
    checked = check_verdict_line({"decision_date": "1970-01-01", "asset": "x", "verdict": raw}, date.max)
    return checked if isinstance(checked, str) else VERDICTS.index(checked[2])


def _template(fixed: list[str], extras: tuple[str, ...]) -> tuple[str, int, int]:
    """Return a ``%``-template of a line with extra fields, and where macro_shock and verdict go among the values.

    Keys are sorted as ``json.dumps(sort_keys=True)`` sorts them; the fixed fields are literal text (``%`` doubled),
    ``macro_shock``, ``verdict`` and each extra are ``%s`` slots filled in key order.
    """
    items = [(f.split('"', 2)[1], False, f.replace("%", "%%")) for f in fixed]
    items += [("macro_shock", True, '"macro_shock": %s'), ("verdict", True, '"verdict": "%s"')]
    items += [(k, True, f"{_key(k).replace('%', '%%')}: %s") for k in extras]
    items.sort()
    slots = [k for k, is_slot, _ in items if is_slot]
    return "{" + ", ".join(text for *_, text in items) + "}\n", slots.index("macro_shock"), slots.index("verdict")


@functools.lru_cache(maxsize=4096)
def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)
